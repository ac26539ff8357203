"""Fair-sharing preemption, ported from Kueue v0.19.2.

Upstream: kubernetes-sigs/kueue@v0.19.2 ``pkg/scheduler/preemption/preemption.go``:
``fairPreemptions`` (candidates from ``findCandidates`` -- the preemptor's own ClusterQueue under
withinClusterQueue, and every ClusterQueue of the root cohort's tree that borrows a
FlavorResource needing preemption under reclaimWithinCohort -- in ``CandidatesOrdering``; the
preemptor's usage is added for the share computations), ``runFirstFsStrategy`` (own-queue
candidates are taken as they come; while the preemptor's ClusterQueue stays within nominal quota
on the contested resources -- gate ``FairSharingPreemptWithinNominal``, on by default -- other
queues' candidates are taken as reclamation; otherwise a candidate is taken when the first
strategy holds, and the ordering is consulted again after each one; ``fsStrategyUnsatisfiable``
skips a queue no candidate of which can pass), ``runSecondFsStrategy`` (rule S2-b: one candidate
per queue when the preemptor's new share is below the target's old one), ``fillBackWorkloads``
with borrowing allowed; ``fairsharing/strategy.go`` (``LessThanOrEqualToFinalShare``,
``LessThanInitialShare``).  Preemption reasons: InClusterQueue, InCohortReclamation,
InCohortFairSharing.  ``borrowWithinCohort`` does not apply under fair sharing.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from whatif.fairsharing.ordering import Ordering, almost_lca
from whatif.fairsharing.share import DRS, compare, share
from whatif.preemption import Preemptor
from whatif.tree import FlavorResource, Node, add_all, cq_available, remove_all
from whatif.workload import Workload

if TYPE_CHECKING:
    from whatif.cluster import ClusterQueue

IN_CLUSTER_QUEUE = "InClusterQueue"
RECLAMATION = "InCohortReclamation"
FAIR_SHARING = "InCohortFairSharing"

Strategy = Callable[[DRS, DRS, DRS], bool]


def less_than_or_equal_to_final_share(preemptor_new: DRS, _target_old: DRS, target_new: DRS) -> bool:
    return compare(preemptor_new, target_new) <= 0


def less_than_initial_share(preemptor_new: DRS, target_old: DRS, _target_new: DRS) -> bool:
    return compare(preemptor_new, target_old) < 0


STRATEGIES: dict[str, Strategy] = {
    "LessThanOrEqualToFinalShare": less_than_or_equal_to_final_share,
    "LessThanInitialShare": less_than_initial_share,
}

Picked = list[tuple[Workload, str]]


def _uses(usage: dict[FlavorResource, int], frs: list[FlavorResource]) -> bool:
    """``usage`` has some FlavorResource of ``frs`` (``not frs.isdisjoint(usage)``, as a loop
    mypyc compiles inline: the method call cost more than the test -- issue 44 item 3, round 9)."""
    return any(fr in usage for fr in frs)


class FairPreemption:
    """One ``fairPreemptions`` call; every removal from the quota tree is restored."""

    def __init__(
        self,
        preemptor: Preemptor,
        wl: Workload,
        cq: ClusterQueue,
        frs: set[FlavorResource],
        requests: dict[FlavorResource, int],
    ) -> None:
        self.p = preemptor
        self.wl = wl
        self.cq = cq
        self.frs = frs
        self.requests = requests
        # the bound (``_hopeless``) and the search list the same queues and candidates, and
        # neither changes the tree in between (the bound restores what it adds): listed once
        self._listed: dict[str, list[Workload]] = {}
        self._fr_list = list(frs)  # ``_uses``: a list, which compiled code walks by index
        self._borrowing: list[Node] | None = None

    def _candidates(self) -> list[Workload]:
        out = list(self._own())
        for other in self._borrowing_queues():
            out += self._of(other)
        return out

    def _own(self) -> list[Workload]:
        """Candidates of the preemptor's own ClusterQueue (withinClusterQueue)."""
        policy = self.cq.preemption.within_cluster_queue
        return [] if policy == "Never" else self._of(self.cq.node, policy)

    def _borrowing_queues(self) -> list[Node]:
        """Other ClusterQueues of the tree borrowing a contested resource (reclaimWithinCohort)."""
        if self._borrowing is None:
            node = self.cq.node
            if node.parent is None or self.cq.preemption.reclaim_within_cohort == "Never":
                self._borrowing = []
            else:
                self._borrowing = [q for q in self.p.borrowing_queues(node.root(), self.frs) if q is not node]
        return self._borrowing

    def _of(self, queue: Node, policy: str | None = None) -> list[Workload]:
        """``queue``'s running workloads using a contested resource that ``policy`` lets go
        (kept for the rest of this search: callers do not change the list)."""
        found = self._listed.get(queue.name)
        if found is None:
            policy = policy or self.cq.preemption.reclaim_within_cohort
            frs, wl = self._fr_list, self.wl
            # ``Preemptor.satisfies`` named through the class: compiled, a direct call (through a
            # local bound to ``self.p.satisfies`` it was a Python call per candidate)
            found = self._listed[queue.name] = [
                w
                for w in self.p.running.get(queue.name, {}).values()
                if _uses(w.usage, frs) and Preemptor.satisfies(wl, w, policy)
            ]
        return found

    def _fits(self) -> bool:
        """``workloadFitsForFairSharing``: the preemptor's simulated usage taken out first."""
        remove_all(self.cq.node, self.requests)
        try:
            return self.p.fits_after_removal(self.cq, self.requests, True)
        finally:
            add_all(self.cq.node, self.requests)

    def _within_nominal(self) -> bool:
        return not any(self.cq.node.borrowing_with(fr, 0) for fr in self.frs)

    def _take(self, w: Workload, reason: str, picked: Picked) -> bool:
        self.p.remove_workload(w)
        picked.append((w, reason))
        return self._fits()

    def _first(self, candidates: list[Workload], strategy: Strategy) -> tuple[bool, Picked, list[Workload]]:
        ordering = Ordering(self.cq.node, candidates, self.p.node_of, self.p.candidate_key(self.cq))
        picked: Picked = []
        retry: list[Workload] = []
        within_nominal = self._within_nominal()
        for target in ordering:
            if target.in_cluster_queue:
                if self._take(target.pop(), IN_CLUSTER_QUEUE, picked):
                    return True, picked, []
                continue
            if within_nominal:
                if self._take(target.pop(), RECLAMATION, picked):
                    return True, picked, []
                continue
            preemptor_new, target_old = target.shares()
            if math.isinf(preemptor_new.precise()) and not math.isinf(target_old.precise()):
                while target.has_workload():  # fsStrategyUnsatisfiable
                    retry.append(target.pop())
                continue
            while target.has_workload():
                w = target.pop()
                if strategy(preemptor_new, target_old, target.share_after_removal(w)):
                    if self._take(w, FAIR_SHARING, picked):
                        return True, picked, []
                    break  # the shares changed: ask the ordering again
                retry.append(w)
        return False, picked, retry

    def _second(self, retry: list[Workload], picked: Picked) -> bool:
        ordering = Ordering(self.cq.node, retry, self.p.node_of, self.p.candidate_key(self.cq))
        for target in ordering:
            preemptor_new, target_old = target.shares()
            w = target.pop()
            if less_than_initial_share(preemptor_new, target_old, target_old) and self._take(
                w, FAIR_SHARING, picked
            ):
                return True
            ordering.drop(target)
        return False

    def _hopeless(self, strategies: tuple[str, ...]) -> bool:
        """True when no run of the strategies can free enough: ``could_fit`` over the candidates
        some strategy could ever take fails (shares taken with the request admitted).

        Own-queue candidates are always taken, and while the preemptor stays within nominal every
        other queue's too (then this says nothing).  Otherwise a candidate ``w`` of another queue
        needs the preemptor's new share at most the target side's share after removing ``w``
        (``LessThanOrEqualToFinalShare``) or below the target side's share
        (``LessThanInitialShare``, also rule S2-b).  Shares only fall as candidates are removed,
        so the preemptor's side is never below its share with every own-queue candidate removed
        (``less``), and the target side never above its share now (without ``w`` when the side
        is the queue itself); a candidate that fails both bounds can never be taken, and a queue
        whose share now is below the bound is skipped whole.  When this says yes, the full
        search would return no targets.

        In a cohort without parents above it the preemptor's side is its own ClusterQueue, whose
        share with the request added is its share with the request taken off ``less``: the tree
        is not touched.  Deeper, the request is added for the bound and removed again."""
        node = self.cq.node
        self._borrowing_queues()  # listed before the request is added: committed usage only
        if node.parent is not None and node.parent.parent is not None:
            add_all(node, self.requests)
            try:
                return self._hopeless_with(strategies, {}, in_tree=True)
            finally:
                remove_all(node, self.requests)
        return self._hopeless_with(strategies, {fr: -v for fr, v in self.requests.items()}, in_tree=False)

    def _hopeless_with(
        self, strategies: tuple[str, ...], less: dict[FlavorResource, int], *, in_tree: bool
    ) -> bool:
        """``_hopeless`` with the request added to the tree, or (flat) as negative ``less``."""
        node = self.cq.node
        if not any(node.borrowing_with(fr, -less.get(fr, 0)) for fr in self.frs):
            return False  # within nominal: every candidate may be taken
        requests = self.requests
        freed: dict[FlavorResource, int] = {}  # what the takeable candidates hold of the request
        for w in self._own():
            for fr, v in w.usage.items():
                less[fr] = less.get(fr, 0) + v
                if fr in requests:
                    freed[fr] = freed.get(fr, 0) + v
        ancestors: set[Node] | None = None
        p_min: dict[Node, DRS] = {}
        final_share = any(s != "LessThanInitialShare" for s in strategies)
        flat = node.parent is not None and node.parent.parent is None
        # for ``verdicts`` (one FlavorResource asked): what the own queue and each other queue
        # count of it
        one = next(iter(requests)) if len(requests) == 1 and self.p.verdicts is not None else None
        own = freed.get(one, 0) if one is not None else 0
        counted: dict[str, int] = {}
        for target in self._borrowing_queues():
            if flat and target.parent is node.parent:  # siblings under the root: the queues
                p_side, t_side = node, target
            else:
                if ancestors is None:
                    ancestors = set(node.ancestors())
                lca = next(a for a in target.ancestors() if a in ancestors)
                p_side, t_side = almost_lca(node, lca), almost_lca(target, lca)
            if p_side not in p_min:
                p_min[p_side] = share(p_side, less)
            low = p_min[p_side]
            order = compare(low, share(t_side))
            if order < 0:  # LessThanInitialShare may take any of them
                ws = self._of(target)
            elif order == 0 and final_share:
                ws = self._of(target)
                if t_side is target:
                    ws = [w for w in ws if compare(low, share(target, w.usage)) <= 0]
            else:
                continue
            before = freed.get(one, 0) if one is not None else 0
            for w in ws:
                for fr, v in w.usage.items():
                    if fr in requests:
                        freed[fr] = freed.get(fr, 0) + v
            if one is not None:
                counted[target.name] = freed.get(one, 0) - before
        if in_tree:
            remove_all(node, requests)
        try:  # ``could_fit`` over the takeable candidates, from their usage summed above
            hopeless = any(cq_available(node, fr) + freed.get(fr, 0) < val for fr, val in requests.items())
        finally:
            if in_tree:
                add_all(node, requests)
        if hopeless and one is not None and flat and self.p.verdicts is not None:
            self.p.verdicts.bound(
                self.wl, node, fr=one, request=requests[one], own=own, counted=counted, low=p_min.get(node)
            )
        return hopeless

    def targets(self, strategies: tuple[str, ...]) -> Picked:
        if self._hopeless(strategies):
            return []
        candidates = self._candidates()
        if not candidates or not self.p.could_fit(self.cq, self.requests, candidates):
            return []
        add_all(self.cq.node, self.requests)
        try:
            candidates.sort(key=self.p.candidate_key(self.cq))
            fits, picked, retry = self._first(candidates, STRATEGIES[strategies[0]])
            if not fits and len(strategies) > 1:
                fits = self._second(retry, picked)
        finally:
            remove_all(self.cq.node, self.requests)
        if not fits:
            for w, _ in picked:
                self.p.add_workload(w)
            return []
        kept = self.p.fill_back(self.cq, self.requests, True, picked, lambda item: item[0])
        for w, _ in kept:
            self.p.add_workload(w)
        return kept
