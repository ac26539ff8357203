"""Everything a readiness gate runs at ``pulumi up`` / ``destroy`` / ``refresh`` time, in one
self-contained module that the stack's state carries as *source text*, not as bytecode.

Why: Pulumi keeps a dynamic resource's provider in the state as a dill pickle
(pulumi/pulumi ``sdk/python/lib/pulumi/dynamic/dynamic.py`` ``serialize_provider``, v3.272.0)
and unpickles it in a fresh ``python -m pulumi.dynamic`` process for every later update, refresh
and delete (``dynamic/__main__.py`` ``get_provider``: ``dill.loads``) -- including ``pulumi
destroy`` and removing a gate, where the program never runs.  dill pickles a function or class
defined in ``__main__`` by value, i.e. as a CPython code object (uqfoundation/dill
``dill/_dill.py`` ``save_code`` -> ``_create_code``, dill 0.4.1), and code objects are specific
to one CPython minor: a gate pickled under 3.11 and loaded under 3.12 segfaults
(``tests/test_gate_portability.py`` reproduces it).  A by-reference pickle instead ties the state
to a project module's name and to ``sys.path``.

How: :class:`SourceCarried` reduces a provider to ``eval(<bootstrap>, {})`` (pickle protocol
``__reduce__``; ``builtins.eval`` is pickled by reference and exists in every interpreter).  The
bootstrap expression holds this module's source, compiles it in whichever interpreter loads the
state, registers it as a module and instantiates the provider class by name.  So the state holds
plain Python source that every supported minor (README: 3.11+) compiles.  The rule that makes
that work: this module imports only the standard library, ``pulumi.dynamic`` and -- lazily -- the
pinned ``kubernetes`` client and ``PyYAML``, which every process that runs the program has
(``tests/test_gate_portability.py`` enforces it).

What a gate waits for:

* a *webhook gate* (:class:`WebhookReadinessProvider`) until the validating webhooks guarding a
  kind serve: some ValidatingWebhookConfiguration has a rule for it (KAI's operator creates its
  queue webhook only after ``helm install`` returns, reference/kai-kuberay-skypilot.md §1.2) and
  a server-side dry-run create passes through every webhook without "failed calling webhook" (the
  API server calls admission webhooks on dry-run requests, Kubernetes docs "Dynamic Admission
  Control", ``sideEffects``).  A dry-run the webhook rejects on content still proves it serves.
* a *RuntimeClass gate* (:class:`RuntimeClassProvider`) until a RuntimeClass exists -- the GPU
  Operator creates ``nvidia`` from its ClusterPolicy controller (NVIDIA/gpu-operator
  ``controllers/object_controls.go`` ``RuntimeClasses`` @ v26.7.0), after Helm returned.

Both wait again on ``update`` only when what they guard was reinstalled (:func:`must_wait_again`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pulumi import dynamic

DEFAULT_POLL_SECONDS = 5.0
# The inputs whose change means "something was (re)installed": wait again on update.
REWAIT_INPUTS = ("installed", "probes")
WEBHOOK_UNREACHABLE = (
    "failed calling webhook",
    "connection refused",
    "no endpoints available",
    "context deadline",
)
# The name this source is registered under when a state's copy is loaded (never a project path).
CARRIED_MODULE = "gpu_batch_gate_runtime"
# A pickle reduces a provider to eval(BOOTSTRAP, {}): compile the carried source into a fresh
# module (registered first, so dataclasses can resolve it), then instantiate the class by name.
BOOTSTRAP = (
    "(lambda m, src: (m.__dict__.update(__gate_source__=src),"
    " __import__('sys').modules.__setitem__(m.__name__, m),"
    " exec(compile(src, m.__name__, 'exec'), m.__dict__), m)[-1])"
    "(__import__('types').ModuleType({module!r}), {source!r}).{name}()"
)


def carried_source() -> str:
    """This module's source: from the state's copy when loaded from one, else from its file."""
    carried = globals().get("__gate_source__")
    if isinstance(carried, str):
        return carried
    return Path(__file__).read_text(encoding="utf-8")


def bootstrap_expression(class_name: str) -> str:
    """The expression that rebuilds provider ``class_name`` from source in any interpreter."""
    return BOOTSTRAP.format(module=CARRIED_MODULE, source=carried_source(), name=class_name)


class SourceCarried(dynamic.ResourceProvider):
    """A dynamic provider pickled as source text plus a class name (module doc)."""

    def __reduce__(self) -> tuple[Callable[..., Any], tuple[str, dict[str, Any]]]:
        return (eval, (bootstrap_expression(type(self).__name__), {}))


def kubeconfig_document(kubeconfig: Any) -> Any:
    """The kubeconfig as a document: JSON when it looks like JSON, else YAML."""
    if isinstance(kubeconfig, str) and kubeconfig.lstrip().startswith("{"):
        return json.loads(kubeconfig)
    import yaml

    return yaml.safe_load(kubeconfig)


def must_wait_again(olds: Mapping[str, Any], news: Mapping[str, Any]) -> bool:
    """An update waits again only when what it guards was reinstalled or it probes other kinds."""
    return any(olds.get(key) != news.get(key) for key in REWAIT_INPUTS)


def poll_until_done(
    reasons_not_done: Callable[[], list[str]],
    timeout_seconds: float,
    *,
    interval_seconds: float = 5.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> list[str]:
    """Call ``reasons_not_done`` until it returns nothing (then ``[]``) or the deadline passes
    (then its last reasons)."""
    deadline = clock() + timeout_seconds
    while True:
        reasons = reasons_not_done()
        if not reasons or clock() >= deadline:
            return reasons
        sleep(interval_seconds)


@dataclass(frozen=True)
class Probe:
    """One kind to probe: ``group``/``version``/``plural`` and a minimal ``body`` to dry-run."""

    group: str
    version: str
    plural: str
    body: Mapping[str, Any]


class Cluster(Protocol):
    """What the probe needs from the API server (``KubernetesCluster`` adapts the client)."""

    def webhook_rules(self) -> list[tuple[str, str]]:
        """(apiGroup, resource) pairs of every ValidatingWebhookConfiguration rule."""
        ...

    def dry_run_create(self, probe: Probe) -> None:
        """Server-side dry-run create; raises with the API server's message on refusal."""
        ...


