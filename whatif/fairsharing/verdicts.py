"""Parked verdicts that provably repeat: the simulator's own shortcut, no Kueue counterpart.

Kueue v0.19.2 moves every parked workload of a cohort tree back to its heap on each release of
quota there (kubernetes-sigs/kueue@v0.19.2 ``pkg/cache/queue/manager.go``
``QueueAssociatedInadmissibleWorkloadsAfter`` -> ``cluster_queue.go``
``queueInadmissibleWorkloads``) and ``pkg/scheduler/scheduler.go`` ``schedule`` nominates each
head again.  On an overloaded trace most of those nominations end as before: flavor assignment
finds the request above what is available and asks the preemption oracle
(``flavorassigner/flavorassigner.go`` ``fitsResourceQuota`` -> ``preemption_oracle.go``
``SimulatePreemption`` -> ``preemption.go`` ``fairPreemptions``), which finds no targets; the
mode is Preempt without targets, ``processEntry`` skips the entry ("no preemption candidates";
with ``reclaimWithinCohort: Any`` nothing is reserved, ``reserveCapacityForUnreclaimablePreempt``)
and ``requeueAndUpdate`` parks it again.

Here such a nomination is not run when its verdict is known to be the same.  The proof rests on
the fair-preemption bound (``whatif.fairsharing.preemption.FairPreemption._hopeless``): while
the preemptor's ClusterQueue ``C`` borrows with the request, the search finds no targets when
what is available to ``C`` plus what the candidates some strategy could ever take hold is below
the request -- ``C``'s own candidates (``withinClusterQueue``), and those of each other queue
that borrows and whose share is not below ``low`` (``C``'s share with the request and without
its own candidates).  The bound records its figures: ``own``, what it ``counted`` per other
queue, and ``low``.  Every admission and release of the tree is logged after it.  Then, in a
cohort whose children are all ClusterQueues, with ``reclaimWithinCohort: Any`` (every running
workload of a borrowing queue using the resource is a candidate), the bound redone now takes at
most:

- from ``C``: ``own`` plus the own candidates admitted since, minus those released (``low`` is
  unchanged by them; another workload admitted only raises ``low``, and one released -- which
  would lower it -- drops the verdict);
- from a queue with no admission since: at most what it counted then (its share only fell,
  ``dominantResourceShare`` grows with usage, and ``low`` did not fall, so the candidates passing
  the share tests are a subset of before), and at most its usage now;
- from a queue with an admission since: nothing when it does not borrow now or its share is
  still below the recorded ``low`` (``low`` now is not below it), else at most its usage now;

and what is available to ``C`` is computed now (``cq_available``).  When that sum is below the
request and ``C`` still borrows with it, the bound holds, the search returns no targets, the
request is above what is available (not Fit) and the nomination is the one recorded -- Preempt
without targets, the same flavor scan (one pod set, nothing pending).  Such an entry changes
nothing in the cycle (no quota, no victims; under fair sharing ``fair_sharing_iterator.go``'s
tournament picks the best remaining entry by its own share, priority and age, so an entry that
is skipped when popped changes no other entry's turn), so it is parked without running the
nomination, and the figures of the bound redone become the verdict's.  Every move of the root's
generation must be a logged admission or release, else the verdict is not carried.

A verdict the log cannot carry (an admission into a queue whose share is above ``low``, a
release in ``C``, a move not logged) is not dropped at once: the bound itself is redone in full on
the tree now (``Preemptor.hopeless``, ``FairPreemption._hopeless`` for the recorded request, as the
nomination's search would run it first); when it holds, the nomination is again the recorded one
by the argument above, its figures become the verdict's, and the nomination is not run either
(issue 44 item 3, round 10).
``tests/whatif/test_overloaded_trace_events.py`` compares every event with the long way.
"""

from __future__ import annotations

from dataclasses import dataclass

from whatif.cluster import Cluster, ClusterQueue
from whatif.dicts import take
from whatif.fairsharing.share import DRS, compare, share
from whatif.flavors import Assignment
from whatif.preemption import Preemptor
from whatif.tree import FlavorResource, Node, cq_available
from whatif.workload import Workload


