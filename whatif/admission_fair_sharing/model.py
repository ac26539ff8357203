"""Admission fair sharing while a simulation runs: the ledger, its samples, penalties and orders.

Upstream (kubernetes-sigs/kueue@v0.19.2), each step where Kueue takes it:
- **Samples** (``pkg/controller/core/localqueue_controller.go`` ``Reconcile``,
  ``initializeAfsIfNeeded``, ``reconcileConsumedUsage``): a LocalQueue's entry starts empty when
  the LocalQueue is created (here: at the start of the run); the reconciler then re-samples every
  ``usageSamplingInterval`` after the entry's ``LastUpdate`` -- consumed = decay(consumed,
  admitted usage now, elapsed) -- or resets consumed to nothing when the half-life is 0.
  ``GetAdmittedUsage`` (``pkg/cache/scheduler/localqueue.go``) is the usage of the LocalQueue's
  *admitted* workloads (admission checks passed), summed over flavors.
- **Entry penalties** (``pkg/scheduler/scheduler.go`` ``assumeWorkload``,
  ``shouldApplyEntryPenalty``, ``updateEntryPenalty``): when the scheduler reserves quota for a
  workload of a usage-based ClusterQueue it pushes ``alpha(usageSamplingInterval,
  usageHalfLifeTime)`` times the workload's total requests (pod sets' requests times counts; no
  ``pods``) as the workload's penalty on its LocalQueue.
- **Settlement** (``pkg/controller/core/workload_controller.go``
  ``reconcileAfsPenaltiesOnUpdate``, ``updateAfsConsumedUsage``): when the workload becomes
  Admitted, consumed = decay(consumed, admitted usage including it, elapsed since
  ``LastUpdate``) plus exactly its recorded penalty, whose record is dropped; ``LastUpdate`` =
  now.  A workload that leaves without being admitted (rejected by its admission check) drops
  its record (``SubPenalty``); an evicted workload that stays queued keeps it, and its next
  reservation replaces it.
- **Ordering** (``pkg/cache/queue/cluster_queue.go`` ``queueOrderingFunc``,
  ``pkg/workload/workload.go`` ``CalcLocalQueueFSUsage``): in a usage-based ClusterQueue the
  workload whose LocalQueue has the lower usage (consumed plus pending penalties, weighted, over
  the LocalQueue's weight) comes first, then ``baseCompareFunc`` (sticky preemptor, priority,
  creation).  ``Pop`` rebuilds the heap while penalties are pending and each sample rebuilds
  the LocalQueue's workloads (``RebuildLocalQueue``); here every pop reads the current usage.
- **Preemption** (``pkg/cache/scheduler/snapshot.go`` ``snapshotClusterQueue`` sets
  ``LocalQueueFSUsage`` on the admitted workloads of usage-based ClusterQueues;
  ``pkg/scheduler/preemption/common/ordering.go`` ``CandidatesOrdering`` criterion 2): between two
  candidates of the same ClusterQueue from LocalQueues of different names, the one whose
  LocalQueue has the higher usage is preempted first.

Simplified: Kueue's LocalQueue reconciler also runs one ``UpdatesBatchPeriod`` (1 s) after a
workload event of the LocalQueue when a penalty is pending, re-sampling then; here samples are
only every ``usageSamplingInterval`` after the last update, and a sample due between two events
takes effect at the next event (the simulator runs scheduling cycles only at events).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from functools import cmp_to_key
from typing import Any

from whatif.admission_fair_sharing.ledger import Ledger, LocalQueueKey
from whatif.admission_fair_sharing.settings import AfsConfig
from whatif.admission_fair_sharing.usage import (
    Resources,
    decayed_consumed,
    entry_penalty,
    lq_usage,
    merge_keep_sum,
)
from whatif.amounts import to_decimal
from whatif.tree import FlavorResource
from whatif.workload import ADMITTED, Workload


def lq_key(wl: Workload) -> LocalQueueKey:
    """``KeyFromWorkload``: namespace/queue name."""
    return f"{wl.namespace}/{wl.queue}"


def flatten(usage: Mapping[FlavorResource, int]) -> Resources:
    """``FlattenFlavors``: a workload's (flavor, resource) usage summed per resource, base units."""
    out: Resources = {}
    for (_, resource), amount in usage.items():
        out[resource] = out.get(resource, Decimal(0)) + to_decimal(amount)
    return out


