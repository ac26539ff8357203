"""Quota arithmetic over the ClusterQueue / Cohort tree, ported from Kueue v0.19.2.

Upstream: kubernetes-sigs/kueue@v0.19.2 ``pkg/cache/scheduler/resource_node.go`` (``localQuota``,
``LocalAvailable``, ``available``, ``potentialAvailable``, ``addUsage``, ``removeUsage``,
``accumulateFromChild``, ``QuantitiesFitInQuota``, ``IsWithinNominalInResources``) and
``clusterqueue_snapshot.go`` / ``cohort_snapshot.go`` (``BorrowingWith``).  Amounts are integers
in the resource's milli-units, as Kueue's ``resources.Amount`` are exact integers.

A ClusterQueue's subtree quota is its nominal quota; a Cohort's is its own nominal quota plus what
each child lends (subtree quota minus the part the lending limit keeps local).  Usage beyond a
node's local (non-lent) quota is stored in the parent, so borrowing is always checked against the
whole path to the root.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

# (flavor, resource).  Typed as a tuple of any length on purpose: mypyc keeps a fixed-length
# tuple unboxed (a C struct) and makes a new tuple object from it at every dictionary lookup,
# which would defeat ``flavor_resource`` below; this type keeps the one object (issue 44 item 3,
# round 9).
FlavorResource = tuple[str, ...]

# flavor -> resource -> the one tuple for that pair (``flavor_resource``)
_INTERNED: dict[str, dict[str, FlavorResource]] = {}


def flavor_resource(flavor: str, resource: str) -> FlavorResource:
    """The one ``(flavor, resource)`` tuple of this process for the pair.

    Every quota and usage dictionary is keyed by these tuples; made here, a key looked up is the
    very object stored, so the lookup compares by identity instead of comparing the tuples item
    by item, and no tuple is made per lookup (issue 44 item 3, round 9: these lookups were a
    tenth of the compiled run).  Equal pairs are still equal tuples: a tuple made elsewhere finds
    the same entries, only more slowly."""
    by_resource = _INTERNED.get(flavor)
    if by_resource is None:
        by_resource = _INTERNED[flavor] = {}
    fr = by_resource.get(resource)
    if fr is None:
        fr = by_resource[resource] = (flavor, resource)
    return fr


@dataclass(frozen=True)
class Quota:
    """One ``resources[]`` entry: nominal quota and optional borrowing / lending limits."""

    nominal: int
    borrowing_limit: int | None = None
    lending_limit: int | None = None


@dataclass(eq=False)
class Node:
    """A ClusterQueue (leaf) or Cohort in the quota tree."""

    name: str
    is_cluster_queue: bool
    quotas: dict[FlavorResource, Quota] = field(default_factory=dict)
    parent: Node | None = None
    children: list[Node] = field(default_factory=list)
    subtree_quota: dict[FlavorResource, int] = field(default_factory=dict)
    usage: dict[FlavorResource, int] = field(default_factory=dict)
    fair_weight: float = 1.0  # spec.fairSharing.weight (``parseFairWeight``: default 1)
    # on a root: moves on every admission and release of quota in the tree (what remembered
    # preemption searches of the tree are kept with)
    generation: int = 0
    # on a ClusterQueue: Kueue's ``AllocatableResourceGeneration`` (``pkg/cache/scheduler/
    # clusterqueue.go`` ``deleteWorkload``: moves when one of *its* workloads leaves the cache or
    # is updated there -- admitted, evicted, released -- not on its cohort's other queues' changes)
    allocatable_generation: int = 0
    # on a root: moves when a workload of the tree starts or stops being evicted (the candidate
    # order of every preemption search in the tree reads it; no other tree's does)
    evicting_epoch: int = 0
    lendable: dict[str, int] | None = None  # fair sharing's ``calculateLendable`` (quota only)
    # bumped on every change of ``usage`` or quota: what is computed from them (the fair share)
    # is kept with the version it was computed at
    version: int = 0
    share_cache: tuple[int, Any] | None = None
    local_cache: dict[FlavorResource, int] = field(default_factory=dict)
    # quota-only facts, kept per node until ``accumulate`` recomputes the tree
    potential_cache: dict[FlavorResource, int] = field(default_factory=dict)
    height_cache: int | None = None
    cluster_queues_cache: list[Node] | None = None
    # ``child_cohorts`` / ``child_cluster_queues``, kept while ``children`` has as many entries as
    # when they were made (children are only ever appended, while the cluster is built)
    split_cache: tuple[int, list[Node], list[Node]] | None = None

    def local_quota(self, fr: FlavorResource) -> int:
        """Quota a node keeps for itself: subtree minus lending limit (0 without a lending limit).
        Quotas only: kept per node until ``accumulate`` recomputes the subtree."""
        found = self.local_cache.get(fr)
        if found is None:
            quota = self.quotas.get(fr)
            found = 0
            if quota is not None and quota.lending_limit is not None:
                found = max(0, self.subtree_quota.get(fr, 0) - quota.lending_limit)
            self.local_cache[fr] = found
        return found

    def root(self) -> Node:
        node = self
        while node.parent is not None:
            node = node.parent
        return node

    def ancestors(self) -> Iterator[Node]:
        """Parent to root (``PathParentToRoot``)."""
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def _split(self) -> tuple[int, list[Node], list[Node]]:
        """The children split into Cohorts and ClusterQueues, in child order.  Kept: the fair
        sharing ordering and tournament ask on every step of every preemption search and cycle,
        and building the two lists each time was a share of their cost (issue 44 item 3, round 13).
        Callers only read the lists."""
        found = self.split_cache
        if found is None or found[0] != len(self.children):
            cohorts = [c for c in self.children if not c.is_cluster_queue]
            queues = [c for c in self.children if c.is_cluster_queue]
            found = self.split_cache = (len(self.children), cohorts, queues)
        return found

    def child_cohorts(self) -> list[Node]:
        return self._split()[1]

    def child_cluster_queues(self) -> list[Node]:
        return self._split()[2]

    def borrowing_with(self, fr: FlavorResource, val: int) -> bool:
        """ClusterQueue: nominal < usage + val; Cohort: subtree quota < usage + val."""
        if self.is_cluster_queue:
            quota = self.quotas.get(fr)
            return (quota.nominal if quota else 0) < self.usage.get(fr, 0) + val
        return self.subtree_quota.get(fr, 0) < self.usage.get(fr, 0) + val


def local_available(node: Node, fr: FlavorResource) -> int:
    return max(0, node.local_quota(fr) - node.usage.get(fr, 0))


def available(node: Node, fr: FlavorResource) -> int:
    """What ``node`` can still use of ``fr`` now, through its ancestors (``available``)."""
    parent = node.parent
    if parent is None:
        return node.subtree_quota.get(fr, 0) - node.usage.get(fr, 0)
    parent_available = available(parent, fr)
    lq = node.local_cache.get(fr)
    if lq is None:
        lq = node.local_quota(fr)
    used = node.usage.get(fr, 0)
    quota = node.quotas.get(fr)
    if quota is not None and quota.borrowing_limit is not None:
        stored_in_parent = node.subtree_quota.get(fr, 0) - lq
        used_in_parent = used - lq if used > lq else 0
        with_max_from_parent = stored_in_parent - used_in_parent + quota.borrowing_limit
        parent_available = min(parent_available, with_max_from_parent)
    return (lq - used if lq > used else 0) + parent_available


def cq_available(node: Node, fr: FlavorResource) -> int:
    """``ClusterQueueSnapshot.Available``: never negative."""
    return max(0, available(node, fr))


def potential_available(node: Node, fr: FlavorResource) -> int:
    """What ``node`` could use of ``fr`` if nothing else used any (``potentialAvailable``).
    Quotas only: kept per node until ``accumulate`` recomputes the tree."""
    found = node.potential_cache.get(fr)
    if found is not None:
        return found
    if node.parent is None:
        found = node.subtree_quota.get(fr, 0)
    else:
        found = node.local_quota(fr) + potential_available(node.parent, fr)
        quota = node.quotas.get(fr)
        if quota is not None and quota.borrowing_limit is not None:
            found = min(node.subtree_quota.get(fr, 0) + quota.borrowing_limit, found)
    node.potential_cache[fr] = found
    return found


def add_usage(node: Node, fr: FlavorResource, val: int) -> None:
    local = local_available(node, fr)
    node.version += 1
    node.usage[fr] = node.usage.get(fr, 0) + val
    if node.parent is not None and val > local:
        add_usage(node.parent, fr, val - local)


def remove_usage(node: Node, fr: FlavorResource, val: int) -> None:
    stored_in_parent = node.usage.get(fr, 0) - node.local_quota(fr)
    node.version += 1
    node.usage[fr] = node.usage.get(fr, 0) - val
    if stored_in_parent <= 0 or node.parent is None:
        return
    remove_usage(node.parent, fr, min(val, stored_in_parent))


def add_all(node: Node, usage: dict[FlavorResource, int]) -> None:
    for fr, val in usage.items():
        add_usage(node, fr, val)


def remove_all(node: Node, usage: dict[FlavorResource, int]) -> None:
    for fr, val in usage.items():
        remove_usage(node, fr, val)


def fits(node: Node, usage: dict[FlavorResource, int]) -> bool:
    """``ClusterQueueSnapshot.Fits``: every amount within what is available now."""
    return all(cq_available(node, fr) >= val for fr, val in usage.items())


def quantities_fit_in_quota(
    node: Node, requests: dict[FlavorResource, int]
) -> tuple[bool, dict[FlavorResource, int]]:
    """``QuantitiesFitInQuota``: fits within the subtree, and what is left for the parent."""
    ok = True
    remaining: dict[FlavorResource, int] = {}
    for fr, val in requests.items():
        if node.subtree_quota.get(fr, 0) < node.usage.get(fr, 0) + val:
            ok = False
        remaining[fr] = max(0, val - local_available(node, fr))
    return ok, remaining


def within_nominal(node: Node, frs: Iterable[FlavorResource]) -> bool:
    """``IsWithinNominalInResources``: usage within the subtree quota for every ``fr``."""
    return all(node.subtree_quota.get(fr, 0) >= node.usage.get(fr, 0) for fr in frs)


def node_height(node: Node) -> int:
    """``getNodeHeight`` (hierarchical_preemption.go): 1 for a cohort of ClusterQueues, +1 per level.
    The tree's shape only: kept per node until ``accumulate``."""
    if node.height_cache is None:
        height = min(len(node.children), 1)
        for child in node.child_cohorts():
            height = max(height, node_height(child) + 1)
        node.height_cache = height
    return node.height_cache