# Records made on every hopeless nomination and every admission or release: their ``__init__`` is
# written out (``init=False``) because mypyc compiles an explicit one but leaves the one
# ``dataclasses`` generates interpreted (round 8 of issue 44 item 3, whatif/README.md).  Never
# changed after construction.
@dataclass(init=False, slots=True)
class _Bound:
    generation: int  # the root's, when the bound was computed
    fr: FlavorResource
    request: int
    own: int  # what the preemptor's own candidates hold of ``fr``
    counted: dict[str, int]  # other queue -> what its candidates counted hold of ``fr``
    low: DRS | None  # the preemptor's queue's share with the request, without its candidates

    def __init__(
        self,
        generation: int,
        fr: FlavorResource,
        request: int,
        *,
        own: int,
        counted: dict[str, int],
        low: DRS | None,
    ) -> None:
        self.generation = generation
        self.fr = fr
        self.request = request
        self.own = own
        self.counted = counted
        self.low = low


@dataclass(init=False, slots=True)
class _Verdict:
    bound: _Bound
    logged: int  # the tree's log length then
    assignment: Assignment

    def __init__(self, bound: _Bound, logged: int, assignment: Assignment) -> None:
        self.bound = bound
        self.logged = logged
        self.assignment = assignment


@dataclass(init=False, slots=True)
class _Change:
    admitted: bool  # else released
    queue: str
    workload: Workload
    amount: dict[FlavorResource, int]

    def __init__(
        self, admitted: bool, queue: str, workload: Workload, amount: dict[FlavorResource, int]
    ) -> None:
        self.admitted = admitted
        self.queue = queue
        self.workload = workload
        self.amount = amount


