"""Kueue's batching requeuer of inadmissible workloads, ported from Kueue v0.19.2.

Upstream (kubernetes-sigs/kueue@v0.19.2): a parked (inadmissible) workload goes back to its
ClusterQueue's heap only when the queue manager is told that quota may have been freed:
``pkg/cache/queue/manager.go`` ``QueueAssociatedInadmissibleWorkloadsAfter`` (called by the
workload controller, ``pkg/controller/core/workload_controller.go``: ``Update`` when a workload
finishes or is deactivated and when it goes from QuotaReserved/Admitted back to Pending -- an
evicted victim's release, a failed ProvisioningRequest's retry -- and ``Delete``), and
``NotifyRetryInadmissible`` (ClusterQueue, Cohort, ResourceFlavor and AdmissionCheck changes:
none happens during a simulated run, whose objects are fixed).  Both end in
``pkg/cache/queue/inadmissible_workloads.go`` ``notifyRetryInadmissibleWithoutLock``, which
notifies the requeuer of the ClusterQueue when it has no cohort, else of its root Cohort; the
requeuer wired in ``cmd/kueue/main.go`` (``qcache.NewRequeuer()``) is ``workqueueRequeuer``:
``AddAfter(request, requeueBatchPeriod)`` on a client-go delaying work queue, ``requeueBatchPeriod``
= 1 s (10 s under the alpha gate ``SchedulerLongRequeueInterval``, off by default).  A request
already waiting keeps its earlier ready time (the delaying queue keeps one entry per item), so
every notification within a second of the first is served by the first's batch.  When the request
is ready, ``requeueWorkloadsCQ`` / ``requeueWorkloadsCohort`` move every parked workload of the
ClusterQueue, or of every ClusterQueue of the cohort tree, back to its heap
(``queueInadmissibleWorkloads``).

``batch`` 0 is the simulator's former "instant" view: the move happens at the notification.
"""

from __future__ import annotations

import heapq
import math

from whatif.queues import QueueManager
from whatif.tree import Node


class Requeuer:
    """``workqueueRequeuer``: one waiting request per ClusterQueue without cohort / root Cohort."""

    def __init__(self, queues: QueueManager, batch: float) -> None:
        self.queues = queues
        self.batch = batch
        self._waiting: dict[Node, float] = {}  # root -> when its request is ready
        self._due: list[tuple[float, int, str]] = []  # (ready at, tie, a ClusterQueue of the tree)
        self._tie = 0

    def notify(self, cluster_queue: str, now: float) -> None:
        """``notifyRetryInadmissibleWithoutLock`` for ``cluster_queue``'s tree."""
        if self.batch <= 0:
            self.queues.queue_inadmissible(cluster_queue)
            return
        root = self.queues.root_of[cluster_queue]
        if root in self._waiting:  # the delaying queue keeps the earlier ready time
            return
        ready = now + self.batch
        self._waiting[root] = ready
        self._tie += 1
        heapq.heappush(self._due, (ready, self._tie, cluster_queue))

    def next_time(self) -> float:
        return self._due[0][0] if self._due else math.inf

    def flush(self, now: float) -> int:
        """Serve every request ready at ``now`` (``requeueWorkloadsCQ`` / ``requeueWorkloadsCohort``);
        how many parked workloads went back to their heaps."""
        moved = 0
        while self._due and self._due[0][0] <= now:
            _, _, cluster_queue = heapq.heappop(self._due)
            del self._waiting[self.queues.root_of[cluster_queue]]
            moved += self.queues.queue_inadmissible(cluster_queue)
        return moved

    def waiting(self, now: float) -> tuple[tuple[float, str], ...]:
        """The waiting requests, as (seconds from ``now``, the tree's root)."""
        return tuple(sorted((ready - now, self.queues.root_of[cq].name) for ready, _, cq in self._due))
