"""The order in which fair preemption visits ClusterQueues, ported from Kueue v0.19.2.

Upstream: kubernetes-sigs/kueue@v0.19.2 ``pkg/scheduler/preemption/fairsharing/ordering.go``
(``TargetClusterQueueOrdering``: ``Iter`` descends from the root cohort to the child -- Cohort
or ClusterQueue -- with the highest share, pruning ClusterQueues that do not borrow (except the
preemptor's) or have no candidates left and Cohorts that do not borrow (except those on the
preemptor's path); ties between ClusterQueues go to the better head candidate), ``target.go``
(``TargetClusterQueue``: ``ComputeShares``, ``ComputeTargetShareAfterRemoval``) and
``least_common_ancestor.go`` (shares are compared between the children of the least common
ancestor on the preemptor's and the target's paths: the "almost LCAs").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from whatif.fairsharing.share import DRS, NEGATIVE, compare, share
from whatif.tree import Node, add_all, remove_all
from whatif.workload import Workload

CandidateKey = Callable[[Workload], Any]


class TargetQueue:
    """One ClusterQueue the ordering yields, with its remaining candidates."""

    def __init__(self, ordering: Ordering, node: Node) -> None:
        self.ordering = ordering
        self.node = node

    @property
    def in_cluster_queue(self) -> bool:
        return self.node is self.ordering.preemptor

    def has_workload(self) -> bool:
        return bool(self.ordering.targets.get(self.node.name))

    def pop(self) -> Workload:
        return self.ordering.targets[self.node.name].pop(0)

    def _almost_lcas(self) -> tuple[Node, Node]:
        lca = next(a for a in self.node.ancestors() if a in self.ordering.ancestors)
        return almost_lca(self.ordering.preemptor, lca), almost_lca(self.node, lca)

    def shares(self) -> tuple[DRS, DRS]:
        """``ComputeShares``: (preemptor's new share, target's old share)."""
        preemptor_side, target_side = self._almost_lcas()
        return share(preemptor_side), share(target_side)

    def share_after_removal(self, wl: Workload) -> DRS:
        """``ComputeTargetShareAfterRemoval``."""
        target_side = self._almost_lcas()[1]
        if target_side is self.node:  # the queue itself: its share with the usage taken out
            return share(self.node, wl.usage)
        remove_all(self.node, wl.usage)
        try:
            return share(self._almost_lcas()[1])
        finally:
            add_all(self.node, wl.usage)


def almost_lca(node: Node, lca: Node) -> Node:
    below = node
    for ancestor in node.ancestors():
        if ancestor is lca:
            return below
        below = ancestor
    raise AssertionError("no almost-LCA")  # Kueue panics: the trees are the same


class Ordering:
    """``TargetClusterQueueOrdering`` over ``candidates`` (already in CandidatesOrdering order)."""

    def __init__(
        self,
        preemptor: Node,
        candidates: list[Workload],
        node_of: Callable[[Workload], Node],
        key: CandidateKey,
    ) -> None:
        self.preemptor = preemptor
        self.ancestors = set(preemptor.ancestors())
        self.targets: dict[str, list[Workload]] = {}
        for wl in candidates:
            self.targets.setdefault(node_of(wl).name, []).append(wl)
        self.key = key
        self.pruned_queues: set[Node] = set()
        self.pruned_cohorts: set[Node] = set()

    def drop(self, target: TargetQueue) -> None:
        self.pruned_queues.add(target.node)

    def __iter__(self) -> Iterator[TargetQueue]:
        if self.preemptor.parent is None:
            target = TargetQueue(self, self.preemptor)
            while self.preemptor not in self.pruned_queues and target.has_workload():
                yield target
            return
        root = self.preemptor.root()
        while root not in self.pruned_cohorts:
            found = self._next(root)
            if found is not None:
                yield found

    def _has_workload(self, node: Node) -> bool:
        return bool(self.targets.get(node.name))

    def _next(self, cohort: Node) -> TargetQueue | None:
        best_cq: Node | None = None
        best_cq_drs = NEGATIVE
        for cq in cohort.child_cluster_queues():
            if cq in self.pruned_queues:
                continue
            drs = share(cq)
            if (not drs.borrowing and cq is not self.preemptor) or not self._has_workload(cq):
                self.pruned_queues.add(cq)
                continue
            order = compare(drs, best_cq_drs)
            if order == 0 and best_cq is not None:
                if self.key(self.targets[cq.name][0]) < self.key(self.targets[best_cq.name][0]):
                    best_cq = cq
            elif order == 1:
                best_cq, best_cq_drs = cq, drs
        best_cohort: Node | None = None
        best_cohort_drs = NEGATIVE
        for child in cohort.child_cohorts():
            if child in self.pruned_cohorts:
                continue
            drs = share(child)
            if not drs.borrowing and child not in self.ancestors:
                self.pruned_cohorts.add(child)
            elif compare(drs, best_cohort_drs) >= 0:
                best_cohort, best_cohort_drs = child, drs
        if best_cohort is None and best_cq is None:
            self.pruned_cohorts.add(cohort)
            return None
        if compare(best_cohort_drs, best_cq_drs) >= 0:
            assert best_cohort is not None
            return self._next(best_cohort)
        assert best_cq is not None
        return TargetQueue(self, best_cq)
