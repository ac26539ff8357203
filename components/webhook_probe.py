"""Wait until the admission webhooks that guard a kind of object really serve.

Used by :mod:`components.readiness_gate` at ``pulumi up`` time (never during preview).  A kind
is *served* when (1) some ValidatingWebhookConfiguration has a rule for its group/resource --
KAI's operator creates its queue webhook (failurePolicy Fail) only after ``helm install``
returns (reference/kai-kuberay-skypilot.md §1.2 "The queue webhook is created by kai-operator
after Helm returns"), so "no webhook yet" is not "ready" -- and (2) a server-side dry-run create
of a probe object passes through every webhook without "failed calling webhook" (the API server
calls admission webhooks on dry-run requests, Kubernetes docs "Dynamic Admission Control",
``sideEffects``).  A dry-run that the webhook *rejects on content* still proves it serves.

Everything the gate's provider runs is marked :func:`~components.portable_provider.pickled_by_value`,
so the pickle in the stack's state does not depend on this module's name or location.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from components.portable_provider import pickled_by_value

WEBHOOK_UNREACHABLE = (
    "failed calling webhook",
    "connection refused",
    "no endpoints available",
    "context deadline",
)


@pickled_by_value
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


@pickled_by_value
class NotServedError(Exception):
    """The webhooks did not serve before the deadline; the message says which kind and why."""


@pickled_by_value
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


@pickled_by_value
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


@pickled_by_value
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


@pickled_by_value
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
