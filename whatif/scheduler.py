"""One Kueue scheduling cycle, ported from Kueue v0.19.2 ``pkg/scheduler/scheduler.go``.

Upstream (kubernetes-sigs/kueue@v0.19.2): ``schedule`` (one head per ClusterQueue; nominate; order
the entries; process each against a snapshot in which earlier entries' usage is already counted;
requeue the rest; under fair sharing the entries come from the tournament in
``whatif.fairsharing.tournament``), ``nominate``/``getInitialAssignments`` (flavor assignment, then preemption
targets when the mode is Preempt), ``makeClassicalIterator`` (entries that borrow less first, then
higher priority, then older), ``processEntry`` (skip a Preempt entry without targets, reserving
capacity unless ``reclaimWithinCohort: Any`` -- ``reserveCapacityForUnreclaimablePreempt`` /
``resourcesToReserve``; skip overlapping preemption targets; the cohort-wide over-admission check
``fits`` with earlier targets' usage removed; then preempt or admit) and ``requeueAndUpdate``.

Flavor-scan progress (``recordAssignment``, ``getAssignments`` / ``lastAssignmentOutdated``,
``markPreemptionOutcome``): each nomination resumes the workload's previous scan unless it is
outdated, and records the new one; issuing preemptions drops it.  A workload that issues
preemptions becomes its BestEffortFIFO ClusterQueue's sticky head (``whatif.queues``).

Here the snapshot is the live quota tree: an admission adds its usage for good, while a
preempting entry's usage and reserved capacity are added for the rest of the cycle only and
removed at its end.  Victims are evicted when the cycle ends (the preemptor is requeued at once
and admitted by a following cycle at the same instant, as Kueue does once the evictions land).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from whatif.cluster import Cluster, ClusterQueue
from whatif.fairsharing.tournament import fair_order
from whatif.fairsharing.verdicts import Verdicts
from whatif.flavors import Assignment, FlavorAssigner
from whatif.preemption import Preemptor, Target
from whatif.queues import QueueManager
from whatif.tree import FlavorResource, Node, add_all, fits, remove_all
from whatif.workload import Workload


# Made on every nomination and cycle: ``__init__`` written out (``init=False``) because mypyc
# compiles an explicit one but leaves the one ``dataclasses`` generates interpreted (issue 44
# item 3, round 8, whatif/README.md).
@dataclass(init=False)
class Entry:
    workload: Workload
    cq: ClusterQueue
    assignment: Assignment
    targets: list[Target]
    immediate: bool  # requeue into the heap (skipped, or pending preemption)
    done: bool  # admitted (quota reserved)
    reason: str
    evicted: bool  # issued at least one new eviction this cycle
    scan_in: dict[tuple[int, str], int] | None  # the flavor scan it resumed from
    repeated: bool  # not nominated: its verdict is known (``whatif.fairsharing.verdicts``)

    def __init__(
        self,
        workload: Workload,
        cq: ClusterQueue,
        assignment: Assignment,
        targets: list[Target],
        *,
        scan_in: dict[tuple[int, str], int] | None = None,
        repeated: bool = False,
    ) -> None:
        self.workload = workload
        self.cq = cq
        self.assignment = assignment
        self.targets = targets
        self.immediate = False
        self.done = False
        self.reason = ""
        self.evicted = False
        self.scan_in = scan_in
        self.repeated = repeated

    @property
    def node(self) -> Node:
        return self.cq.node

    @property
    def usage(self) -> dict[FlavorResource, int]:
        return self.assignment.usage


ScanState = tuple[object, ...]  # what a quiet cycle can change: every head's scan, the sticky marks


def scan_state(
    scans: list[tuple[str, dict[tuple[int, str], int] | None]], sticky: dict[str, str]
) -> ScanState:
    return (
        tuple(
            sorted((key, tuple(sorted(scan.items())) if scan is not None else None) for key, scan in scans)
        ),
        tuple(sorted(sticky.items())),
    )


@dataclass(init=False)  # ``__init__`` written out: see ``Entry``
class CycleOutcome:
    admitted: list[Entry]
    evictions: list[tuple[Workload, Workload, str]]  # victim, by, reason
    parked: int
    # a quiet cycle (nothing admitted, evicted or parked: every head back in its heap) changes
    # only its heads' flavor scans and the sticky marks; ``before`` / ``after`` are those, so the
    # simulator can tell when Kueue's next cycle would be one it already ran (left empty for a
    # cycle that is not quiet: nothing compares them)
    before: ScanState
    after: ScanState

    def __init__(
        self,
        admitted: list[Entry] | None = None,
        evictions: list[tuple[Workload, Workload, str]] | None = None,
        parked: int = 0,
    ) -> None:
        self.admitted = [] if admitted is None else admitted
        self.evictions = [] if evictions is None else evictions
        self.parked = parked
        self.before = ()
        self.after = ()

    @property
    def quiet(self) -> bool:
        return not (self.admitted or self.evictions or self.parked)


class Scheduler:
    def __init__(
        self,
        cluster: Cluster,
        queues: QueueManager,
        preemptor: Preemptor,
        evicting: set[str],
        on_inadmissible: Callable[[Workload, str], None],
    ) -> None:
        self.cluster = cluster
        self.queues = queues
        self.preemptor = preemptor
        self.assigner = FlavorAssigner(cluster, preemptor)
        self.evicting = evicting  # keys of victims whose eviction is under way
        self.on_inadmissible = on_inadmissible
        self.cycles = 0  # ``schedulingCycle``
        self.nominations = 0  # heads nominated, over all cycles (what a run's cost grows with)
        # the simulator turns it on: a cohort tree whose cycle would repeat exactly is held out of
        # the following cycles until something touches it (``QueueManager.hold`` / ``wake``)
        self.hold_settled = False
        # the simulator sets it: parked heads whose nomination provably repeats are parked again
        # without running it (``whatif.fairsharing.verdicts``)
        self.verdicts: Verdicts | None = None

    def _scan_outdated(self, wl: Workload, cq: ClusterQueue) -> bool:
        """``lastAssignmentOutdated`` with ``FlavorFungibilityPreserveScanProgress`` (on by default
        in v0.19.2): kept when made in this or the previous cycle, else dropped once the
        ClusterQueue's ``AllocatableResourceGeneration`` moved -- the snapshot's copy of the
        queue's own counter (``snapshot.go`` ``snapshotClusterQueue``), which moves when one of
        its own workloads is admitted, evicted or released (``clusterqueue.go``
        ``deleteWorkload``), not on the other queues of its cohort."""
        if self.cycles - wl.last_scan_cycle <= 1:
            return False
        return cq.node.allocatable_generation > wl.last_scan_generation

    def idle_until_next_instant(self) -> None:
        """The clock moves on to the next event.  ``schedule`` numbers every call
        (``schedulingCycle++``) and a call whose ``Heads`` finds every heap empty blocks until a
        head arrives, so an idle scheduler's next cycle is the next number; but while a head sits
        in a heap (a StrictFIFO head, a preemptor waiting for its victims, a held tree) Kueue
        keeps cycling, at most ``maxBackoff`` = 10 ms apart (``pkg/util/wait/backoff.go``), so by
        the next instant the scans recorded before it are more than one cycle old -- except the
        held heads', which those cycles nominated again (``QueueManager.wake``)."""
        if self.queues.active or self.queues.held:
            self.cycles += 2
            self.queues.cycle = self.cycles

    def _nominate(self, wl: Workload) -> Entry:
        assert wl.cluster_queue is not None
        cq = self.cluster.cluster_queues[wl.cluster_queue]
        if wl.last_scan is not None and self._scan_outdated(wl, cq):
            wl.last_scan = None
        scan_in = wl.last_scan
        self.nominations += 1
        verdicts = self.verdicts
        if verdicts is not None:
            root = self.queues.root_of[cq.name]
            known = verdicts.repeats(wl, cq, root)
            if known is not None:  # what the nomination would record and return, not run
                # shared, not copied: no scan record is changed in place once made (each
                # nomination makes a new one), as the nominated path below shares its own
                wl.last_scan = known.tried
                wl.last_scan_cycle = self.cycles
                wl.last_scan_generation = cq.node.allocatable_generation
                return Entry(wl, cq, known, [], scan_in=scan_in, repeated=True)
        assignment = self.assigner.assign(wl, cq, wl.last_scan)
        # ``recordAssignment``: the next attempt resumes from this scan
        wl.last_scan = assignment.tried
        wl.last_scan_cycle = self.cycles
        wl.last_scan_generation = cq.node.allocatable_generation
        targets: list[Target] = []
        if assignment.mode == "Preempt":
            targets = self.preemptor.targets(wl, cq, assignment.needs_preemption(), assignment.usage)
        if verdicts is not None:
            verdicts.nominated(wl, cq, self.queues.root_of[cq.name], assignment, len(targets))
        return Entry(wl, cq, assignment, targets, scan_in=scan_in)

    @staticmethod
    def _reserve(entry: Entry) -> dict[FlavorResource, int]:
        """``quotaResourcesToReserve``: what an unreclaimable Preempt entry holds for the cycle."""
        node = entry.cq.node
        reserved: dict[FlavorResource, int] = {}
        for fr, usage in entry.assignment.usage.items():
            quota = node.quotas.get(fr)
            nominal = quota.nominal if quota else 0
            used = node.usage.get(fr, 0)
            if entry.assignment.borrowing > 0:
                limit = quota.borrowing_limit if quota else None
                reserved[fr] = usage if limit is None else min(usage, nominal + limit - used)
            else:
                reserved[fr] = max(0, min(usage, nominal - used))
        return reserved

    def cycle(self) -> CycleOutcome:
        outcome = CycleOutcome()
        heads = self.queues.heads(self.cycles + 1)
        if not heads:
            if self.queues.held:  # held heads are in their heaps: Kueue nominates them again
                self.cycles += 1
            # else ``Heads`` blocks: this call's number goes to the cycle that next finds a head
            self.queues.cycle = self.cycles
            return outcome
        self.cycles += 1
        sticky = dict(self.queues.sticky)
        self.preemptor.memo = {}
        try:
            entries = [self._nominate(wl) for wl in heads]
        finally:
            self.preemptor.memo = None
        preempted: dict[str, Workload] = {}
        temporary: list[tuple[ClusterQueue, dict[FlavorResource, int]]] = []
        for e in entries:  # Preempt without targets: skipped by ``processEntry``, wherever it comes
            if e.repeated:
                self._process(e, preempted, temporary, outcome)
        for e in self._ordered([e for e in entries if not e.repeated]):
            self._process(e, preempted, temporary, outcome)
        for cq, usage in reversed(temporary):
            remove_all(cq.node, usage)
        for e in entries:
            if e.done:
                continue
            wl = e.workload
            pending = wl.last_scan is not None and any(i != -1 for i in wl.last_scan.values())
            if not e.immediate:
                self.on_inadmissible(wl, e.reason or "; ".join(e.assignment.reasons[:2]))
                if not pending and e.cq.strategy != "StrictFIFO":
                    outcome.parked += 1
            self.queues.requeue(wl, e.immediate or pending)
        if outcome.quiet:  # only a quiet cycle's states are compared (``Simulation._settle``)
            outcome.before = scan_state([(e.workload.key, e.scan_in) for e in entries], sticky)
            outcome.after = scan_state(
                [(e.workload.key, e.workload.last_scan) for e in entries], self.queues.sticky
            )
        if self.hold_settled:
            self._hold_settled(entries)
        return outcome

    def _hold_settled(self, entries: list[Entry]) -> None:
        """Hold the cohort trees whose cycle changed nothing and would repeat exactly.

        A tree's entries interact only with each other (quota, victims and the fair-sharing
        tournament are per root cohort).  When none was admitted, issued a new eviction, was
        parked or sent back to resume its scan, every head is back at its queue's head, and each
        resumed the scan it recorded (``scan_in`` == ``last_scan``), the next cycle would see the
        same tree, the same heads and the same scans, and do the same -- until an event touches
        the tree.  Skipping those cycles changes no outcome and saves their nominations."""
        trees: dict[Node, list[Entry]] = {}
        for e in entries:
            trees.setdefault(self.queues.root_of[e.cq.name], []).append(e)
        for root, group in trees.items():
            if all(self._repeats(e) for e in group):
                self.queues.hold(root, [e.workload for e in group])

    @staticmethod
    def _repeats(e: Entry) -> bool:
        if e.done or e.evicted or e.workload.last_scan != e.scan_in:
            return False
        if e.immediate:
            return True
        pending = e.workload.last_scan is not None and any(i != -1 for i in e.workload.last_scan.values())
        return e.cq.strategy == "StrictFIFO" and not pending

    def _ordered(self, entries: list[Entry]) -> Iterator[Entry]:
        """``makeIterator``: the fair-sharing tournament, or the classical order.  Most cycles of
        a long run nominate one head outside the verdicts (issue 44 item 3, round 10): one entry
        or none is its own order either way, without the tournament's setup."""
        if len(entries) <= 1:
            yield from entries
            return
        if self.cluster.fair_sharing is not None:
            for e in fair_order(list(entries)):
                assert isinstance(e, Entry)
                yield e
            return
        yield from sorted(
            entries, key=lambda e: (e.assignment.borrowing, -e.workload.priority, e.workload.seq)
        )

    def _process(
        self,
        e: Entry,
        preempted: dict[str, Workload],
        temporary: list[tuple[ClusterQueue, dict[FlavorResource, int]]],
        outcome: CycleOutcome,
    ) -> None:
        mode = e.assignment.mode
        if mode == "NoFit":
            e.reason = "; ".join(e.assignment.reasons[:2]) or "does not fit"
            return
        if mode == "Preempt" and not e.targets:
            e.reason = "waiting for quota: no preemption candidates"
            if e.cq.preemption.reclaim_within_cohort != "Any":
                reserve = self._reserve(e)
                add_all(e.cq.node, reserve)
                temporary.append((e.cq, reserve))
            return
        if any(t.workload.key in preempted for t in e.targets):
            e.immediate = True
            return
        # fits(): the usage of every victim chosen so far in this cycle, plus ours, removed
        victims = dict(preempted)
        victims.update({t.workload.key: t.workload for t in e.targets})
        for v in victims.values():
            self.preemptor.remove_workload(v)
        ok = fits(e.cq.node, e.assignment.usage)
        for v in victims.values():
            self.preemptor.add_workload(v)
        if not ok:
            e.immediate = True
            return
        preempted.update({t.workload.key: t.workload for t in e.targets})
        if mode == "Preempt":
            add_all(e.cq.node, e.assignment.usage)
            temporary.append((e.cq, dict(e.assignment.usage)))
            e.immediate = True  # RequeueReasonPendingPreemption
            e.workload.last_scan = None  # ``markPreemptionOutcome``: rescan every flavor
            self.queues.set_preemptor(e.workload)
            for t in e.targets:
                if t.workload.key not in self.evicting:
                    e.evicted = True
                    outcome.evictions.append((t.workload, e.workload, t.reason))
            return
        add_all(e.cq.node, e.assignment.usage)
        e.done = True
        outcome.admitted.append(e)
