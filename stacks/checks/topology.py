"""``resourceFlavors[].topology: true`` needs a GPU pool whose machine type GKE labels with
``cloud.google.com/gce-topology-*``; otherwise Kueue finds "no topology domains at level"
(the pack's ``kueue-tas-topology-domains`` rule, :mod:`gpu_batch_policy.facts.tas.levels`)."""

from __future__ import annotations

from collections.abc import Iterator

from stacks.config import StackConfig
from stacks.errors import ConfigIssue
from stacks.quantity import POLICIES_DIR

assert POLICIES_DIR

from gpu_batch_policy.facts.kai.topology import Level, request_problems  # noqa: E402
from gpu_batch_policy.facts.tas.levels import LEVEL_NAMES, TOPOLOGIES, TOPOLOGY_OF_MACHINE, labelled  # noqa: E402

__all__ = ["TOPOLOGIES", "check_topology", "kai_topologies", "kai_topology_name", "topology_of_pool"]

QUEUES_KEY = "gpu-batch:kueueQueues"
WORKLOADS_KEY = "gpu-batch:workloads"


def topology_of_pool(config: StackConfig, pool_name: str | None) -> str | None:
    """The Topology (``gke-default`` / ``a4x-default``) of the GPU pool's machine type, if any."""
    pool = next((p for p in config.gpu_pools if p.name == pool_name), None)
    return TOPOLOGY_OF_MACHINE.get(pool.machine_type) if pool is not None else None


def check_reservation_blocks(config: StackConfig) -> Iterator[ConfigIssue]:
    """A reservation block is zonal: cluster-toolkit gke-node-pool/main.tf precondition "var.zones
    must be explicitly provided when using an extended reservation block"."""
    for index, pool in enumerate(config.gpu_pools):
        if pool.reservation and "/reservationBlocks/" in pool.reservation and not pool.node_locations:
            yield ConfigIssue(
                f"gpu-batch:gpuPools[{index}].nodeLocations",
                f"the zone of reservation block {pool.reservation} (a block is zonal)",
            )


def check_topology(config: StackConfig) -> Iterator[ConfigIssue]:
    yield from check_reservation_blocks(config)
    yield from check_kai_topology_requests(config)
    pools = {p.name: p for p in config.gpu_pools}
    for index, flavor in enumerate(config.kueue_queues.resource_flavors):
        if not flavor.topology:
            continue
        pool = pools.get(flavor.pool or "")
        if pool is None or not labelled(pool.machine_type):
            yield ConfigIssue(
                f"{QUEUES_KEY}.resourceFlavors[{index}].topology",
                "false unless pool is a GPU pool of a machine type GKE labels with gce-topology-* "
                f"({', '.join(sorted(TOPOLOGY_OF_MACHINE))})",
                True,
            )


_ALIAS = {label: short for short, label in LEVEL_NAMES.items()}


def kai_topologies(config: StackConfig) -> dict[str, tuple[tuple[str, str], ...]]:
    """With KAI on: a KAI Topology per GPU family GKE labels, (nodeLabel, alias) widest first."""
    if not config.kai.enabled:
        return {}
    names = sorted(
        {TOPOLOGY_OF_MACHINE[p.machine_type] for p in config.gpu_pools if labelled(p.machine_type)}
    )
    return {name: tuple((label, _ALIAS[label]) for label in TOPOLOGIES[name]) for name in names}


def kai_topology_name(config: StackConfig) -> str | None:
    """The KAI Topology a KAI workload's request names: the stack's only one (None: none or several)."""
    names = list(kai_topologies(config))
    return names[0] if len(names) == 1 else None


def check_kai_topology_requests(config: StackConfig) -> Iterator[ConfigIssue]:
    """A KAI workload's request must name a level of the stack's one KAI Topology; the pack's
    ``kai-topology-annotations`` logic decides (one code path)."""
    topologies = kai_topologies(config)
    name = kai_topology_name(config)
    for w_index, workload in enumerate(config.workloads):
        if workload.scheduler != "kai":
            continue
        groups = [("head", workload.head)] + [
            (f"workerGroups[{i}]", g) for i, g in enumerate(workload.worker_groups)
        ]
        for where, group in groups:
            request = group.topology
            if request is None or request.mode == "unconstrained" or request.level is None:
                continue
            at = f"{WORKLOADS_KEY}[{w_index}].{where}.topology"
            if name is None:
                yield ConfigIssue(
                    at,
                    "no value unless KAI runs one GPU family GKE labels with gce-topology-* "
                    f"(KAI Topologies here: {', '.join(topologies) or 'none'})",
                    request.mode,
                )
                continue
            levels = {name: [Level(label, alias) for label, alias in topologies[name]]}
            for problem in request_problems(request.kai_annotations(name), levels, ray_group=True):
                yield ConfigIssue(f"{at}.level", f"a level KAI accepts ({problem})", request.level)