class AdmissionFairSharing:
    """The ledger and everything that moves it, for the ClusterQueues that use usage-based AFS."""

    def __init__(
        self,
        config: AfsConfig,
        cluster_queues: Iterable[str],
        local_queues: Mapping[LocalQueueKey, str],
        lq_weights: Mapping[LocalQueueKey, float],
        covered: Mapping[str, frozenset[str]],
    ) -> None:
        self.config = config
        self.cluster_queues = frozenset(cluster_queues)  # usage-based ClusterQueues
        # the LocalQueues the reconciler samples (those of usage-based ClusterQueues)
        self.local_queues = sorted(lq for lq, cq in local_queues.items() if cq in self.cluster_queues)
        self.lq_weights = dict(lq_weights)
        self.covered = dict(covered)  # ClusterQueue -> covered resources (IgnoreUndeclared penalties)
        self.ledger = Ledger()
        self.admitted: dict[LocalQueueKey, Resources] = {}
        self.version = 0  # moves whenever a LocalQueue's usage may have changed
        self.now: float | None = None
        self._samples: list[tuple[float, LocalQueueKey]] = []  # (due, LocalQueue); stale ones skipped
        self._usage: dict[LocalQueueKey, float] = {}

    # --- reading -------------------------------------------------------------------------------
    def takes_part(self, cluster_queue: str | None) -> bool:
        return cluster_queue in self.cluster_queues

    def weight(self, lq: LocalQueueKey) -> float:
        """``ResolveLQWeight``: 1 for a LocalQueue that does not exist."""
        return self.lq_weights.get(lq, 1.0)

    def usage(self, lq: LocalQueueKey) -> float:
        """``CalcLocalQueueFSUsage``."""
        found = self._usage.get(lq)
        if found is None:
            entry = self.ledger.get(lq)
            consumed, penalty = (entry.resources, entry.pending) if entry is not None else ({}, {})
            found = self._usage[lq] = lq_usage(
                consumed, penalty, self.weight(lq), self.config.resource_weights
            )
        return found

    def _changed(self) -> None:
        self.version += 1
        self._usage.clear()

    # --- time ----------------------------------------------------------------------------------
    def advance(self, now: float) -> None:
        """Apply the reconciler's samples due up to ``now``, with the admitted usage that held
        since the last event (call before the events at ``now``)."""
        if self.now is None:
            for lq in self.local_queues:  # initializeAfsIfNeeded: an empty entry at creation
                entry = self.ledger.get(lq)
                if entry is None:
                    self.ledger.set(lq, {}, now)
                    entry = self.ledger.get(lq)
                    assert entry is not None
                heapq.heappush(self._samples, (entry.last_update + self.config.sampling, lq))
        self.now = now
        sampled = False
        while self._samples and self._samples[0][0] <= now:
            due, lq = heapq.heappop(self._samples)
            entry = self.ledger.get(lq)
            assert entry is not None
            if entry.last_update + self.config.sampling != due:
                continue  # a settlement moved LastUpdate: the sample is due later (already queued)
            if self.config.half_life == 0:
                entry.resources = {}
            else:
                entry.resources = decayed_consumed(
                    entry.resources, self.admitted.get(lq, {}), due - entry.last_update, self.config.half_life
                )
            entry.last_update = due
            heapq.heappush(self._samples, (due + self.config.sampling, lq))
            sampled = True
        if sampled:
            self._changed()

    # --- workload transitions ------------------------------------------------------------------
    def total_requests(self, wl: Workload) -> Resources:
        """``SumTotalRequests`` (filtered to the covered resources under IgnoreUndeclared)."""
        out: Resources = {}
        for ps in wl.pod_sets:
            for resource, amount in ps.total().items():
                out[resource] = out.get(resource, Decimal(0)) + to_decimal(amount)
        if self.config.ignore_undeclared and wl.cluster_queue is not None:
            covered = self.covered.get(wl.cluster_queue, frozenset())
            out = {r: v for r, v in out.items() if r in covered}
        return out

    def reserved(self, wl: Workload, now: float) -> None:
        """``assumeWorkload`` -> ``updateEntryPenalty(add)``."""
        if not self.takes_part(wl.cluster_queue):
            return
        penalty = entry_penalty(self.total_requests(wl), self.config.sampling, self.config.half_life)
        self.ledger.push_penalty(lq_key(wl), wl.key, penalty, now)
        self._changed()

    def admitted_(self, wl: Workload, now: float) -> None:
        """The cache counts the workload as admitted; ``updateAfsConsumedUsage`` settles it."""
        if not self.takes_part(wl.cluster_queue):
            return
        lq = lq_key(wl)
        self.admitted[lq] = merge_keep_sum(self.admitted.get(lq, {}), flatten(wl.usage))
        entry = self.ledger.get(lq)
        if entry is None:
            self.ledger.set(lq, {}, now)
            entry = self.ledger.get(lq)
            assert entry is not None
        elapsed = max(0.0, now - entry.last_update)
        consumed = decayed_consumed(entry.resources, self.admitted[lq], elapsed, self.config.half_life)
        penalty = entry.without_penalty(wl.key) or {}
        entry.resources = merge_keep_sum(consumed, penalty)
        entry.last_update = max(now, entry.last_update)
        heapq.heappush(self._samples, (entry.last_update + self.config.sampling, lq))
        self._changed()

    def released(self, wl: Workload) -> None:
        """An admitted workload's usage leaves ``admittedUsage`` (finished, evicted, expired)."""
        if wl.state != ADMITTED or not self.takes_part(wl.cluster_queue):
            return
        lq = lq_key(wl)
        left = merge_keep_sum(self.admitted.get(lq, {}), {r: -v for r, v in flatten(wl.usage).items()})
        self.admitted[lq] = {r: v for r, v in left.items() if v != 0}

    def dropped(self, wl: Workload) -> None:
        """``SubPenalty``: the workload left its queue for good (rejected) or is re-reserved."""
        if self.takes_part(wl.cluster_queue) and self.ledger.sub_penalty(lq_key(wl), wl.key) is not None:
            self._changed()

    # --- preemption ----------------------------------------------------------------------------
    def fs_usage(self, wl: Workload) -> float | None:
        """``LocalQueueFSUsage`` of an admitted workload: set only in usage-based ClusterQueues."""
        return self.usage(lq_key(wl)) if self.takes_part(wl.cluster_queue) else None

    def candidate_key(self, base: Callable[[Workload], tuple[Any, ...]]) -> Callable[[Workload], Any]:
        """``CandidatesOrdering`` with criterion 2 between criterion 1 (other ClusterQueues first,
        ``base(w)[0]``) and the rest of ``base``: for two candidates of one ClusterQueue from
        LocalQueues of different names, the higher LocalQueue usage first."""

        def compare(a: Workload, b: Workload) -> int:
            ka, kb = base(a), base(b)
            if ka[0] != kb[0]:
                return -1 if ka[0] < kb[0] else 1
            if a.cluster_queue == b.cluster_queue and a.queue != b.queue:
                ua, ub = self.fs_usage(a), self.fs_usage(b)
                if ua is not None and ub is not None and ua != ub:
                    return -1 if ub < ua else 1
            rest_a, rest_b = ka[1:], kb[1:]
            return -1 if rest_a < rest_b else (1 if rest_b < rest_a else 0)

        return cmp_to_key(compare)
