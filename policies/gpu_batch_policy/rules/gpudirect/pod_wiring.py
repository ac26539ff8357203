"""``gke-gpudirect-pod-wiring``: a GPU pod that can only land on GPUDirect nodes carries the wiring
Google's NCCL test pods carry (:mod:`..gpudirect.wiring`), or NCCL falls back to TCP.

Which pools a pod may land on: only pools with GPUs (it requests ``nvidia.com/gpu``), that the
pack's placement allows (``fit.placement.placement``: taints, nodeSelector, required node
affinity), and -- for a Kueue workload whose ClusterQueue resolves -- that a flavor covering
``nvidia.com/gpu`` in that queue selects (Kueue injects the flavor's ``nodeLabels``, kueue v0.19.2
``pkg/podset``).  Judged only when every such pool is a GPUDirect pool
(``networkConfig.additionalNodeNetworkConfigs`` set) of one profile; a pod that may also land on a
plain pool, or on pools of different profiles, is not judged (no wiring suits both).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, Policy

from ...facts.fit.placement import placement
from ...facts.gpudirect.profiles import profile_for
from ...facts.gpudirect.wiring import missing_wiring, single_profile
from ...facts.model import NodePool, StackModel
from ...facts.model.base import ObjectView
from ...facts.pod_templates import owned_templates
from ...facts.tas.domains import flavor_pools
from ...facts.workload_kinds import kueue_gangs
from ...primitives.values import Unknown, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter
from ..kueue.capacity import workload_queue
from .networking import extra_nics

GPU = "nvidia.com/gpu"


def _has_gpus(pool: NodePool) -> bool:
    gpus = pool.gpus_per_node()
    return isinstance(gpus, Unknown) or gpus > 0


def _profile(pool: NodePool) -> Any:
    nics = extra_nics(pool)
    machine = pool.machine_type
    if isinstance(nics, Unknown) or not nics or not isinstance(machine, str):
        return None
    return profile_for(machine)


def _queue_pools(model: StackModel) -> dict[str, set[str]]:
    """Per Kueue workload object (URN): the pools the GPU flavors of its ClusterQueue select."""
    silent = Reporter(lambda *_: None, stack=True)
    flavors = {f.name: f for f in model.resource_flavors()}
    out: dict[str, set[str]] = {}
    for counted in kueue_gangs(model):
        view = counted.subject if isinstance(counted.subject, ObjectView) else ObjectView(counted.obj)
        cq = workload_queue(model, view, silent)
        if cq is None:
            continue
        names = {
            f.name
            for group in cq.resource_groups
            if GPU in group.covered_resources
            for f in group.flavors
            if isinstance(f.name, str)
        }
        out[counted.obj.urn] = {
            p.name for n in names if n in flavors for p in flavor_pools(model, flavors[n])
        }
    return out


def check_pod_wiring(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    if not any(_profile(p) for p in model.node_pools()):
        return
    by_queue = _queue_pools(model)
    for owned in owned_templates(model):
        template = owned.template
        gpus = template.gpus()
        if isinstance(gpus, Unknown) or gpus <= 0:
            continue
        allowed = by_queue.get(owned.owner.urn)
        pools = [
            p
            for p in placement(model, template, kueue_queued=True).possible
            if _has_gpus(p) and (allowed is None or p.name in allowed)
        ]
        profile = single_profile(_profile(p) for p in pools)
        if profile is None:
            continue
        missing = missing_wiring(profile, template.annotations, dig(template.raw, "spec"))
        if missing is None:
            reporter.cannot_check(owned.owner, f"{owned.name} pod template GPUDirect wiring")
            continue
        if missing:
            reporter.violation(
                owned.owner,
                f"pods ({owned.name}) land only on GPUDirect-{profile.stack} nodes "
                f"({', '.join(sorted(p.name for p in pools))}) but lack {'; '.join(missing)}: "
                "NCCL will fall back to TCP",
                "wire the pod template as Google's NCCL test pod for this stack does "
                "(container-engine-accelerators gpudirect-*/nccl-test*.yaml)",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "gke-gpudirect-pod-wiring",
        "A GPU pod that lands on GPUDirect nodes carries the interfaces annotation, volumes, env and sidecar NCCL needs.",
        check_pod_wiring,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
]
