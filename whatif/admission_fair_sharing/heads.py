"""A usage-based ClusterQueue's pending workloads: one heap per LocalQueue, the head by usage.

Upstream (kubernetes-sigs/kueue@v0.19.2 ``pkg/cache/queue/cluster_queue.go``):
``queueOrderingFunc`` compares the LocalQueues' usage first (``cmp.Compare`` of
``CalcLocalQueueFSUsage``) and falls back to ``baseCompareFunc``: the sticky preemptor, then
higher priority, then the earlier queue-order timestamp (creation here).  Within one LocalQueue
the usage is the same, so its own heap is ordered by priority and creation; the ClusterQueue's
head is the LocalQueue head with the least ``(usage, priority, creation)``, and the sticky
preemptor goes first only when its LocalQueue's usage is not above that head's.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator

from whatif.admission_fair_sharing.ledger import LocalQueueKey
from whatif.admission_fair_sharing.model import AdmissionFairSharing, lq_key
from whatif.workload import Workload


class LocalQueueHeaps:
    def __init__(self, afs: AdmissionFairSharing) -> None:
        self.afs = afs
        self.heaps: dict[LocalQueueKey, list[tuple[int, int, Workload]]] = {}

    def push(self, wl: Workload) -> None:
        heapq.heappush(self.heaps.setdefault(lq_key(wl), []), (-wl.priority, wl.seq, wl))

    def __bool__(self) -> bool:
        return bool(self.heaps)

    def __iter__(self) -> Iterator[Workload]:
        for heap in self.heaps.values():
            for _, _, wl in heap:
                yield wl

    def pop(self, sticky: Workload | None) -> tuple[Workload, bool]:
        """The head, and whether it is ``sticky`` (else ``sticky`` stays queued)."""
        best: tuple[float, int, int] | None = None
        best_lq = ""
        for lq, heap in self.heaps.items():
            prio, seq, _ = heap[0]
            key = (self.afs.usage(lq), prio, seq)
            if best is None or key < best:
                best, best_lq = key, lq
        if sticky is not None and (best is None or self.afs.usage(lq_key(sticky)) <= best[0]):
            return sticky, True
        heap = self.heaps[best_lq]
        wl = heapq.heappop(heap)[2]
        if not heap:
            del self.heaps[best_lq]
        return wl, False

    def remove(self, wl: Workload) -> None:
        """The pending workload object is deleted (a MultiKueue worker's losing copy)."""
        key = lq_key(wl)
        heap = self.heaps.get(key)
        if heap is None:
            return
        kept = [item for item in heap if item[2] is not wl]
        if kept:
            heapq.heapify(kept)
            self.heaps[key] = kept
        else:
            del self.heaps[key]
