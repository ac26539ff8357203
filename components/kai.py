"""NVIDIA KAI Scheduler, installed from its OCI Helm chart.

Public API: :class:`KaiSchedulerArgs`, :class:`KaiSchedulerInstall` (``release`` is what KAI
Queue objects and a KAI-wired KubeRay operator depend on); :data:`KAI_SCHEDULER_NAME` is the
``schedulerName`` pods must carry, :data:`KAI_QUEUE_LABEL` the queue label.

Chart facts (kai-scheduler/KAI-Scheduler v0.17.0, reference/kai-kuberay-skypilot.md §1.2): published
at ``oci://ghcr.io/kai-scheduler/kai-scheduler/kai-scheduler`` with the git tag as version, *with*
``v`` (``v0.17.0``); it moved there from ``oci://ghcr.io/nvidia/kai-scheduler/kai-scheduler``,
which hosts v0.13.0 and older (KAI #1153).  Install namespace ``kai-scheduler`` (workloads must
not run there).  The ``kai-config`` Config is no longer a plain template: a post-install hook Job
(``templates/hooks/post/kai-config-deployer``) applies it from the ``kai-config-manifest``
ConfigMap, and kai-operator then creates the admission and queue webhooks.

Values this component sets, and why:

- ``global.gpuSharing``: fractional GPUs (``gpu-fraction`` annotations) are refused by KAI's
  admission webhook unless it is on.
- ``global.clusterAutoscaling``: fractional requests live in annotations the cluster autoscaler
  cannot see; this starts KAI's node-scale-adjuster, which launches whole-GPU placeholder pods so
  an autoscaled GPU pool grows for them (KAI docs/gpu-sharing/autoscaling).
- ``global.nodeSelector`` *and* ``global.affinity`` to the system pool: the chart applies
  ``nodeSelector`` only to the ``kai-operator`` Deployment; the scheduler, binder, podgrouper,
  admission and queue controllers are created by that operator from the ``kai-config`` Config,
  which carries ``global.affinity`` (templates ``services/operator.yaml``, ``kai-config.yaml``).
- ``admission.gpuFractionRuntimeClassName: nvidia`` (the chart default, written explicitly):
  KAI's admission webhook sets it on every GPU-fraction pod (``runtime_enforcement.go`` @v0.17.0)
  and hands the pod its GPU through ``NVIDIA_VISIBLE_DEVICES``, which only NVIDIA's runtime reads.
  The NVIDIA GPU Operator (``components.gpu_operator``) creates that RuntimeClass; fraction pods
  wait for it (``components.runtime_class_gate``).  ``""`` would admit them without any GPU.
- ``binder.cdiEnabled`` (when ``cdi_enabled`` is set, i.e. with the GPU Operator, whose CDI is
  on): the binder then writes the qualified ``k8s.device-plugin.nvidia.com/gpu=<UUID>`` the CDI
  runtime resolves.  Left unset, kai-operator guesses from the first ClusterPolicy when it
  reconciles the binder (``pkg/operator/operands/binder/resources.go`` @v0.17.0), which may run
  before the operator's ClusterPolicy exists (reference/gpu-sharing-on-gke.md §2).
- ``defaultQueue.createDefaultQueue``: the chart's default queues (``default-parent-queue`` /
  ``default-queue``, ``limit: -1``) are created only on first install and annotated
  ``helm.sh/resource-policy: keep`` -- invisible to Pulumi, surviving uninstall, and a place where
  any pod without a queue label runs with no quota.  Stacks that declare their queues as code
  leave it off; pods without ``kai.scheduler/queue`` then stay pending (with a PodGroup condition
  since v0.13.0) instead of escaping quota.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

import pulumi
import pulumi_kubernetes as k8s

from components.chart_lock import locked
from components.gke import SYSTEM_POOL_SELECTOR, SYSTEM_POOL_TOLERATIONS
from components.operator_release import ChartRef, depends_on_of, operator_namespace, operator_release

KAI_CHART: Final = locked("kai-scheduler").source
# KAI#1968 (v0.16.2 up to v0.17.1): stalegangeviction evicts a gang's running pods one staleness
# grace period after its first pod succeeds.  v0.17.0's mitigation is the scheduler flag
# ``default-staleness-grace-period`` (cmd/scheduler/app/options/options.go, default 60s), which the
# chart passes through the default SchedulingShard's ``spec.args`` (values ``scheduler.args``,
# templates/default-shard.yaml; pkg/apis/kai/v1/schedulingshard_types.go Args: "custom CLI
# arguments for the scheduler").  10 minutes covers the skew between a gang's pods finishing, and a
# gang that really lost pods is still evicted, 10 minutes later
# (policies/gpu_batch_policy/facts/known_bugs/kai.json).
STALE_GANG_GRACE: Final = "10m"
KAI_VERSION: Final = locked("kai-scheduler").version
KAI_NAMESPACE: Final = "kai-scheduler"
KAI_SCHEDULER_NAME: Final = "kai-scheduler"
KAI_QUEUE_LABEL: Final = "kai.scheduler/queue"
# The admission webhook's target port (v0.17.0 values.yaml admission.ports.webhookPort, rendered
# into the kai-config Config as admission.webhook.targetPort) and the queue controller's webhook
# (controller-runtime's default 9443, behind the same 443 Service port).
KAI_WEBHOOK_PORT: Final = 9443
# values.yaml admission.gpuFractionRuntimeClassName @ v0.17.0 (the chart default).
KAI_FRACTION_RUNTIME_CLASS: Final = "nvidia"


# How long Helm may wait for the release (see components.operator_release.operator_release):
# the operator and its hooks (config, default queues) run before the scheduler, binder and admission Deployments it creates are ready.
KAI_RELEASE_TIMEOUT_SECONDS = 600


@dataclass(frozen=True)
class KaiSchedulerArgs:
    """Inputs of :class:`KaiSchedulerInstall`; defaults are the chart's except the default queue."""

    gpu_sharing: bool = False
    cluster_autoscaling: bool = False
    create_default_queue: bool = False
    version: str = KAI_VERSION
    # True with the NVIDIA GPU Operator (CDI on); None leaves KAI's auto-detection.
    cdi_enabled: bool | None = None
    node_selector: Mapping[str, str] = field(default_factory=lambda: MappingProxyType(SYSTEM_POOL_SELECTOR))


