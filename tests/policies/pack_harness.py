"""Direct calls into the pack's policies, as the analyzer servicer makes them (pulumi.md §2.6 a).

Props are wrapped in ``unknown_checking_proxy`` so tests see the SDK's real proxy semantics
(reading an unknown raises).  A rule's "cannot check yet" is the ``UnknownValueError`` subclass it
raises after reporting; :class:`Run` records both.
"""

from __future__ import annotations

import copy
import functools
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from gpu_batch_policy.rules.kit.report import CannotCheckYetError
from gpu_batch_policy.runtime.registry import ALL_POLICIES
from pulumi.runtime.proto import analyzer_pb2
from pulumi_policy import (
    Policy,
    PolicyCustomTimeouts,
    PolicyProviderResource,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError, unknown_checking_proxy

UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # the engine's string unknown sentinel
UNKNOWN_NUMBER = "3eeb2bf0-c639-47a8-9e75-3b44932eb421"
SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"


def secret(value: Any) -> dict[str, Any]:
    return {SECRET_SIG_KEY: SECRET_SIG, "value": value}


@dataclass
class Res:
    """One resource registration for a test: wire type token, Pulumi name, props."""

    type: str
    name: str
    props: dict[str, Any]
    urn: str = ""
    property_dependencies: dict[str, list[str]] = field(default_factory=dict)
    # The URN of the Kubernetes provider the resource is registered with ("": the default one).
    provider: str = ""

    def __post_init__(self) -> None:
        if not self.urn:
            self.urn = f"urn:pulumi:test::gpu-batch::{self.type}::{self.name}"


@dataclass
class Run:
    violations: list[tuple[str, str | None]]
    cannot_check: str | None = None

    @property
    def messages(self) -> list[str]:
        return [m for m, _ in self.violations]

    @property
    def clean(self) -> bool:
        return not self.violations

    def text(self) -> str:
        return "\n".join(self.messages)


def policy(name: str) -> Policy:
    for p in ALL_POLICIES:
        if p.name == name:
            return p
    raise KeyError(name)


def _opts() -> PolicyResourceOptions:
    return PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], parent=None)


def _provider(urn: str) -> PolicyProviderResource | None:
    if not urn:
        return None
    return PolicyProviderResource("pulumi:providers:kubernetes", {}, urn, urn.rsplit("::", 1)[-1])


def policy_resources(resources: list[Res]) -> list[PolicyResource]:
    """The registrations as the engine hands them to a stack policy (provider, property deps)."""
    by_urn: dict[str, PolicyResource] = {}
    items = []
    for r in resources:
        pr = PolicyResource(
            r.type,
            unknown_checking_proxy(copy.deepcopy(r.props)),
            r.urn,
            r.name,
            _opts(),
            _provider(r.provider),
            None,
            [],
            {},
        )
        by_urn[r.urn] = pr
        items.append((pr, r))
    for pr, r in items:
        pr.property_dependencies = {
            k: [by_urn[u] for u in v if u in by_urn] for k, v in r.property_dependencies.items()
        }
    return [pr for pr, _ in items]


@contextmanager
def _stack_of(resources: list[Res]) -> Iterator[None]:
    """Run under the stack the resources' URNs name (``urn:pulumi:<stack>::...``), as the engine does.

    Rules that read the stack's name (``kueue-open-namespace-selector``: strict tenancy on prod*)
    take it from ``$PULUMI_STACK``, else from the Pulumi runtime, which is whatever stack the
    worker's last ``set_mocks`` named: a test then judged its fixture as another test's stack.
    A test that sets ``$PULUMI_STACK`` itself (monkeypatch) keeps it.
    """
    if os.environ.get("PULUMI_STACK") or not resources or not resources[0].urn.startswith("urn:pulumi:"):
        yield
        return
    os.environ["PULUMI_STACK"] = resources[0].urn.split(":", 3)[2].split("::", 1)[0]
    try:
        yield
    finally:
        os.environ.pop("PULUMI_STACK", None)


def run(pol: Policy, resources: list[Res], config: dict[str, Any] | None = None) -> Run:
    """Run ``pol`` on ``resources``: each one for a resource policy, all at once for a stack one.

    Any exception other than the rule's own "cannot check yet" propagates (a crash is a bug).
    """
    with _stack_of(resources):
        return _run(pol, resources, config)


