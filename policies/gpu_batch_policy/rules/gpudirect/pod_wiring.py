"""``gke-gpudirect-pod-wiring``: a GPU pod that can only land on GPUDirect nodes carries the wiring
Google's NCCL test pods carry (:mod:`..gpudirect.wiring`), or NCCL falls back to TCP.

Which pools a pod may land on: only pools with GPUs (it requests ``nvidia.com/gpu``), that the
pack's placement allows (``fit.placement.placement``: taints, nodeSelector, required node
affinity), and -- for a Kueue workload whose ClusterQueue resolves -- that a flavor covering
``nvidia.com/gpu`` in that queue selects (Kueue injects the flavor's ``nodeLabels``, kueue v0.19.2
``pkg/podset``).  Judged only when every such pool is a GPUDirect pool
(``networkConfig.additionalNodeNetworkConfigs`` set) of one profile; a pod that may also land on a
plain pool, or on pools of different profiles, is not judged (no wiring suits both).

``gke-gpudirect-nccl-env`` (mandatory), on the same pods: each GPU container loads the NCCL
settings the stack's installer drops on the node (:mod:`...facts.gpudirect.nccl_env`: TCPXO's
``nccl-env-profile.sh`` with ``NCCL_LIB_DIR``, RDMA's ``set_nccl_env.sh``), as Google's README and
test Pods tell every workload to.  Mandatory: a GPUDirect pool exists for the GPU NICs, and without
these settings NCCL does not use them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, Policy

from ...facts.fit.placement import placement
from ...facts.gpudirect.nccl_env import missing_nccl_env, nccl_env_for
from ...facts.gpudirect.profiles import GpuDirectProfile, profile_for
from ...facts.gpudirect.wiring import missing_wiring, single_profile
from ...facts.model import NodePool, StackModel
from ...facts.model.base import ObjectView
from ...facts.pod_templates import OwnedTemplate, owned_templates
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


def _gpudirect_templates(
    model: StackModel,
) -> Iterator[tuple[OwnedTemplate, GpuDirectProfile, list[NodePool]]]:
    """Each GPU pod template that can land only on GPUDirect pools of one profile."""
    if not any(_profile(p) for p in model.node_pools()):
        return
    by_queue = _queue_pools(model)
    for owned in owned_templates(model):
        gpus = owned.template.gpus()
        if isinstance(gpus, Unknown) or gpus <= 0:
            continue
        allowed = by_queue.get(owned.owner.urn)
        pools = [
            p
            for p in placement(model, owned.template, kueue_queued=True).possible
            if _has_gpus(p) and (allowed is None or p.name in allowed)
        ]
        profile = single_profile(_profile(p) for p in pools)
        if profile is not None:
            yield owned, profile, pools


def check_pod_wiring(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for owned, profile, pools in _gpudirect_templates(model):
        template = owned.template
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


def check_nccl_env(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for owned, profile, pools in _gpudirect_templates(model):
        needed = nccl_env_for(profile)
        if needed is None:
            continue
        missing = missing_nccl_env(profile, dig(owned.template.raw, "spec"))
        if missing is None:
            reporter.cannot_check(owned.owner, f"{owned.name} GPU containers' command, args and env")
            continue
        if missing:
            env = "".join(f" with env {k}={v}" for k, v in needed.env)
            reporter.violation(
                owned.owner,
                f"pods ({owned.name}) land only on GPUDirect-{profile.stack} nodes "
                f"({', '.join(sorted(p.name for p in pools))}) but never load the NCCL settings of the "
                f"installed plugin: {'; '.join(missing)}",
                f"run `{needed.source_line}` at container start{env} (container-engine-accelerators "
                f'{needed.cited_in}; for a RayCluster worker: container args ["{needed.source_line}"], '
                "KubeRay runs them before `ray start`)",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "gke-gpudirect-pod-wiring",
        "A GPU pod that lands on GPUDirect nodes carries the interfaces annotation, volumes, env and sidecar NCCL needs.",
        check_pod_wiring,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
    stack_policy(
        "gke-gpudirect-nccl-env",
        "A GPU container that lands only on GPUDirect nodes loads its stack's NCCL settings (nccl-env-profile.sh "
        "for TCPXO, set_nccl_env.sh for RDMA).",
        check_nccl_env,
    ),
]
