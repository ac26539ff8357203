"""Readiness gates between the operator releases and the queue objects they validate.

One gate per scheduler whose queue objects the stack declares: Kueue (probe: a ClusterQueue,
``kueue.x-k8s.io/v1beta2``) and KAI (probe: a Queue, ``scheduling.run.ai/v2``).  Each gate depends
on its release and re-probes whenever the release is upgraded (its fingerprint is an input);
the queue components depend on the gate (see :mod:`components.readiness_gate`).
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from components.gates.runtime import Probe
from components.readiness_gate import WebhookReadiness, release_fingerprint
from stacks.compose.schedulers import Schedulers

PROBE_NAME = "gpu-batch-readiness-probe"
KUEUE_PROBE = Probe(
    group="kueue.x-k8s.io",
    version="v1beta2",
    plural="clusterqueues",
    body={
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": PROBE_NAME},
        "spec": {},
    },
)
KAI_PROBE = Probe(
    group="scheduling.run.ai",
    version="v2",
    plural="queues",
    body={
        "apiVersion": "scheduling.run.ai/v2",
        "kind": "Queue",
        "metadata": {"name": PROBE_NAME},
        "spec": {},
    },
)


@dataclass(frozen=True)
class ReadinessGates:
    kueue: WebhookReadiness | None
    kai: WebhookReadiness | None


def _gate(
    name: str, kubeconfig: pulumi.Input[str], probe: Probe, release: pulumi.Resource
) -> WebhookReadiness:
    return WebhookReadiness(
        name,
        kubeconfig,
        [probe],
        installed=release_fingerprint(release),
        opts=pulumi.ResourceOptions(depends_on=[release]),
    )


def readiness_gates(
    kubeconfig: pulumi.Input[str],
    schedulers: Schedulers,
    *,
    kueue_objects: bool,
    kai_objects: bool,
    prefix: str = "",
) -> ReadinessGates:
    """A gate for each installed scheduler whose queue objects the stack declares (``prefix``
    starts their Pulumi names)."""
    kueue, kai = schedulers.kueue, schedulers.kai
    return ReadinessGates(
        kueue=_gate(f"{prefix}kueue-webhooks-ready", kubeconfig, KUEUE_PROBE, kueue.release)
        if kueue is not None and kueue_objects
        else None,
        kai=_gate(f"{prefix}kai-webhooks-ready", kubeconfig, KAI_PROBE, kai.release)
        if kai is not None and kai_objects
        else None,
    )
