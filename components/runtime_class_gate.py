"""A resource that completes only when a RuntimeClass exists on the cluster.

Why: the NVIDIA GPU Operator creates RuntimeClass ``nvidia`` at run time, from its ClusterPolicy
controller's *pre-requisites* state (NVIDIA/gpu-operator ``controllers/object_controls.go``
``RuntimeClasses`` -> ``transformRuntimeClass`` @ v26.7.0), some time after ``helm install``
returned -- it is not a Helm object.  KAI's admission webhook sets ``runtimeClassName: nvidia``
on GPU-fraction pods, and the API server's RuntimeClass admission refuses a pod whose class does
not exist yet ("pod rejected: RuntimeClass "nvidia" not found",
reference/gpu-sharing-on-gke.md §2).  So the KAI workloads depend on this gate, not on the release.

How: like :mod:`components.readiness_gate` (which says why no pulumi-kubernetes mechanism fits), a
Pulumi dynamic provider carried in the state as source (:mod:`components.gates.runtime`), whose ``create``
-- and ``update``, when the operator release's fingerprint changed -- polls
``GET /apis/node.k8s.io/v1/runtimeclasses/<name>`` with the stack's kubeconfig; nothing runs
during ``pulumi preview``, and under the offline preview's mocks the registration is recorded so
the order (operator release -> gate -> KAI workloads) shows in plan.json.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
from pulumi import dynamic

from components.gates.runtime import DEFAULT_POLL_SECONDS, RuntimeClassProvider
from components.readiness_gate import DEFAULT_TIMEOUT_SECONDS


class RuntimeClassReadiness(dynamic.Resource):
    """Completes when every named RuntimeClass exists (see module doc)."""

    def __init__(
        self,
        name: str,
        kubeconfig: pulumi.Input[str],
        runtime_classes: Sequence[str],
        *,
        installed: pulumi.Input[str] = "",
        timeout_seconds: int = DEFAULT_TIMEOUT_SECONDS,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(
            RuntimeClassProvider(),
            name,
            {
                "kubeconfig": pulumi.Output.secret(kubeconfig),
                "names": list(runtime_classes),
                "installed": installed,
                "timeoutSeconds": timeout_seconds,
                "pollSeconds": DEFAULT_POLL_SECONDS,
            },
            pulumi.ResourceOptions.merge(
                pulumi.ResourceOptions(additional_secret_outputs=["kubeconfig"]), opts
            ),
        )
