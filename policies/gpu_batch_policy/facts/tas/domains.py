"""The TAS flavors of a stack, their Topologies, and how many GPUs one domain of a level holds.

One domain's size is known from the machine type alone at two kinds of level: a host
(``cloud.google.com/gce-topology-host``) or a node (``kubernetes.io/hostname``) holds one node's
GPUs, and an A4X ``cloud.google.com/gke-nodepool`` domain is one NVLink domain of 72 GPUs
(:mod:`.levels`).  A block or sub-block is as large as the reservation GCE carved it from: known
only where the policy config declares the reservation's size, or for an A4X sub-block (18 nodes)
(:mod:`.reservations`); otherwise "cannot tell" (None), never a guess.  Pools of one flavor may
share a block, so a block / sub-block domain is bounded by the sum over the flavor's pools (exact
with one pool).  The pack's ``kueue-tas-gang-fits-domain`` rule and the report's topology table
both read this.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...primitives.tokens import KUEUE_GROUP
from ...primitives.values import Unknown, as_list, as_str, dig
from ..model import NodePool, StackModel
from ..model.kueue import ResourceFlavor
from ..pools import select
from .levels import A4X_NVLINK_GPUS, BLOCK, HOST, HOSTNAME, NODEPOOL, SUBBLOCK
from .reservations import ReservationSize, domain_nodes


def topology_levels(model: StackModel) -> dict[str, list[str]]:
    """Each declared Topology's ``spec.levels[].nodeLabel`` (Topologies with unknown levels left out)."""
    out: dict[str, list[str]] = {}
    for obj in model.kube_objects(KUEUE_GROUP, "Topology"):
        levels = as_list(dig(obj.spec, "levels"))
        labels = [as_str(dig(level, "nodeLabel")) for level in levels] if isinstance(levels, list) else []
        if labels and all(isinstance(x, str) for x in labels):
            out[obj.name] = [str(x) for x in labels]
    return out


def tas_flavors(model: StackModel) -> list[tuple[ResourceFlavor, list[str] | None]]:
    """Every flavor with a known ``topologyName``, with its Topology's levels (None: not declared)."""
    levels = topology_levels(model)
    return [
        (f, levels.get(f.topology_name))
        for f in model.resource_flavors()
        if isinstance(f.topology_name, str) and f.topology_name
    ]


def flavor_pools(model: StackModel, flavor: ResourceFlavor) -> list[NodePool]:
    """The pools the flavor's ``nodeLabels`` surely select."""
    if not flavor.node_labels_known:
        return []
    return list(select(model.node_pools(), flavor.node_labels).matched)


def domain_gpus(
    model: StackModel,
    flavor: ResourceFlavor,
    level: str,
    reservations: Mapping[str, ReservationSize] | None = None,
) -> int | None:
    """GPUs one domain of ``level`` can hold on the flavor's pools; None: cannot tell.

    A host, node or A4X node pool belongs to one pool: the largest pool's.  A block or sub-block
    may hold nodes of several of the flavor's pools: the sum of each pool's bound."""
    sizes: list[int] = []
    for pool in flavor_pools(model, flavor):
        gpus = pool.gpus_per_node()
        if isinstance(gpus, Unknown):
            return None
        if level in (HOST, HOSTNAME):
            sizes.append(gpus)
        elif level == NODEPOOL and pool.machine_type == "a4x-highgpu-4g":
            sizes.append(A4X_NVLINK_GPUS)
        elif level in (BLOCK, SUBBLOCK) and (nodes := domain_nodes(pool, level, reservations or {})):
            sizes.append(nodes * gpus)
        else:
            return None
    if not sizes:
        return None
    return sum(sizes) if level in (BLOCK, SUBBLOCK) else max(sizes)
