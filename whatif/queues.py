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

Held trees (the simulator's own bookkeeping, no Kueue counterpart): Kueue pops every head again
each cycle; when a cohort tree's last cycle changed nothing and would repeat exactly (see
``whatif.scheduler.Scheduler.hold_settled``), its ClusterQueues are held out of ``heads`` until
something touches the tree -- a push, a sticky change or (from the simulator) a quota change.
``wake`` then stamps its heads as nominated in the last cycle, as the skipped cycles would have.
"""

from __future__ import annotations

import heapq

from whatif.cluster import Cluster
from whatif.tree import Node
from whatif.workload import Workload


class QueueManager:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.heaps: dict[str, list[tuple[int, int, Workload]]] = {name: [] for name in cluster.cluster_queues}
        self.inadmissible: dict[str, dict[str, Workload]] = {name: {} for name in cluster.cluster_queues}
        self.members: dict[Node, list[str]] = {}
        self.active: set[str] = set()  # ClusterQueues with a non-empty heap: heads() never scans all
        self.sticky: dict[str, str] = {}  # ClusterQueue -> key of its sticky preemptor
        self.sticky_slot: dict[str, Workload] = {}  # the sticky preemptor while it is queued
        self.root_of = {name: cq.node.root() for name, cq in cluster.cluster_queues.items()}
        # root cohort -> (its ClusterQueues held out of ``active``, their heads, the tree's generation)
        self.held: dict[Node, tuple[list[str], list[Workload], int]] = {}
        self.cycle = 0  # the last scheduling cycle whose heads were taken

    def push(self, wl: Workload) -> None:
        assert wl.cluster_queue is not None
        self.wake(self.root_of[wl.cluster_queue])
        if self.sticky.get(wl.cluster_queue) == wl.key:
            self.sticky_slot[wl.cluster_queue] = wl
        else:
            heapq.heappush(self.heaps[wl.cluster_queue], (-wl.priority, wl.seq, wl))
        self.active.add(wl.cluster_queue)

    def set_preemptor(self, wl: Workload) -> None:
        """``pw.set``: sticky in a BestEffortFIFO ClusterQueue; replaces the previous one."""
        assert wl.cluster_queue is not None
        cq = wl.cluster_queue
        if self.cluster.cluster_queues[cq].strategy == "StrictFIFO":
            return
        self.wake(self.root_of[cq])
        old = self.sticky_slot.pop(cq, None)
        if old is not None:
            heapq.heappush(self.heaps[cq], (-old.priority, old.seq, old))
        self.sticky[cq] = wl.key

    def forget(self, wl: Workload) -> None:
        """``delete``: the workload left the queue (admitted, rejected); a sticky mark goes with it."""
        if wl.cluster_queue is not None and self.sticky.get(wl.cluster_queue) == wl.key:
            self.wake(self.root_of[wl.cluster_queue])
            del self.sticky[wl.cluster_queue]

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

    def heads(self, cycle: int = 0) -> list[Workload]:
        """One head per ClusterQueue (``Manager.Heads``), in ClusterQueue name order; held trees'
        queues keep their heads."""
        self.cycle = cycle
        out = []
        for name in sorted(self.active):
            heap = self.heaps[name]
            sticky = self.sticky_slot.pop(name, None)
            out.append(sticky if sticky is not None else heapq.heappop(heap)[2])
            if not heap:
                self.active.discard(name)
        return out

    def hold(self, root: Node, heads: list[Workload]) -> None:
        """Keep the tree's queues (whose heads are ``heads``, back in place) out of ``heads``."""
        names = [wl.cluster_queue for wl in heads if wl.cluster_queue is not None]
        self.active.difference_update(names)
        self.held[root] = (names, heads, root.generation)

    def wake(self, root: Node) -> None:
        """The tree was touched: its queues take part again, their heads stamped as nominated in
        the last cycle with the tree's generation then (what the skipped cycles would record)."""
        held = self.held.pop(root, None)
        if held is None:
            return
        names, heads, generation = held
        self.active.update(names)
        for wl in heads:
            wl.last_scan_cycle = self.cycle
            wl.last_scan_generation = generation

    def _tree(self, node: Node) -> list[str]:
        root = node.root()
        if root not in self.members:
            names: list[str] = []
            stack = [root]
            while stack:
                n = stack.pop()
                if n.is_cluster_queue:
                    names.append(n.name)
                stack.extend(n.children)
            self.members[root] = sorted(names)
        return self.members[root]

    def queue_inadmissible(self, cluster_queue: str) -> None:
        """``QueueInadmissibleWorkloads`` for the cohort tree of ``cluster_queue``."""
        for name in self._tree(self.cluster.cluster_queues[cluster_queue].node):
            parked = self.inadmissible[name]
            if parked:
                for wl in parked.values():
                    self.push(wl)
                parked.clear()

    def pending(self) -> list[Workload]:
        items = [w for h in self.heaps.values() for _, _, w in h] + list(self.sticky_slot.values())
        items += [w for p in self.inadmissible.values() for w in p.values()]
        return items