def _run(pol: Policy, resources: list[Res], config: dict[str, Any] | None) -> Run:
    found: list[tuple[str, str | None]] = []

    def report(message: str, urn: str | None = None) -> None:
        found.append((message, urn))

    cannot: list[str] = []
    if isinstance(pol, StackValidationPolicy):
        try:
            pol.validate(StackValidationArgs(policy_resources(resources), config), report)
        except CannotCheckYetError as exc:
            cannot.append(exc.message)
    else:
        assert isinstance(pol, ResourceValidationPolicy)
        for r in resources:
            args = ResourceValidationArgs(
                r.type, unknown_checking_proxy(copy.deepcopy(r.props)), r.urn, r.name, _opts(), None, config
            )
            try:
                pol.validate(args, report)
            except CannotCheckYetError as exc:
                cannot.append(exc.message)
    return Run(found, "; ".join(cannot) if cannot else None)


def _reporter(found: list[tuple[str, str | None]], call: analyzer_pb2.AnalyzeResponse) -> Callable[..., None]:
    """A ``report_violation`` for one policy in ``call``: like the SDK's, a closure over the call's
    response, which is how the pack's call cache knows two policies share a call
    (``gpu_batch_policy/rules/kit/builders.py`` ``analyzer_call``)."""

    def report(message: str, urn: str | None = None) -> None:
        found.append((message, urn))
        call.diagnostics.add(message=message, urn=urn or "")

    return report


def run_together(
    pols: Sequence[Policy], resources: list[Res], config: dict[str, Any] | None = None
) -> dict[str, Run]:
    """``pols`` on ``resources`` as the pack judges them in one analyzer call: one ``AnalyzeStack``
    for the stack policies, one ``Analyze`` per resource for the resource policies.

    As in the pack's patched SDK (``gpu_batch_policy/runtime/sdk_speedups.py``:
    ``_analyze_stack_building_resources_once``, and ``Analyze``'s conversions memoised per call),
    the call's resources are built once and every policy gets its own list of the same objects;
    each policy's ``report_violation`` closes over the call's response, so the rules' stack model
    (or resource view) is built once per call and shared (``rules/kit/builders.py``
    ``_CallCache``).  :func:`run` instead gives one policy a call of its own.  The answer per
    policy is :func:`run`'s: its violations in order and its "cannot check yet"; an
    ``UnknownValueError`` that is not the rule's own is an assertion naming the rule.
    """
    found: dict[str, list[tuple[str, str | None]]] = {p.name: [] for p in pols}
    cannot: dict[str, list[str]] = {p.name: [] for p in pols}

    def judge(pol: Policy, validate: Callable[[], object]) -> None:
        try:
            validate()
        except CannotCheckYetError as exc:
            cannot[pol.name].append(exc.message)
        except UnknownValueError as exc:  # not our subclass: the rule read an unknown unguarded
            raise AssertionError(f"{pol.name} leaked UnknownValueError: {exc.message}") from exc

    stack_pols = [p for p in pols if isinstance(p, StackValidationPolicy)]
    resource_pols = [p for p in pols if isinstance(p, ResourceValidationPolicy)]
    assert len(stack_pols) + len(resource_pols) == len(pols), "neither a stack nor a resource policy"
    with _stack_of(resources):
        if stack_pols:
            call = analyzer_pb2.AnalyzeResponse()
            built = policy_resources(resources)
            for stack_pol in stack_pols:
                args = StackValidationArgs(list(built), config)
                report = _reporter(found[stack_pol.name], call)
                judge(stack_pol, functools.partial(stack_pol.validate, args, report))
        for r in resources if resource_pols else ():
            call = analyzer_pb2.AnalyzeResponse()
            props = unknown_checking_proxy(copy.deepcopy(r.props))
            for resource_pol in resource_pols:
                resource_args = ResourceValidationArgs(r.type, props, r.urn, r.name, _opts(), None, config)
                report = _reporter(found[resource_pol.name], call)
                judge(resource_pol, functools.partial(resource_pol.validate, resource_args, report))
    return {p.name: Run(found[p.name], "; ".join(cannot[p.name]) if cannot[p.name] else None) for p in pols}


def run_all(resources: list[Res], names: list[str] | None = None) -> dict[str, Run]:
    """Every pack policy (or the named ones) on ``resources``; a raw UnknownValueError is a bug."""
    results: dict[str, Run] = {}
    for pol in ALL_POLICIES:
        if names is not None and pol.name not in names:
            continue
        try:
            results[pol.name] = run(pol, resources)
        except UnknownValueError as exc:  # not our subclass: the rule read an unknown unguarded
            raise AssertionError(f"{pol.name} leaked UnknownValueError: {exc.message}") from exc
    return results