def node_affinity(selector: Mapping[str, str]) -> dict[str, Any]:
    """A required node affinity equivalent to ``nodeSelector: selector``."""
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": key, "operator": "In", "values": [value]}
                            for key, value in sorted(selector.items())
                        ]
                    }
                ]
            }
        }
    }


class KaiSchedulerInstall(pulumi.ComponentResource):
    """Namespace ``kai-scheduler`` and the ``kai-scheduler`` Helm release."""

    namespace: k8s.core.v1.Namespace
    release: k8s.helm.v3.Release

    def __init__(self, name: str, args: KaiSchedulerArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-batch:kai:Install", name, None, opts)
        self.namespace = operator_namespace(f"{name}-namespace", KAI_NAMESPACE, parent=self)
        self.release = operator_release(
            f"{name}-release",
            release_name="kai-scheduler",
            chart=ChartRef(KAI_CHART, args.version),
            namespace=self.namespace,
            values={
                "global": {
                    "gpuSharing": args.gpu_sharing,
                    "clusterAutoscaling": args.cluster_autoscaling,
                    "nodeSelector": dict(args.node_selector),
                    "affinity": node_affinity(args.node_selector),
                    # ``global.tolerations`` reaches kai-operator (templates/services/operator.yaml),
                    # the hook Jobs and, through the kai-config Config, every operand
                    # (templates/_helpers.tpl): the system pool's taint.
                    "tolerations": [dict(t) for t in SYSTEM_POOL_TOLERATIONS],
                },
                "defaultQueue": {"createDefaultQueue": args.create_default_queue},
                "scheduler": {"args": {"default-staleness-grace-period": STALE_GANG_GRACE}},
                # The GPU Operator's RuntimeClass (see the module docstring).
                "admission": {"gpuFractionRuntimeClassName": KAI_FRACTION_RUNTIME_CLASS},
                **({"binder": {"cdiEnabled": args.cdi_enabled}} if args.cdi_enabled is not None else {}),
            },
            parent=self,
            depends_on=depends_on_of(opts),
            timeout_seconds=KAI_RELEASE_TIMEOUT_SECONDS,
        )
        self.register_outputs({"namespace": self.namespace.metadata.name, "release": self.release.name})