def subtree_cluster_queues(node: Node) -> list[Node]:
    """``SubtreeClusterQueues``: the ClusterQueues under ``node``, depth first in child order.
    The tree's shape only: kept per node until ``accumulate``."""
    if node.cluster_queues_cache is None:
        found: list[Node] = []
        stack = [node]
        while stack:
            n = stack.pop()
            if n.is_cluster_queue:
                found.append(n)
            stack.extend(reversed(n.children))
        node.cluster_queues_cache = found
    return node.cluster_queues_cache


def height_of_lowest_subtree_that_fits(cq: Node, fr: FlavorResource, val: int) -> tuple[int, bool]:
    """``FindHeightOfLowestSubtreeThatFits`` (classical/hierarchical_preemption.go).

    0 when ``val`` fits the ClusterQueue's nominal quota; otherwise the height of the lowest
    ancestor whose subtree has room, and whether that ancestor has a parent (more to reclaim).
    """
    if not cq.borrowing_with(fr, val) or cq.parent is None:
        return 0, cq.parent is not None
    remaining = val - local_available(cq, fr)
    for node in cq.ancestors():
        if not node.borrowing_with(fr, remaining):
            return node_height(node), node.parent is not None
        remaining -= local_available(node, fr)
    return node_height(cq.root()), False


def accumulate(root: Node) -> None:
    """Recompute subtree quotas bottom-up (``updateCohortResourceNode``/``accumulateFromChild``)."""
    root.subtree_quota = {fr: q.nominal for fr, q in root.quotas.items()}
    root.lendable = None
    root.local_cache = {}
    root.potential_cache = {}
    root.height_cache = None
    root.cluster_queues_cache = None
    root.version += 1
    for child in root.children:
        accumulate(child)
        for fr, child_quota in child.subtree_quota.items():
            root.subtree_quota[fr] = root.subtree_quota.get(fr, 0) + child_quota - child.local_quota(fr)
