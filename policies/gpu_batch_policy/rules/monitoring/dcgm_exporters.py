"""``dcgm-double-exporter``: GKE's managed DCGM and the GPU Operator's dcgm-exporter for the same pools.

GKE's managed DCGM collection (cluster ``monitoringConfig.enableComponents`` contains ``DCGM``,
pulumi-gcp 10.2.0 ``ClusterMonitoringConfig``) is GKE's exporter for GPUs whose driver GKE installs
(GKE docs, "Collect and view DCGM metrics").  The NVIDIA GPU Operator runs its own
``nvidia-dcgm-exporter`` DaemonSet on every GPU node it manages (NVIDIA/gpu-operator v26.7.0
``controllers/state_manager.go``: operands on GPU nodes unless ``nvidia.com/gpu.deploy.operands=
false``; ClusterPolicy ``dcgmExporter.enabled``, unset = on; assets/state-dcgm-exporter/).  Both on
one cluster's operator pools means two collectors claim the same GPUs: duplicated ``DCGM_FI_*``
series (a ``sum`` over them counts each GPU twice) and a managed exporter that cannot read GPUs
whose driver GKE did not install.  Advisory: the GPUs still work; a stack's config may raise it.

What stays allowed: DCGM on a cluster whose GPU pools use GKE's drivers (the operator's exporter off
or the pools opted out), or the operator's exporter with GKE's DCGM component off.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, Policy

from ...facts.gpu_stack import operator_installed, operator_manages, setup_of
from ...facts.metrics.dcgm_source import DCGM_COMPONENT
from ...facts.model import StackModel
from ...facts.open_world import World
from ...primitives.values import Unknown, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter


def _exporter_enabled(model: StackModel) -> bool | None:
    """Whether a ClusterPolicy of the stack runs the operator's dcgm-exporter (None: unknown)."""
    policies = model.kube_objects("nvidia.com", "ClusterPolicy")
    values = [dig(p.props, "spec", "dcgmExporter", "enabled") for p in policies]
    if any(isinstance(v, Unknown) for v in values):
        return None
    return any(v is not False for v in values)


def _urn(cluster: Any) -> str | None:
    return cluster.urn if cluster is not None else None


def check_double_dcgm(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    installed = operator_installed(model, World.from_config(config))
    if not installed:
        return
    exporter = _exporter_enabled(model)
    for cluster in model.gke_clusters():
        components = dig(cluster.res.get("monitoringConfig"), "enableComponents")
        if isinstance(components, Unknown):
            reporter.cannot_check(cluster, "monitoringConfig.enableComponents is unknown until apply")
            continue
        if not isinstance(components, list) or DCGM_COMPONENT not in components:
            continue
        if exporter is None:
            reporter.cannot_check(cluster, "whether the ClusterPolicy enables dcgmExporter")
            continue
        if not exporter:
            continue
        pools = [
            p
            for p in model.node_pools()
            if p.gpus_per_node() != 0 and _urn(model.cluster_of(p)) == cluster.urn
        ]
        managed = [p for p in pools if operator_manages(setup_of(p), installed)]
        if managed:
            names = ", ".join(sorted(p.describe() for p in managed))
            reporter.violation(
                cluster,
                f"monitoringConfig enables GKE's managed DCGM while the GPU Operator's dcgm-exporter runs on {names}: "
                "two collectors for the same GPUs (duplicated DCGM_FI_* series)",
                "remove DCGM from monitoringConfig.enableComponents (scrape the operator's exporter with a "
                "PodMonitoring), or set the ClusterPolicy's dcgmExporter.enabled: false",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "dcgm-double-exporter",
        "GKE's managed DCGM and the GPU Operator's dcgm-exporter must not both collect the same pools.",
        check_double_dcgm,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
]
