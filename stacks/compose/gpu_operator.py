"""The NVIDIA GPU Operator layer: installed when some GPU pool has ``gpuStack: gpu-operator``.

Order in one ``pulumi up``: provider (cluster + system pool) -> namespace -> critical-priority
quota -> release -> a gate that waits until the operator created RuntimeClass ``nvidia``
(:mod:`components.runtime_class_gate`) -> the KAI workloads, whose fraction pods KAI gives that
class.  KAI itself may install in parallel: its webhook only mutates pods.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from components.gpu_operator import GpuOperatorArgs, GpuOperatorInstall
from components.readiness_gate import release_fingerprint
from components.runtime_class_gate import RuntimeClassReadiness
from stacks.config import StackConfig

# Pods per node the critical-priority quota allows for: the operator's GPU-node operands (driver,
# toolkit, device plugin, validator, DCGM exporter, GFD, MIG manager, node-status exporter) plus
# NFD's worker, with room for a rolling update (reference/gpu-sharing-on-gke.md §1.4).
QUOTA_PODS_PER_NODE = 16
QUOTA_MIN_PODS = 100  # NVIDIA's example (google-gke-gpu-operator-quota.yaml)


@dataclass(frozen=True)
class GpuOperatorLayer:
    install: GpuOperatorInstall
    runtime_class_ready: RuntimeClassReadiness


def uses_gpu_operator(config: StackConfig) -> bool:
    return any(p.gpu_stack == "gpu-operator" for p in config.gpu_pools)


def quota_pods(config: StackConfig) -> int:
    nodes = config.cluster.system_pool.max_nodes + sum(p.max_nodes for p in config.gpu_pools)
    return max(QUOTA_MIN_PODS, QUOTA_PODS_PER_NODE * nodes)


def install_gpu_operator(
    config: StackConfig, provider: pulumi.ProviderResource, kubeconfig: pulumi.Input[str], *, prefix: str = ""
) -> GpuOperatorLayer | None:
    """The operator and its RuntimeClass gate, or None when no pool uses it; ``prefix`` starts
    their Pulumi names (one cluster of several, ``stacks.compose.build_cluster``)."""
    if not uses_gpu_operator(config):
        return None
    install = GpuOperatorInstall(
        f"{prefix}gpu-operator",
        GpuOperatorArgs(quota_pods=quota_pods(config)),
        opts=pulumi.ResourceOptions(provider=provider),
    )
    gate = RuntimeClassReadiness(
        f"{prefix}gpu-runtime-class-ready",
        kubeconfig,
        [install.runtime_class],
        installed=release_fingerprint(install.release),
        opts=pulumi.ResourceOptions(depends_on=[install.release]),
    )
    return GpuOperatorLayer(install=install, runtime_class_ready=gate)
