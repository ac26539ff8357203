"""Per-ClusterQueue pending queues, ported from Kueue v0.19.2 ``pkg/cache/queue``.

Upstream (kubernetes-sigs/kueue@v0.19.2): ``cluster_queue.go`` keeps a heap of pending workloads
ordered by priority, then queue-order timestamp (creation time; ``pkg/workload/ordering.go``),
plus a set of inadmissible workloads; ``Pop`` gives the head; ``requeueIfNotPresent`` puts a
workload back in the heap when ``immediate`` and in the inadmissible set otherwise.
``cluster_queue_strict_fifo.go`` / ``cluster_queue_best_effort_fifo.go``: StrictFIFO always
requeues into the heap (the head blocks the queue); BestEffortFIFO requeues into the heap only
after a nomination failure or pending preemption, and parks other failures until
``QueueInadmissibleWorkloads`` moves them back when quota is freed in the cohort
(``manager.go``: on workload deletion or finish, for every ClusterQueue of the cohort tree).
A requeued workload whose flavor scan has flavors left (``LastAssignment.PendingFlavors``) goes
back into the heap (``requeueIfNotPresent``).  Sticky preemptor heads (``preemptorWorkload``,
``baseCompareFunc``): a workload requeued with ``RequeueReasonPendingPreemption`` in a
BestEffortFIFO ClusterQueue sorts before every other until it leaves the queue (admitted or
deleted) or another workload of that queue issues preemptions.

Scheduling equivalence (gate ``SchedulingEquivalenceHashing``, on by default in v0.19.2;
``cluster_queue.go`` ``requeueIfNotPresent`` / ``handleInadmissibleHash``, ``PushOrUpdate``,
``queueInadmissibleWorkloads``; the shape is ``pkg/workload/workload.go``
``computeSchedulingHash``: priority and every pod set's name, pod spec, count and requests): in a
BestEffortFIFO ClusterQueue a head parked for NoFit or for no preemption candidates takes the
heap's workloads of its shape to the parked set with it, and until the requeuer's next move of
the queue a workload of that shape put in the queue from outside (an arrival, a released
victim, a retry after back-off: ``push_new``) is parked at once; the scheduler's own requeues
are not checked.  Not applied to usage-based (admission fair sharing) ClusterQueues here.

Admission fair sharing (``queueOrderingFunc``): a usage-based ClusterQueue keeps one heap per
LocalQueue and its head goes by LocalQueue usage first (:mod:`whatif.admission_fair_sharing`).

Held trees (the simulator's own bookkeeping, no Kueue counterpart): Kueue pops every head again
each cycle; when a cohort tree's last cycle changed nothing and would repeat exactly (see
``whatif.scheduler.Scheduler.hold_settled``), its ClusterQueues are held out of ``heads`` until
something touches the tree -- a push, a sticky change or (from the simulator) a quota change.
``wake`` then stamps its heads as nominated in the last cycle, as the skipped cycles would have.
"""

from __future__ import annotations

import heapq

from whatif.admission_fair_sharing.heads import LocalQueueHeaps
from whatif.cluster import Cluster
from whatif.dicts import take
from whatif.tree import Node, subtree_cluster_queues
from whatif.workload import Workload


