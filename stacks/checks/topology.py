"""``resourceFlavors[].topology: true`` needs a GPU pool whose machine type GKE labels with
``cloud.google.com/gce-topology-*``; otherwise Kueue finds "no topology domains at level"
(the pack's ``kueue-tas-topology-domains`` rule, :mod:`gpu_batch_policy.tas.levels`)."""

from __future__ import annotations

from collections.abc import Iterator

from stacks.config import StackConfig
from stacks.errors import ConfigIssue
from stacks.quantity import POLICIES_DIR

assert POLICIES_DIR

from gpu_batch_policy.tas.levels import TOPOLOGIES, TOPOLOGY_OF_MACHINE, labelled  # noqa: E402

__all__ = ["TOPOLOGIES", "check_topology", "topology_of_pool"]

QUEUES_KEY = "gpu-batch:kueueQueues"


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
