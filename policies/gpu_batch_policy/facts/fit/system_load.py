"""What the always-on workloads ask of the pools they can run on, at those pools' largest size.

Always-on: Deployments, StatefulSets and ReplicaSets (``spec.replicas`` pods, default 1, kept
running by their controller) and DaemonSets (one pod on *every* node they target).  Jobs, bare
Pods and Ray workloads come and go, so they are not counted here.  Workloads are grouped by the
set of pools they may land on (``placement``); each group's demand is compared with those pools
at their maximum node count (``NodePool.max_nodes``: ``totalMaxNodeCount``, or per-zone
``maxNodeCount`` × zones).  Grouping by pool set is lenient where groups overlap (a workload that
could also use a bigger set is only counted against its own set); it never invents a shortfall.
This is also the data of the capacity report's "System pool" section.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from ...primitives.values import Unknown, as_int, dig
from ..model import KubeObject, NodePool, StackModel
from ..model.workloads import PodTemplate
from ..pod_templates import owned_templates
from .placement import admission_tolerations, placement, pod_requests, pool_allocatable
from .resources import Resources

ALWAYS_ON = frozenset({"Deployment", "StatefulSet", "ReplicaSet"})


@dataclass
class PoolLoad:
    """Demand of the always-on workloads that may use exactly ``pools``, against their capacity."""

    pools: tuple[NodePool, ...]
    # workload description → total requests (replicas × per pod; DaemonSets × nodes)
    workloads: list[tuple[str, Resources]] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    max_nodes: int | None = None
    allocatable: Resources | None = None  # Σ pools: max nodes × per-node allocatable

    @property
    def requested(self) -> Resources:
        total = Resources()
        for _, amount in self.workloads:
            total = total + amount
        return total

    @property
    def fits(self) -> bool | None:
        if self.allocatable is None or self.unknown:
            return None
        return self.requested.fits_in(self.allocatable)

    def describe_pools(self) -> str:
        return " + ".join(f"{p.name} ({p.machine_type})" for p in self.pools)


def _replicas(obj: KubeObject) -> int | Unknown:
    raw = as_int(dig(obj.props, "spec", "replicas"))
    return 1 if raw is None else raw


def system_loads(model: StackModel) -> list[PoolLoad]:
    """One :class:`PoolLoad` per set of pools some always-on workload may use (memoised)."""
    return model.memo("fit.system_loads", lambda: _build(model))


def _build(model: StackModel) -> list[PoolLoad]:
    loads: dict[tuple[int, ...], PoolLoad] = {}
    daemon: list[tuple[KubeObject, PodTemplate, tuple[NodePool, ...]]] = []
    for owned in owned_templates(model):
        owner = owned.owner
        if not isinstance(owner, KubeObject) or owner.kind not in ALWAYS_ON | {"DaemonSet"}:
            continue
        where = placement(
            model, owned.template, admission_tolerations(model, {**owner.labels, **owned.template.labels})
        )
        if not where.possible:
            continue
        if owner.kind == "DaemonSet":
            daemon.append((owner, owned.template, where.possible))
            continue
        key = tuple(sorted(id(p) for p in where.possible))
        load = loads.setdefault(key, PoolLoad(where.possible))
        requests, replicas = pod_requests(owned.template), _replicas(owner)
        if isinstance(requests, Unknown) or isinstance(replicas, Unknown):
            load.unknown.append(f"{owner.describe()}: requests or replicas unknown until apply")
            continue
        load.workloads.append((f"{owner.describe()} × {replicas}", requests.times(replicas)))
    for load in loads.values():
        _capacity(model, load)
        for owner, template, pools in daemon:
            nodes = sum(n for p in load.pools if p in pools for n in [_max_nodes(model, p)] if n)
            if not nodes:
                continue
            requests = pod_requests(template)
            if isinstance(requests, Unknown):
                load.unknown.append(f"{owner.describe()}: requests unknown until apply")
                continue
            load.workloads.append((f"{owner.describe()} (DaemonSet) × {nodes} nodes", requests.times(nodes)))
    return list(loads.values())


def _max_nodes(model: StackModel, pool: NodePool) -> int | None:
    nodes = pool.max_nodes(model.cluster_of(pool))
    return nodes if isinstance(nodes, int) else None


def _capacity(model: StackModel, load: PoolLoad) -> None:
    total = Resources()
    node_total = 0
    for pool in load.pools:
        nodes = pool.max_nodes(model.cluster_of(pool))
        room = pool_allocatable(pool)
        if not isinstance(nodes, int):
            load.unknown.append(f"maximum node count of {pool.describe()}")
            continue
        if not isinstance(room, Resources):
            what = "unknown until apply" if isinstance(room, Unknown) else "not in the pack's machine table"
            load.unknown.append(f"machine type of {pool.describe()} {what}")
            continue
        node_total += nodes
        total = total + room.times(Decimal(nodes))
    load.max_nodes = node_total
    load.allocatable = total
