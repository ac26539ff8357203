"""The NVIDIA GPU Operator on GKE Standard, for GPU pools whose GPUs KAI shares (``gpu-fraction``).

Why it exists: KAI hands a fraction of a GPU to a pod only through ``NVIDIA_VISIBLE_DEVICES``
under NVIDIA's container runtime (RuntimeClass ``nvidia``); GKE's managed driver and device
plugin give devices only to containers that request ``nvidia.com/gpu`` and configure no such
runtime (reference/gpu-sharing-on-gke.md §2, §4).  KAI's README lists the GPU Operator as a
prerequisite (kai-scheduler/KAI-Scheduler ``README.md`` "Prerequisites" @ v0.17.0).

What it declares, in the order ``pulumi up`` needs:

1. Namespace ``gpu-operator``.
2. A ResourceQuota scoped to the ``system-node-critical`` / ``system-cluster-critical`` priority
   classes.  Every operand and the operator itself run at ``system-node-critical`` (chart
   values.yaml ``daemonsets.priorityClassName``, ``operator.priorityClassName``,
   ``node-feature-discovery.priorityClassName`` @ v26.7.0), and GKE admits pods of those classes
   outside ``kube-system`` only when the namespace has a quota scoped to them -- otherwise
   "insufficient quota to match these scopes" (NVIDIA/cloud-native-docs
   ``gpu-operator/google-gke.rst`` "Create a file, such as gpu-operator-quota.yaml" and
   ``manifests/input/google-gke-gpu-operator-quota.yaml``; the API server's ResourceQuota
   admission with ``scopeSelector`` ``PriorityClass`` In [...]).  Declared before the release so
   the operator's first pod is admitted.
3. The ``gpu-operator`` Helm release (chart pinned in ``charts.lock.yaml``) with the GKE values:

   - **Driver route: NVIDIA's Driver Manager** (``driver.enabled: true``, chart default
     ``hostPaths.driverInstallDir: /run/nvidia/driver`` written explicitly) on
     ``UBUNTU_CONTAINERD`` nodes (``components.gpu_pool`` sets the image for GPU Operator pools).
     Why not Google's installer on COS: that route needs Google's driver-installer DaemonSet,
     which NVIDIA's page applies from container-engine-accelerators' *master* branch
     (``google-gke.rst`` "Install the Google driver installer daemon set") -- an unpinned
     manifest outside every chart this project pins and mirrors, so neither the preview nor
     the pack could render or check it.  NVIDIA's Driver Manager comes with the pinned chart
     (driver 595.91.07, release-notes v26.7.0), and NVIDIA's validated GKE matrix lists exactly
     Ubuntu 22.04/24.04/26.04 on Kubernetes 1.33-1.36 (``platform-support.rst`` "Cloud Service
     Providers"); NVIDIA documents this route for GKE in ``google-gke.rst`` "Using NVIDIA Driver
     Manager" (``--image-type UBUNTU_CONTAINERD``, node label, quota, then a default install).
   - ``toolkit.installDir: /usr/local/nvidia`` (the chart default that route uses, explicit).
   - ``toolkit.env RUNTIME_CONFIG_SOURCE=file``: on GKE 1.33+ the toolkit otherwise misconfigures
     containerd's ``config.toml`` (``google-gke.rst`` note; release-notes v25.10.0 known issues).
   - ``cdi.enabled: true`` (explicit; the v26.7.0 default; the ``cdi.default`` of NVIDIA's GKE example
     is read by no template since gpu-operator commit e63a9903, so it is not set) and
     ``cdi.nriPluginEnabled: false``:
     with NRI the operator deletes the ``nvidia`` RuntimeClass (gpu-operator
     ``controllers/state_manager.go`` ``isStateEnabled("pre-requisites")`` @ v26.7.0), which KAI's
     fraction pods need.
   - ``operator.runtimeClass: nvidia``: the RuntimeClass the operator creates at run time
     (``controllers/object_controls.go`` ``transformRuntimeClass`` / ``getRuntimeClassName``).
   - The operator and NFD master/gc on the system pool; the operands keep the chart's
     ``nvidia.com/gpu`` toleration (``daemonsets.tolerations``) so they run on tainted GPU nodes.

The RuntimeClass is not a Helm object: it appears only once the operator reconciled its
ClusterPolicy.  :attr:`GpuOperatorInstall.runtime_class` is the name workloads and KAI use;
``components.runtime_class_gate`` waits for it.
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

GPU_OPERATOR_REPOSITORY: Final = locked("gpu-operator").source
GPU_OPERATOR_CHART: Final = locked("gpu-operator").name
GPU_OPERATOR_VERSION: Final = locked("gpu-operator").version
GPU_OPERATOR_NAMESPACE: Final = "gpu-operator"
# gpu-operator controllers/object_controls.go DefaultRuntimeClass @ v26.7.0; chart values.yaml
# operator.runtimeClass.
NVIDIA_RUNTIME_CLASS: Final = "nvidia"
DRIVER_INSTALL_DIR: Final = "/run/nvidia/driver"
TOOLKIT_INSTALL_DIR: Final = "/usr/local/nvidia"
# The two classes GKE limits by quota outside kube-system (google-gke-gpu-operator-quota.yaml).
CRITICAL_PRIORITY_CLASSES: Final = ("system-node-critical", "system-cluster-critical")


# How long Helm may wait for the release (see components.operator_release.operator_release):
# node-feature-discovery's worker DaemonSet must be ready on every node, GPU nodes included, which Helm waits for; the operands themselves are the operator's, not Helm's.
GPU_OPERATOR_RELEASE_TIMEOUT_SECONDS = 900


@dataclass(frozen=True)
class GpuOperatorArgs:
    """Inputs of :class:`GpuOperatorInstall`."""

    version: str = GPU_OPERATOR_VERSION
    # Pods the critical-priority quota admits: NVIDIA's example is 100; about 10 operand pods
    # per GPU node plus the operator and NFD (reference/gpu-sharing-on-gke.md §1.4).
    quota_pods: int = 100
    node_selector: Mapping[str, str] = field(default_factory=lambda: MappingProxyType(SYSTEM_POOL_SELECTOR))


# gpu-operator v26.7.0 values.yaml ``operator.tolerations`` and its NFD subchart's
# ``master.tolerations`` (kept: a values list replaces the chart's, it does not merge).
CONTROL_PLANE_TOLERATION: Final[dict[str, str]] = {
    "key": "node-role.kubernetes.io/control-plane",
    "operator": "Equal",
    "value": "",
    "effect": "NoSchedule",
}


def gpu_operator_values(args: GpuOperatorArgs) -> dict[str, Any]:
    """The chart values (module docstring says why each is set)."""
    system = {"kubernetes.io/os": "linux", **dict(args.node_selector)}
    tolerate = [dict(t) for t in SYSTEM_POOL_TOLERATIONS]
    return {
        "cdi": {"enabled": True, "nriPluginEnabled": False},
        "driver": {"enabled": True},
        "hostPaths": {"driverInstallDir": DRIVER_INSTALL_DIR},
        "toolkit": {
            "installDir": TOOLKIT_INSTALL_DIR,
            "env": [{"name": "RUNTIME_CONFIG_SOURCE", "value": "file"}],
        },
        # The system pool's taint (components.gke: SYSTEM_POOL_TOLERATIONS).  Helm replaces
        # lists, so the operator keeps the chart's control-plane toleration (v26.7.0 values.yaml
        # ``operator.tolerations``); NFD master/gc take ``tolerations`` (charts/node-feature-discovery).
        "operator": {
            "runtimeClass": NVIDIA_RUNTIME_CLASS,
            "nodeSelector": system,
            "tolerations": [CONTROL_PLANE_TOLERATION, *tolerate],
        },
        "node-feature-discovery": {
            "master": {
                "nodeSelector": dict(args.node_selector),
                "tolerations": [CONTROL_PLANE_TOLERATION, *tolerate],
            },
            "gc": {"nodeSelector": dict(args.node_selector), "tolerations": tolerate},
        },
    }


def critical_priority_quota(
    resource_name: str, namespace: k8s.core.v1.Namespace, pods: int, parent: pulumi.Resource
) -> k8s.core.v1.ResourceQuota:
    """The quota GKE needs before it admits system-*-critical pods in ``namespace``."""
    return k8s.core.v1.ResourceQuota(
        resource_name,
        metadata=k8s.meta.v1.ObjectMetaArgs(name="gpu-operator-quota", namespace=namespace.metadata.name),
        spec=k8s.core.v1.ResourceQuotaSpecArgs(
            hard={"pods": str(pods)},
            scope_selector=k8s.core.v1.ScopeSelectorArgs(
                match_expressions=[
                    k8s.core.v1.ScopedResourceSelectorRequirementArgs(
                        scope_name="PriorityClass", operator="In", values=list(CRITICAL_PRIORITY_CLASSES)
                    )
                ]
            ),
        ),
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[namespace]),
    )


class GpuOperatorInstall(pulumi.ComponentResource):
    """Namespace ``gpu-operator``, its critical-priority quota, and the ``gpu-operator`` release."""

    namespace: k8s.core.v1.Namespace
    quota: k8s.core.v1.ResourceQuota
    release: k8s.helm.v3.Release
    runtime_class: str = NVIDIA_RUNTIME_CLASS

    def __init__(self, name: str, args: GpuOperatorArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-batch:gpu:Operator", name, None, opts)
        self.namespace = operator_namespace(f"{name}-namespace", GPU_OPERATOR_NAMESPACE, parent=self)
        self.quota = critical_priority_quota(f"{name}-quota", self.namespace, args.quota_pods, self)
        self.release = operator_release(
            f"{name}-release",
            release_name="gpu-operator",
            chart=ChartRef(GPU_OPERATOR_CHART, args.version, repository=GPU_OPERATOR_REPOSITORY),
            namespace=self.namespace,
            values=gpu_operator_values(args),
            parent=self,
            depends_on=[self.quota, *depends_on_of(opts)],
            timeout_seconds=GPU_OPERATOR_RELEASE_TIMEOUT_SECONDS,
        )
        self.register_outputs({"namespace": self.namespace.metadata.name, "release": self.release.name})