class NotServedError(Exception):
    """The webhooks did not serve before the deadline; the message says which kind and why."""


def served(cluster: Cluster, probe: Probe) -> str | None:
    """None when ``probe``'s kind is served; else why not (one line)."""
    rules = cluster.webhook_rules()
    if not any(g in (probe.group, "*") and r in (probe.plural, "*") for g, r in rules):
        return f"no validating webhook for {probe.plural}.{probe.group} registered yet"
    try:
        cluster.dry_run_create(probe)
    except Exception as error:  # the client raises ApiException; anything else is retried too
        text = str(error)
        if any(marker in text for marker in WEBHOOK_UNREACHABLE):
            return f"webhook for {probe.plural}.{probe.group} not serving: {text.splitlines()[0][:200]}"
    return None


def wait_until_served(
    cluster: Cluster,
    probes: Sequence[Probe],
    timeout_seconds: float,
    *,
    interval_seconds: float = 5.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Block until every probe is served; raise :class:`NotServedError` at the deadline."""
    pending = list(probes)
    reasons = poll_until_done(
        lambda: [r for r in (served(cluster, p) for p in pending) if r is not None],
        timeout_seconds,
        interval_seconds=interval_seconds,
        clock=clock,
        sleep=sleep,
    )
    if reasons:
        raise NotServedError(f"after {timeout_seconds:.0f}s: " + "; ".join(reasons))


class KubernetesCluster:
    """:class:`Cluster` over the official ``kubernetes`` client, from a kubeconfig document."""

    def __init__(self, kubeconfig: Mapping[str, Any]) -> None:
        from kubernetes import client, config

        api_client = config.new_client_from_config_dict(dict(kubeconfig))  # type: ignore[no-untyped-call]
        self._admission = client.AdmissionregistrationV1Api(api_client)
        self._custom = client.CustomObjectsApi(api_client)

    def webhook_rules(self) -> list[tuple[str, str]]:
        pairs: list[tuple[str, str]] = []
        for configuration in self._admission.list_validating_webhook_configuration().items:
            for webhook in configuration.webhooks or []:
                for rule in webhook.rules or []:
                    pairs.extend((g, r) for g in rule.api_groups or [] for r in rule.resources or [])
        return pairs

    def dry_run_create(self, probe: Probe) -> None:
        self._custom.create_cluster_custom_object(
            probe.group, probe.version, probe.plural, dict(probe.body), dry_run="All"
        )


class RuntimeClassMissingError(Exception):
    """The RuntimeClasses did not appear before the deadline; the message names them."""


def wait_for_runtime_classes(
    exists: Callable[[str], bool],
    names: Sequence[str],
    timeout_seconds: float,
    *,
    interval_seconds: float = 5.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Block until ``exists(name)`` for every name; raise :class:`RuntimeClassMissingError` at the deadline."""
    missing = poll_until_done(
        lambda: [n for n in names if not exists(n)],
        timeout_seconds,
        interval_seconds=interval_seconds,
        clock=clock,
        sleep=sleep,
    )
    if missing:
        raise RuntimeClassMissingError(
            f"after {timeout_seconds:.0f}s RuntimeClass {', '.join(missing)} does not exist; "
            "check the GPU Operator's ClusterPolicy status (kubectl get clusterpolicy)"
        )


def runtime_class_exists(kubeconfig: Mapping[str, Any]) -> Callable[[str], bool]:
    """``exists(name)`` over the official ``kubernetes`` client."""
    from kubernetes import client, config
    from kubernetes.client.exceptions import ApiException

    api = client.NodeV1Api(config.new_client_from_config_dict(dict(kubeconfig)))  # type: ignore[no-untyped-call]

    def exists(name: str) -> bool:
        try:
            api.read_runtime_class(name)
        except ApiException as error:
            if error.status == 404:
                return False
            raise
        return True

    return exists


class WebhookReadinessProvider(SourceCarried):
    """Waits until every probe's kind is guarded by a webhook that answers."""

    def _wait(self, props: Mapping[str, Any]) -> None:
        probes = [Probe(**p) for p in props["probes"]]
        wait_until_served(
            KubernetesCluster(kubeconfig_document(props["kubeconfig"])),
            probes,
            float(props["timeoutSeconds"]),
            interval_seconds=float(props.get("pollSeconds", DEFAULT_POLL_SECONDS)),
        )

    def create(self, props: dict[str, Any]) -> dynamic.CreateResult:
        self._wait(props)
        return dynamic.CreateResult(id_="-".join(p["plural"] for p in props["probes"]), outs=props)

    def update(self, _id: str, _olds: dict[str, Any], _news: dict[str, Any]) -> dynamic.UpdateResult:
        if must_wait_again(_olds, _news):
            self._wait(_news)
        return dynamic.UpdateResult(outs=_news)


class RuntimeClassProvider(SourceCarried):
    """Waits until every named RuntimeClass exists."""

    def _wait(self, props: Mapping[str, Any]) -> None:
        exists = runtime_class_exists(kubeconfig_document(props["kubeconfig"]))
        wait_for_runtime_classes(
            exists,
            [str(n) for n in props["names"]],
            float(props["timeoutSeconds"]),
            interval_seconds=float(props.get("pollSeconds", DEFAULT_POLL_SECONDS)),
        )

    def create(self, props: dict[str, Any]) -> dynamic.CreateResult:
        self._wait(props)
        return dynamic.CreateResult(id_="-".join(str(n) for n in props["names"]), outs=props)

    def update(self, _id: str, _olds: dict[str, Any], _news: dict[str, Any]) -> dynamic.UpdateResult:
        if must_wait_again(_olds, _news) or _olds.get("names") != _news.get("names"):
            self._wait(_news)
        return dynamic.UpdateResult(outs=_news)