class QueueManager:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.heaps: dict[str, list[tuple[int, int, Workload]]] = {name: [] for name in cluster.cluster_queues}
        self.inadmissible: dict[str, dict[str, Workload]] = {name: {} for name in cluster.cluster_queues}
        self.members: dict[Node, list[tuple[set[int], dict[str, Workload]]]] = {}  # ``_tree``
        self.active: set[str] = set()  # ClusterQueues with a non-empty heap: heads() never scans all
        self.sticky: dict[str, str] = {}  # ClusterQueue -> key of its sticky preemptor
        self.sticky_slot: dict[str, Workload] = {}  # the sticky preemptor while it is queued
        self.root_of = {name: cq.node.root() for name, cq in cluster.cluster_queues.items()}
        # root cohort -> (its ClusterQueues held out of ``active``, their heads, each head's
        # ClusterQueue's ``AllocatableResourceGeneration`` then)
        self.held: dict[Node, tuple[list[str], list[Workload], list[int]]] = {}
        self.cycle = 0  # the last scheduling cycle whose heads were taken
        afs = cluster.admission_fair_sharing
        # usage-based ClusterQueues (admission fair sharing): a heap per LocalQueue instead
        self.by_usage = {n: LocalQueueHeaps(afs) for n in cluster.cluster_queues if afs and afs.takes_part(n)}
        self._afs_seen = afs.version if afs is not None else 0
        # ``hashToBulkMoveReason``: per ClusterQueue, the shapes parked since its last requeue
        # (``Workload.shape_id``: one number per shape)
        self.bulk: dict[str, set[int]] = {name: set() for name in cluster.cluster_queues}

    def _heap_push(self, cq: str, wl: Workload) -> None:
        lq_heaps = self.by_usage.get(cq)
        if lq_heaps is not None:
            lq_heaps.push(wl)
        else:
            heapq.heappush(self.heaps[cq], (-wl.priority, wl.seq, wl))

    def advance(self, now: float) -> None:
        """The clock moved to ``now`` (before its events): admission fair sharing's samples."""
        if self.cluster.admission_fair_sharing is not None:
            self.cluster.admission_fair_sharing.advance(now)
            self._wake_on_usage()

    def reserved(self, wl: Workload, now: float) -> None:
        """Quota reserved: admission fair sharing's entry penalty (after :meth:`forget`)."""
        if self.cluster.admission_fair_sharing is not None:
            self.cluster.admission_fair_sharing.reserved(wl, now)
            self._wake_on_usage()

    def admitted(self, wl: Workload, now: float) -> None:
        """Admitted (checks passed): admission fair sharing settles the penalty."""
        if self.cluster.admission_fair_sharing is not None:
            self.cluster.admission_fair_sharing.admitted_(wl, now)
            self._wake_on_usage()

    def released(self, wl: Workload) -> None:
        """The workload's quota is released (still in its old state)."""
        if self.cluster.admission_fair_sharing is not None:
            self.cluster.admission_fair_sharing.released(wl)
            self._wake_on_usage()

    def _wake_on_usage(self) -> None:
        """Admission fair sharing's usage moved (a sample, a penalty): the order of a usage-based
        ClusterQueue's heads may differ, so a held tree holding one must take part again."""
        afs = self.cluster.admission_fair_sharing
        if afs is None or afs.version == self._afs_seen:
            return
        self._afs_seen = afs.version
        for name in self.by_usage:
            self.wake(self.root_of[name])

    def push(self, wl: Workload) -> None:
        assert wl.cluster_queue is not None
        self.wake(self.root_of[wl.cluster_queue])
        if self.sticky.get(wl.cluster_queue) == wl.key:
            self.sticky_slot[wl.cluster_queue] = wl
        else:
            self._heap_push(wl.cluster_queue, wl)
        self.active.add(wl.cluster_queue)

    def push_new(self, wl: Workload) -> None:
        """``PushOrUpdate``: into the heap, or parked at once when its shape was parked since the
        queue's last requeue (BestEffortFIFO, ``hashToBulkMoveReason``)."""
        assert wl.cluster_queue is not None
        bulk = self.bulk[wl.cluster_queue]
        if bulk and wl.shape_id() in bulk and self._equivalence(wl.cluster_queue):
            self.park(wl)
        else:
            self.push(wl)

    def _equivalence(self, cq: str) -> bool:
        return self.cluster.cluster_queues[cq].strategy == "BestEffortFIFO" and cq not in self.by_usage

    def _park_shape(self, wl: Workload) -> None:
        """``handleInadmissibleHash``: record the shape and move its workloads out of the heap."""
        assert wl.cluster_queue is not None
        cq = wl.cluster_queue
        if not self._equivalence(cq):
            return
        shape = wl.shape_id()
        self.bulk[cq].add(shape)
        heap = self.heaps[cq]
        if not heap:
            return
        kept = [item for item in heap if item[2].shape_id() != shape]
        if len(kept) == len(heap):
            return
        for item in heap:
            if item[2].shape_id() == shape:
                self.inadmissible[cq][item[2].key] = item[2]
        heapq.heapify(kept)
        self.heaps[cq] = kept
        if not kept and cq not in self.sticky_slot:
            self.active.discard(cq)

    def set_preemptor(self, wl: Workload) -> None:
        """``pw.set``: sticky in a BestEffortFIFO ClusterQueue; replaces the previous one."""
        assert wl.cluster_queue is not None
        cq = wl.cluster_queue
        if self.cluster.cluster_queues[cq].strategy == "StrictFIFO":
            return
        self.wake(self.root_of[cq])
        old = take(self.sticky_slot, cq)
        if old is not None:
            self._heap_push(cq, old)
        self.sticky[cq] = wl.key

    def forget(self, wl: Workload) -> None:
        """``delete``: the workload left the queue (admitted, rejected); a sticky mark goes with it,
        and so does a pending admission-fair-sharing penalty (``SubPenalty``; on reservation
        :meth:`reserved` pushes the new one, which would replace it anyway)."""
        if wl.cluster_queue is not None and self.sticky.get(wl.cluster_queue) == wl.key:
            self.wake(self.root_of[wl.cluster_queue])
            del self.sticky[wl.cluster_queue]
        if self.cluster.admission_fair_sharing is not None:
            self.cluster.admission_fair_sharing.dropped(wl)

    def remove(self, wl: Workload) -> None:
        """The pending workload object is deleted: out of its heap, its parked set and its
        sticky slot (``Manager.DeleteWorkload``)."""
        cq = wl.cluster_queue
        self.forget(wl)
        if cq is None or cq not in self.heaps:
            return
        self.inadmissible[cq].pop(wl.key, None)
        if self.sticky_slot.get(cq) is wl:
            del self.sticky_slot[cq]
        heap = self.heaps[cq]
        kept = [item for item in heap if item[2] is not wl]
        if len(kept) != len(heap):
            heapq.heapify(kept)
            self.heaps[cq] = kept
        lq_heaps = self.by_usage.get(cq)
        if lq_heaps is not None:
            lq_heaps.remove(wl)
        if not self.heaps[cq] and not (lq_heaps) and cq not in self.sticky_slot:
            self.active.discard(cq)
        self.wake(self.root_of[cq])

    def park(self, wl: Workload) -> None:
        assert wl.cluster_queue is not None
        self.wake(self.root_of[wl.cluster_queue])
        self.inadmissible[wl.cluster_queue][wl.key] = wl

    def requeue(self, wl: Workload, immediate: bool) -> None:
        assert wl.cluster_queue is not None
        strict = self.cluster.cluster_queues[wl.cluster_queue].strategy == "StrictFIFO"
        if immediate or strict:
            self.push(wl)
        else:
            self.park(wl)
            self._park_shape(wl)  # parked for NoFit / no preemption candidates

    def heads(self, cycle: int = 0) -> list[Workload]:
        """One head per ClusterQueue (``Manager.Heads``), in ClusterQueue name order; held trees'
        queues keep their heads."""
        self.cycle = cycle
        out = []
        for name in sorted(self.active):
            heap = self.heaps[name]
            sticky = take(self.sticky_slot, name)
            lq_heaps = self.by_usage.get(name)
            if lq_heaps is not None:
                head, is_sticky = lq_heaps.pop(sticky)
                if sticky is not None and not is_sticky:
                    self.sticky_slot[name] = sticky
                out.append(head)
                if not lq_heaps and name not in self.sticky_slot:
                    self.active.discard(name)
                continue
            out.append(sticky if sticky is not None else heapq.heappop(heap)[2])
            if not heap:
                self.active.discard(name)
        return out

    def hold(self, root: Node, heads: list[Workload]) -> None:
        """Keep the tree's queues (whose heads are ``heads``, back in place) out of ``heads``."""
        names = [wl.cluster_queue for wl in heads if wl.cluster_queue is not None]
        self.active.difference_update(names)
        cqs = self.cluster.cluster_queues
        self.held[root] = (names, heads, [cqs[name].node.allocatable_generation for name in names])

    def wake(self, root: Node) -> None:
        """The tree was touched: its queues take part again, their heads stamped as nominated in
        the last cycle with their queues' generations then (what the skipped cycles would record)."""
        held = take(self.held, root)
        if held is None:
            return
        names, heads, generations = held
        self.active.update(names)
        for wl, generation in zip(heads, generations, strict=True):
            wl.last_scan_cycle = self.cycle
            wl.last_scan_generation = generation

    def _tree(self, node: Node) -> list[tuple[set[int], dict[str, Workload]]]:
        """The ClusterQueues of ``node``'s cohort tree in name order, each as its ``bulk`` set
        and its parked workloads (the very objects, never replaced): every release in the tree
        walks them, so they are looked up once per tree, not by name per release (issue 44
        item 3, round 13)."""
        root = node.root()
        found = self.members.get(root)
        if found is None:
            names = sorted(n.name for n in subtree_cluster_queues(root))
            found = self.members[root] = [(self.bulk[name], self.inadmissible[name]) for name in names]
        return found

    def queue_inadmissible(self, cluster_queue: str) -> int:
        """``QueueInadmissibleWorkloads`` for the cohort tree of ``cluster_queue``; how many
        workloads went back to their heaps."""
        moved = 0
        for bulk, parked in self._tree(self.cluster.cluster_queues[cluster_queue].node):
            if bulk:
                bulk.clear()
            if parked:
                moved += len(parked)
                for wl in parked.values():
                    self.push(wl)
                parked.clear()
        return moved

    def pending(self) -> list[Workload]:
        items = [w for h in self.heaps.values() for _, _, w in h] + list(self.sticky_slot.values())
        items += [w for lq_heaps in self.by_usage.values() for w in lq_heaps]
        items += [w for p in self.inadmissible.values() for w in p.values()]
        return items