class Verdicts:
    """The last hopeless verdict of each parked workload, and each tree's quota changes since."""

    def __init__(self, cluster: Cluster, preemptor: Preemptor | None = None) -> None:
        self.cluster = cluster
        # when set: a verdict the log cannot carry is checked against the bound itself (``_exact``)
        self.preemptor = preemptor
        self._bounds: dict[str, _Bound] = {}
        self._kept: dict[str, _Verdict] = {}
        self._log: dict[Node, list[_Change]] = {}  # root -> its admissions and releases
        self._flat: dict[Node, bool] = {}  # root -> its children are all ClusterQueues
        self.repeated = 0  # nominations not run, their verdict known
        self.rechecked = 0  # of those, the ones whose verdict the bound redone in full gave

    def changed(self, root: Node, wl: Workload, *, admitted: bool) -> None:
        """``wl`` (its usage still set) was admitted into or released from ``root``'s tree: call
        once per move of the root's generation."""
        assert wl.cluster_queue is not None
        self._log.setdefault(root, []).append(_Change(admitted, wl.cluster_queue, wl, dict(wl.usage)))

    def bound(
        self,
        wl: Workload,
        node: Node,
        *,
        fr: FlavorResource,
        request: int,
        own: int,
        counted: dict[str, int],
        low: DRS | None,
    ) -> None:
        """The fair-preemption bound found ``wl``'s one-FlavorResource request hopeless; ``node``
        (its ClusterQueue's) is directly under the root."""
        assert node.parent is not None
        self._bounds[wl.key] = _Bound(node.parent.generation, fr, request, own=own, counted=counted, low=low)

    def nominated(
        self, wl: Workload, cq: ClusterQueue, root: Node, assignment: Assignment, targets: int
    ) -> None:
        """After a nomination: keep its verdict when it is one this module can carry forward."""
        take(self._kept, wl.key)
        found = take(self._bounds, wl.key)
        if found is None or found.generation != root.generation or targets or assignment.mode != "Preempt":
            return
        usage = assignment.usage  # ``== {found.fr: found.request}``, without a dict per nomination
        if len(usage) != 1 or usage.get(found.fr) != found.request or assignment.pending_flavors():
            return
        if len(wl.pod_sets) != 1 or cq.preemption.reclaim_within_cohort != "Any":
            return
        if cq.strategy != "BestEffortFIFO" or cq.node.parent is not root or not self._is_flat(root):
            return
        self._kept[wl.key] = _Verdict(found, len(self._log.get(root, ())), assignment)

    def _is_flat(self, root: Node) -> bool:
        flat = self._flat.get(root)
        if flat is None:
            flat = self._flat[root] = all(c.is_cluster_queue for c in root.children)
        return flat

    def repeats(self, wl: Workload, cq: ClusterQueue, root: Node) -> Assignment | None:
        """The recorded assignment when nominating ``wl`` now would give it again (no targets)."""
        kept = self._kept.get(wl.key)
        if kept is None:
            return None
        bound = kept.bound
        if not cq.node.borrowing_with(bound.fr, bound.request):
            return None  # within nominal with the request: the bound says nothing
        log = self._log.get(root, [])
        carried = self._carried(wl, cq, root, kept, log)
        if carried is None:
            carried = self._exact(wl, cq, root, bound)
            if carried is None:
                return None
            self.rechecked += 1
        self.repeated += 1
        # the bound holds now with these figures: later checks start from here (a short log)
        self._kept[wl.key] = _Verdict(carried, len(log), kept.assignment)
        return kept.assignment

    def _exact(self, wl: Workload, cq: ClusterQueue, root: Node, bound: _Bound) -> _Bound | None:
        """The bound redone in full on the tree now, when the log could not carry it (issue 44
        item 3, round 10): the fair-preemption bound itself (``FairPreemption._hopeless``, which
        records its figures here through ``bound``), run for the one request the verdict was
        made for, as the nomination's own search would run it first.  When it holds, that search
        returns no targets and, as for a carried verdict, the nomination is the recorded one;
        its figures become the verdict's.  A request within what is available now would be Fit:
        no bound is run for it."""
        if self.preemptor is None or bound.request <= cq_available(cq.node, bound.fr):
            return None
        take(self._bounds, wl.key)
        if not self.preemptor.hopeless(wl, cq, bound.fr, bound.request):
            return None
        found = take(self._bounds, wl.key)
        if found is None or found.generation != root.generation:
            return None
        return found

    def _carried(
        self, wl: Workload, cq: ClusterQueue, root: Node, kept: _Verdict, log: list[_Change]
    ) -> _Bound | None:
        """The kept bound carried through the tree's admissions and releases logged since (the
        module docstring): its figures now, or None when the log cannot show it still holds."""
        bound = kept.bound
        if root.generation - bound.generation != len(log) - kept.logged:
            return None  # something not logged changed the tree
        fr, node = bound.fr, cq.node
        within = cq.preemption.within_cluster_queue
        own = bound.own
        admitted: set[str] = set()
        for change in log[kept.logged :]:
            if change.queue != cq.name:
                if change.admitted:
                    admitted.add(change.queue)
                continue
            amount = change.amount.get(fr, 0)
            if amount > 0 and within != "Never" and Preemptor.satisfies(wl, change.workload, within):
                own += amount if change.admitted else -amount
            elif not change.admitted:
                return None  # the preemptor's share without its candidates fell
        total = cq_available(node, fr) + own
        queues = self.cluster.cluster_queues
        counted: dict[str, int] = {}  # upper bounds of what each queue would count now
        for name in admitted.union(bound.counted):
            other = queues[name].node
            if not other.borrowing_with(fr, 0):
                continue  # not a candidate queue now
            now = other.usage.get(fr, 0)
            if name not in admitted:
                now = min(now, bound.counted[name])
            elif bound.low is not None and compare(bound.low, share(other)) > 0:
                continue  # its share is below the preemptor's: no strategy takes from it
            counted[name] = now
            total += counted[name]
            if total >= bound.request:
                return None
        if total >= bound.request:
            return None
        return _Bound(root.generation, fr, bound.request, own=own, counted=counted, low=bound.low)
