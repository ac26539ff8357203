"""What every port of a project's own admission webhook shares (issue 42, item 1).

A port reads an object the way the project's Go webhook reads it after its defaulter ran, and
returns the webhook's refusals as ``(problem, fix)`` pairs.  Reads go through :func:`known`, so a
value unknown until apply raises :class:`CannotTellError` and the object is "cannot check yet"
(advisory), never a silent pass.  :func:`judge_kinds` runs one port over every object of its kinds
and words each refusal with the project, the version judged and why that version (the one the
stack installs, else the one Kueue v0.19.2's ``go.mod`` pins).

Each port module also carries ``COVERAGE``: every function of the upstream webhook file(s) at that
version, mapped to the Python function that ports it or to the written reason it is not ported
(``CANNOT``: needs cluster state or an earlier version of the object; ``NOT_A_CHECK``: registration,
defaulting or plumbing).  ``tests/policies/rules/webhooks/test_webhook_coverage.py`` parses the
Go files from the fetched mirror and fails on a function with neither.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_policy import Policy

from ...facts.demand import CannotTellError
from ...facts.model import StackModel
from ...facts.model.base import KubeObject
from ...primitives.k8s_names import dns1123_subdomain_error, has_placeholder
from ...primitives.values import Unknown, as_int, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter

Problem = tuple[str, str]  # (what the webhook refuses, how to fix it)


@dataclass(frozen=True)
class Unsure:
    """A part of the check that needs ``what``, unknown before apply: "cannot check yet" for it
    alone, while the rest of the object is still judged (a judge lists it among its problems)."""

    what: str


Finding = Problem | Unsure
MAX_INT32 = 2147483647

CANNOT = "cannot check: "
NOT_A_CHECK = "not a check: "
UPDATE_ONLY = CANNOT + "judges an update against the stored object; a preview sees only the desired object"
ACCEPTS_DELETE = NOT_A_CHECK + "accepts every delete"
REGISTERS = NOT_A_CHECK + "registers the webhook with the manager"
CONSTRUCTS = NOT_A_CHECK + "constructs the validator"


@dataclass(frozen=True)
class Upstream:
    """Where a port comes from: ``repo`` at ``ref`` (a tag, or a commit when the tag is absent)."""

    project: str  # as users name it: "JobSet"
    repo: str  # owner/name
    ref: str  # tag or commit the mirror holds
    version: str  # the release judged
    why: str  # why this version: "installed by the stack" / "pinned by Kueue v0.19.2's go.mod"
    files: tuple[str, ...]  # the webhook/validation files COVERAGE lists

    def refuses(self, where: str) -> str:
        return f"{self.project} {self.version}'s validation ({where}; {self.why}) refuses it"


def known(value: Any, what: str) -> Any:
    """``value``, or CannotTellError when it is unknown until apply."""
    if isinstance(value, Unknown):
        raise CannotTellError(what)
    return value


def get(root: Any, *keys: str | int) -> Any:
    """``dig`` that refuses to guess: unknown anywhere on the way is CannotTellError."""
    return known(dig(root, *keys), ".".join(str(k) for k in keys))


def items(root: Any, *keys: str | int) -> list[Any]:
    """A known list at ``keys`` (absent or not a list: empty)."""
    value = get(root, *keys)
    return value if isinstance(value, list) else []


def mapping(root: Any, *keys: str | int) -> dict[str, Any]:
    """A known mapping at ``keys`` (absent or not a mapping: empty)."""
    value = get(root, *keys)
    return value if isinstance(value, dict) else {}


def text(root: Any, *keys: str | int) -> str | None:
    value = get(root, *keys)
    return value if isinstance(value, str) else None


def number(root: Any, *keys: str | int, default: int | None = None) -> int | None:
    """An integer field (floats over the wire are whole numbers); ``default`` when absent."""
    value = as_int(get(root, *keys))
    return default if value is None or isinstance(value, Unknown) else value


def pod_containers(pod_spec: Any, *, init: bool = True) -> list[Any]:
    """``initContainers`` (when ``init``) then ``containers`` of a known pod spec."""
    found = items(pod_spec, "initContainers") if init else []
    return found + items(pod_spec, "containers")


def name_of(obj: KubeObject) -> str | None:
    """The object's name; None when it is not known before apply (Pulumi generates it, or it holds
    an unsubstituted ``${NAME}`` template placeholder, as published templates do)."""
    if not obj.identity_known or obj.auto_named or has_placeholder(obj.name):
        return None
    return obj.name


HTTP_PATH_CHARS = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/-._~%!$&'()*+,;=:"
)


def domain_prefixed_path_error(value: str) -> str | None:
    """apimachinery ``pkg/util/validation/validation.go`` ``IsDomainPrefixedPath``: ``host/path``,
    host a DNS-1123 subdomain, path one or more of ``httpPathFmt``'s characters."""
    if not value:
        return "is required"
    host, slash, path = value.partition("/")
    if not slash or not host or not path:
        return 'must be a domain-prefixed path (such as "acme.io/foo")'
    error = dns1123_subdomain_error(host)
    if error is not None:
        return f"has host '{host}', which {error}"
    if not set(path) <= HTTP_PATH_CHARS:
        return "must be a valid HTTP path after the host"
    return None


def percent_error(value: str) -> str | None:
    """apimachinery ``IsValidPercent``: ``^[0-9]+%$``."""
    digits = value[:-1]
    if value.endswith("%") and digits.isascii() and digits.isdigit():
        return None
    return "must be a valid percent string (for example, 10%)"


def judge_kinds(
    model: StackModel,
    reporter: Reporter,
    *,
    group: str,
    kinds: Iterable[str],
    judge: Callable[[KubeObject], list[Finding]],
    upstream: Upstream,
    where: str,
) -> None:
    """Run ``judge`` on every object of ``group``/``kinds``; each refusal is one violation."""
    for kind in kinds:
        for obj in model.kube_objects(group, kind):
            try:
                problems = judge(obj)
            except CannotTellError as why:
                reporter.cannot_check(obj, f"{upstream.project} validation needs {why.what}")
                continue
            for found in problems:
                if isinstance(found, Unsure):
                    reporter.cannot_check(obj, f"{upstream.project} validation needs {found.what}")
                else:
                    reporter.violation(obj, f"{upstream.refuses(where)}: {found[0]}", found[1])


@dataclass(frozen=True)
class Judged:
    """One judge of a port: the kinds it reads and where upstream its checks live."""

    kinds: tuple[str, ...]
    judge: Callable[..., list[Finding]]  # (object), or (model, object) with ``needs_model``
    where: str
    needs_model: bool = False


def port_policy(name: str, description: str, upstream: Upstream, group: str, *judged: Judged) -> Policy:
    """The stack policy of a port: each judge over the objects of its kinds."""

    def check(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
        for one in judged:
            judge = functools.partial(one.judge, model) if one.needs_model else one.judge
            judge_kinds(
                model, reporter, group=group, kinds=one.kinds, judge=judge, upstream=upstream, where=one.where
            )

    return stack_policy(name, description, check)
