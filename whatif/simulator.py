"""The discrete-event loop: arrivals, admissions, admission checks, preemptions and finishes.

At each instant the simulator applies every event due (finishes, evictions and admission-check
results first, then arrivals in creation order) and then runs scheduling cycles until one changes
nothing, so the state at time T is the settled state (issue 14).

Victims' release, as Kueue v0.19.2 does it (kubernetes-sigs/kueue@v0.19.2): the scheduler only
marks a victim evicted (``pkg/scheduler/preemption/preemption.go`` ``IssuePreemptions`` ->
``workloadevict.Evict``: condition ``Evicted``, reason ``Preempted``, admission checks reset to
Pending by ``resetChecksOnEviction``, so a ProvisioningRequest under way admits nothing); the job
reconciler then suspends the job and, once the job reports itself inactive, clears ``QuotaReserved``
(``pkg/controller/jobframework/reconciler.go`` ``ReconcileGenericJob`` step 6: ``stopJob``, then
``!job.IsActive()`` -> ``UnsetQuotaReservationWithCondition``); only that update makes the
workload controller drop the victim from the cache, notify the batching requeuer for the
cohort's inadmissible workloads (``whatif.requeuer``: back in their heaps 1 s later) and requeue
the victim at once, all before the next cycle
(``pkg/controller/core/workload_controller.go`` ``Update``, case
``FromQuotaReservedOrAdmittedToPending``: ``QueueAssociatedInadmissibleWorkloadsAfter`` with
``cache.DeleteWorkload`` and ``AddOrUpdateWorkloadWithoutLock``).  Until then the victim's usage
counts, its preemptor stays at its queue's head (``whatif.queues``: sticky preemptor) and is
nominated again, finding the evicted victims first (``CandidatesOrdering``) and issuing nothing
new (``IssuePreemptions``: "Preemption ongoing").  ``eviction_delay`` is that time from the
eviction to the release: how long the job takes to report itself inactive, which depends on its
kind (``Job.IsActive``: ``status.active``, which leaves out terminating pods; KubeRay's RayJob:
``Suspended`` once its RayCluster and submitter Job are deleted, seen on their deletion events;
plain pods,
``pkg/controller/jobs/pod`` ``Pod.IsActive``: until they terminate, within the pods'
``terminationGracePeriodSeconds``, 30 by default).  With 0 the quota is released right after the
cycle and the victim requeued at once too (a preemptor and its victim can then take the quota
from each other at one instant, as Kueue's loop would: reported as a livelock); the instant view
(``requeue_batch`` 0) requeues it once the instant has settled instead.

Admission checks (Kueue v0.19.2 ``pkg/controller/admissionchecks/provisioning``; see
``whatif.capacity``): on a flavor with a ``queued-provisioning.gke.io`` ProvisioningRequest check a
workload holds its quota while the request is provisioned (``provisioning_delay`` seconds, a number
or a uniform ``(low, high)`` drawn per request, seeded by the workload and attempt); it is then
admitted if a node pool behind the flavor can grow by the nodes of its whole gang, and its nodes
are held until it ends -- at ``maxRunDurationSeconds`` at the latest.  Otherwise the request fails
and Kueue's retry strategy applies: the quota is released and the workload requeued after the
back-off, or rejected past ``backoffLimitCount``.  ``check-capacity.autoscaling.x-k8s.io`` checks
the same fit at once, without provisioning.  Other checks are taken as Ready at once.
"""

from __future__ import annotations

import gc
import heapq
import math
import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

from whatif.amounts import figure
from whatif.capacity import Capacity, Check
from whatif.cluster import Cluster
from whatif.dicts import take
from whatif.errors import NotSettledError, WhatIfError
from whatif.fairsharing.verdicts import Verdicts
from whatif.preemption import Preemptor
from whatif.queues import QueueManager
from whatif.recurrence import Recurrence
from whatif.requeuer import Requeuer
from whatif.scheduler import Entry, ScanState, Scheduler
from whatif.trace import Delay, Trace
from whatif.tree import FlavorResource, add_all, flavor_resource, remove_all
from whatif.workload import ADMITTED, DELETED, FINISHED, PENDING, REJECTED, RESERVED, Workload

GPU = "nvidia.com/gpu"
FINISH, EVICT, CHECK, SUBMIT, REQUEUE, EXPIRE = range(6)
# sent by another simulation on the same clock (``whatif.multikueue``): a worker admitted the
# manager's workload, or its copy ended there; a worker's copy is deleted (first, at its instant)
REMOTE_ADMITTED, REMOTE_FINISHED, DELETE = 6, -2, -3
MAX_CYCLES_PER_INSTANT = 10_000  # one settle: cycles until nothing changes
MAX_ROUNDS_PER_INSTANT = 1_000  # rounds of same-instant events (requeues) before giving up
LIVELOCK_REPEATS = 20  # the same preemptor evicting the same victim this often at one instant
# ``requeueBatchPeriod`` (``pkg/cache/queue/inadmissible_workloads.go``): parked workloads of a
# ClusterQueue / root Cohort move back to their heaps this long after the first notification
REQUEUE_BATCH_SECONDS = 1.0


# one per event: ``__init__`` written out (``init=False``) because mypyc compiles an explicit one
# but leaves the one ``dataclasses`` generates interpreted (issue 44 item 3, round 8)
@dataclass(init=False)
class Event:
    time: float
    workload: str
    event: str
    cluster_queue: str | None
    flavors: dict[str, dict[str, str]] | None
    by: str | None
    reason: str | None

    def __init__(
        self,
        time: float,
        workload: str,
        event: str,
        cluster_queue: str | None,
        *,
        flavors: dict[str, dict[str, str]] | None = None,
        by: str | None = None,
        reason: str | None = None,
    ) -> None:
        self.time = time
        self.workload = workload
        self.event = event
        self.cluster_queue = cluster_queue
        self.flavors = flavors
        self.by = by
        self.reason = reason

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"time": figure(self.time), "workload": self.workload, "event": self.event}
        out["clusterQueue"] = self.cluster_queue
        if self.flavors is not None:
            out["flavors"] = self.flavors
        if self.by is not None:
            out["by"] = self.by
        if self.reason is not None:
            out["reason"] = self.reason
        return out


@dataclass
class Outcome:
    events: list[Event] = field(default_factory=list)
    workloads: list[Workload] = field(default_factory=list)
    end: float = 0.0
    pool_node_seconds: dict[str, float] = field(default_factory=dict)


def build_workloads(cluster: Cluster, trace: Trace) -> list[Workload]:
    """Trace entries as workloads, in creation order (submit time, then trace order)."""
    order = sorted(range(len(trace.entries)), key=lambda i: (trace.entries[i].submit, i))
    out = []
    for seq, i in enumerate(order):
        e = trace.entries[i]
        priority = e.priority or 0
        if e.priority_class is not None:
            if e.priority_class not in cluster.priority_classes:
                raise WhatIfError(
                    f"trace workloads[{i}].priorityClass: got {e.priority_class!r}, expected one of "
                    f"{sorted(cluster.priority_classes)} (the stack's WorkloadPriorityClasses)"
                )
            priority = cluster.priority_classes[e.priority_class]
        wl = Workload(e.namespace, e.name, e.queue, priority, e.submit, e.duration, seq, e.pod_sets)
        wl.cluster_queue = cluster.local_queues.get((e.namespace, e.queue))
        out.append(wl)
    return out


class Hooks(Protocol):
    """What a simulation tells the others on its clock (``whatif.multikueue``)."""

    def dispatch(self, wl: Workload) -> None:
        """``wl`` reserved quota in a ClusterQueue with a MultiKueue check."""

    def admitted(self, wl: Workload) -> None:
        """``wl`` was admitted (all its checks Ready)."""

    def finished(self, wl: Workload) -> None:
        """``wl`` ended (ran its duration, or its nodes expired)."""

    def released(self, wl: Workload) -> None:
        """``wl`` no longer holds quota (finished, evicted, failed request, deleted)."""

    def accept(self, wl: Workload) -> bool:
        """Whether ``wl``, arriving now, still exists (a copy's dispatch may be stale)."""


class Simulation:
    def __init__(
        self,
        cluster: Cluster,
        trace: Trace,
        *,
        provisioning_delay: Delay | None = None,
        eviction_delay: float | None = None,
        requeue_batch: float | None = None,
    ) -> None:
        self.cluster = cluster
        self.provisioning_delay: Delay = (
            provisioning_delay if provisioning_delay is not None else (trace.provisioning_delay or 0.0)
        )
        self.capacity = Capacity(cluster.pools)
        if eviction_delay is None:
            eviction_delay = trace.eviction_delay if trace.eviction_delay is not None else 0.0
        self.eviction_delay = eviction_delay
        if requeue_batch is None:
            requeue_batch = trace.requeue_batch if trace.requeue_batch is not None else REQUEUE_BATCH_SECONDS
        self.requeue_batch = requeue_batch
        self.workloads = build_workloads(cluster, trace)
        self.running: dict[str, dict[str, Workload]] = {name: {} for name in cluster.cluster_queues}
        self.queues = QueueManager(cluster)
        self.requeuer = Requeuer(self.queues, self.requeue_batch)
        self.preemptor = Preemptor(cluster, self.running)
        self.preemptor.remember = True  # every committed quota change bumps the tree's generation
        self.evicting: set[str] = set()
        self.preemptor.evicting = self.evicting  # ``CandidatesOrdering``: evicted candidates first
        self.scheduler = Scheduler(cluster, self.queues, self.preemptor, self.evicting, self._inadmissible)
        self.scheduler.hold_settled = True  # every change to a tree below wakes it (``_bump``)
        if cluster.fair_sharing is not None and cluster.admission_fair_sharing is None:
            # parked heads whose verdict provably repeats (admissions and releases: ``_log``)
            self.scheduler.verdicts = self.preemptor.verdicts = Verdicts(cluster, self.preemptor)
        self.events: list[Event] = []
        self.agenda: list[tuple[float, int, int, int, Workload]] = []
        # the trace's arrivals (``start``), sorted as the agenda would pop them: kept out of the
        # agenda's heap, whose every pop would otherwise sift through all of them (issue 44
        # item 3, round 9); ``_arrived`` of them are due and applied
        self._arrivals: list[tuple[float, int, int, int, Workload]] = []
        self._arrived = 0
        self.now = 0.0
        self._tie = 0
        self._evicted_at_instant: dict[tuple[str, str], int] = {}
        # preemptor -> victim -> evictions since the preemptor was last admitted (over time)
        self._evicted_since_admission: dict[str, dict[str, int]] = {}
        self._rounds = 0
        self._last_agenda = -math.inf  # when the agenda last had something due
        self._submits_due = 0  # arrivals still on the agenda: while any is, no state can repeat
        self.recurrence = Recurrence()  # a livelock over time (``whatif.recurrence``)
        self.hooks: Hooks | None = None  # set by ``whatif.multikueue`` for a multi-cluster run

    # --- agenda -----------------------------------------------------------------------------
    def _schedule(self, time: float, kind: int, wl: Workload) -> None:
        self._tie += 1
        if kind == SUBMIT:
            self._submits_due += 1
        heapq.heappush(self.agenda, (time, kind, self._tie, wl.generation, wl))

    def _record(
        self,
        wl: Workload,
        event: str,
        *,
        flavors: dict[str, dict[str, str]] | None = None,
        by: str | None = None,
        reason: str | None = None,
    ) -> None:
        """One event.  ``Event``'s keywords spelled out, not passed as ``**extra``: compiled, a
        call with a keyword dictionary goes through Python's argument parsing on every event
        (issue 44 item 3, round 13)."""
        self.events.append(
            Event(self.now, wl.key, event, wl.cluster_queue, flavors=flavors, by=by, reason=reason)
        )

    def _inadmissible(self, wl: Workload, reason: str) -> None:
        if not wl.reported_inadmissible:
            wl.reported_inadmissible = True
            self._record(wl, "inadmissible", reason=reason)

    # --- transitions --------------------------------------------------------------------------
    def _release(self, wl: Workload) -> None:
        assert wl.cluster_queue is not None
        if wl.key in self.evicting:  # released, or it ended while its job was being stopped
            self._evicting(wl, False)
        remove_all(self.cluster.cluster_queues[wl.cluster_queue].node, wl.usage)
        take(self.running[wl.cluster_queue], wl.key)
        self.capacity.release(wl, self.now)
        self.queues.released(wl)  # admission fair sharing: admitted usage
        self._log(wl, admitted=False)
        wl.usage = {}
        wl.generation += 1
        self._bump(wl)
        # ``QueueAssociatedInadmissibleWorkloadsAfter``: the parked workloads of the tree come back
        # with the requeuer's batch (``whatif.requeuer``)
        self.requeuer.notify(wl.cluster_queue, self.now)
        if self.hooks is not None:
            self.hooks.released(wl)

    def _log(self, wl: Workload, *, admitted: bool) -> None:
        """An admission or release about to move the tree's generation (``_bump``), for the
        parked verdicts (``whatif.fairsharing.verdicts``)."""
        verdicts = self.scheduler.verdicts
        if verdicts is not None:
            assert wl.cluster_queue is not None
            verdicts.changed(self.queues.root_of[wl.cluster_queue], wl, admitted=admitted)

    def _bump(self, wl: Workload) -> None:
        """An admission or release of quota: the tree's generation moves (remembered searches),
        and so does the workload's ClusterQueue's ``AllocatableResourceGeneration`` (the workload
        controller's cache update, ``clusterqueue.go`` ``addOrUpdateWorkload`` /
        ``deleteWorkload``)."""
        assert wl.cluster_queue is not None
        self.cluster.cluster_queues[wl.cluster_queue].node.allocatable_generation += 1
        root = self.queues.root_of[wl.cluster_queue]
        root.generation += 1
        self.queues.wake(root)

    def _wake(self, wl: Workload) -> None:
        """Something the cycle reads changed in ``wl``'s cohort tree: it is examined again."""
        assert wl.cluster_queue is not None
        self.queues.wake(self.queues.root_of[wl.cluster_queue])

    def _evicting(self, wl: Workload, evicting: bool) -> None:
        """``wl`` is evicted and still holds its quota (or no longer): searches see it first."""
        assert wl.cluster_queue is not None
        if evicting:
            self.evicting.add(wl.key)
            # the ``Evicted`` condition is a cache update too (``Update``, default case)
            self.cluster.cluster_queues[wl.cluster_queue].node.allocatable_generation += 1
        else:
            self.evicting.discard(wl.key)
        self.queues.root_of[wl.cluster_queue].evicting_epoch += 1
        self._wake(wl)

    def _checks(self, wl: Workload) -> dict[str, Check]:
        assert wl.cluster_queue is not None
        cq = self.cluster.cluster_queues[wl.cluster_queue]
        return {
            flavor: cq.provisioning[flavor]
            for flavor in sorted({f for f, _ in wl.usage})
            if flavor in cq.provisioning
        }

    def _delay(self, wl: Workload) -> float:
        """How long this ProvisioningRequest takes: the constant, or a seeded uniform draw."""
        if isinstance(self.provisioning_delay, tuple):
            low, high = self.provisioning_delay
            return float(round(random.Random(f"{wl.seq}/{wl.failed_requests}").uniform(low, high)))
        return self.provisioning_delay

    def _reserve(self, e: Entry) -> None:
        wl = e.workload
        wl.usage = dict(e.assignment.usage)  # already added to the tree by the cycle
        wl.flavors = e.assignment.flavors()
        wl.reserved_at = self.now
        wl.last_scan = None
        assert wl.cluster_queue is not None
        self.running[wl.cluster_queue][wl.key] = wl
        self._evicted_since_admission.pop(wl.key, None)
        self.queues.forget(wl)  # out of the queue: no longer its sticky head
        self.queues.reserved(wl, self.now)  # admission fair sharing: the entry penalty
        self._log(wl, admitted=True)
        self._bump(wl)
        if self.hooks is not None and self.cluster.cluster_queues[wl.cluster_queue].multikueue_check:
            wl.state = RESERVED  # the MultiKueue check is Pending until a worker admits a copy
            wl.reserved_since = self.now
            self.hooks.dispatch(wl)
            return
        checks = self._checks(wl)
        if checks:
            wl.state = RESERVED
            wl.reserved_since = self.now
            provisions = any(c.provisions for c in checks.values())
            self._schedule(self.now + (self._delay(wl) if provisions else 0.0), CHECK, wl)
        else:
            self._admit(wl)

    def _admit(self, wl: Workload, *, finish: bool = True) -> None:
        """Admitted; it ends after its duration (``finish``), or when its worker says so."""
        if wl.state == RESERVED and wl.cluster_queue is not None:  # checks Ready: a cache update
            self.cluster.cluster_queues[wl.cluster_queue].node.allocatable_generation += 1
        wl.state = ADMITTED
        self.queues.admitted(wl, self.now)  # admission fair sharing: settle the penalty
        wl.reported_inadmissible = False
        if wl.first_admitted_at is None:
            wl.first_admitted_at = self.now
        self._record(wl, "admitted", flavors=wl.flavors)
        if finish:
            self._schedule(self.now + wl.duration, FINISH, wl)
        if self.hooks is not None:
            self.hooks.admitted(wl)

    def _waited_for_capacity(self, wl: Workload, extra: float = 0.0) -> None:
        if wl.first_admitted_at is None and wl.reserved_since is not None:
            wl.capacity_wait += self.now - wl.reserved_since + extra
        wl.reserved_since = None

    def _check(self, wl: Workload) -> None:
        checks = self._checks(wl)
        placements = []
        for flavor, check in checks.items():
            placement, reason = self.capacity.place(wl, flavor, check)
            if placement is None:
                self._request_failed(wl, check, f"flavor {flavor}: {reason}")
                return
            placements.append(placement)
        self.capacity.hold(wl, placements, self.now)
        self._waited_for_capacity(wl)
        self._admit(wl)
        runs = [c.max_run_seconds for c in checks.values() if c.provisions and c.max_run_seconds is not None]
        if runs and min(runs) < wl.duration:
            self._schedule(self.now + min(runs), EXPIRE, wl)

    def _request_failed(self, wl: Workload, check: Check, reason: str) -> None:
        """``syncCheckStates`` on a Failed request: Retry with back-off, or Rejected past the limit."""
        wl.failed_requests += 1
        attempt = wl.failed_requests
        retry = attempt <= check.retry.limit
        backoff = check.retry.backoff(attempt) if retry else 0.0
        self._waited_for_capacity(wl, backoff)
        self._release(wl)
        wl.reported_inadmissible = False
        if retry:
            wl.state = PENDING
            self._record(
                wl,
                "requeued",
                reason=f"ProvisioningRequest attempt {attempt} failed ({reason}); check {check.name} "
                f"retries in {backoff:g} s (retryStrategy: {check.retry.limit} retries)",
            )
            self._schedule(self.now + backoff, REQUEUE, wl)
            return
        wl.state = REJECTED
        self.recurrence.progress()
        self.queues.forget(wl)
        self._inadmissible(
            wl,
            f"ProvisioningRequest attempt {attempt} failed ({reason}); check {check.name} is Rejected "
            f"after {check.retry.limit} retries",
        )

    def _expire(self, wl: Workload) -> None:
        """GKE removes queued-provisioning nodes at ``maxRunDurationSeconds``; the workload ends."""
        self._release(wl)
        wl.state = FINISHED
        self._record(wl, "finished", reason="maxRunDurationSeconds reached: GKE removed its nodes")
        self.recurrence.progress()
        if self.hooks is not None:
            self.hooks.finished(wl)

    def _evict(self, victim: Workload) -> None:
        """The victim's job is stopped: ``QuotaReserved`` is cleared and its usage leaves the
        cache, the cohort's inadmissible workloads are moved back (``_release``) and the victim
        is requeued at once (``workload_controller.go`` ``Update``, case
        ``FromQuotaReservedOrAdmittedToPending``: ``AddOrUpdateWorkloadWithoutLock`` when no
        requeue back-off is due), into its heap behind its queue's sticky preemptor
        (``cluster_queue.go`` ``baseCompareFunc``: the sticky workload first, then priority,
        then age) -- the parked workloads of its tree come back only with the requeuer's batch.

        In the instant view (``requeue_batch`` 0) with no eviction delay, the victim competes
        again only once this instant has settled: the preemptor, requeued at once, is admitted
        into the freed quota by the next cycles first (the simulator's former choice).
        """
        self._waited_for_capacity(victim)
        self._release(victim)
        victim.state = PENDING
        victim.reported_inadmissible = False
        if self.eviction_delay > 0 or self.requeue_batch > 0:
            self.queues.push_new(victim)
        else:
            self._schedule(self.now, REQUEUE, victim)

    def _submit(self, wl: Workload) -> None:
        if self.hooks is not None and not self.hooks.accept(wl):
            return
        if wl.cluster_queue is None or wl.cluster_queue not in self.cluster.cluster_queues:
            wl.reported_inadmissible = False
            self._inadmissible(
                wl, f"LocalQueue {wl.namespace}/{wl.queue} does not exist or names no known ClusterQueue"
            )
            return
        self.queues.push_new(wl)

    # --- loop --------------------------------------------------------------------------------
    def _livelock(self, victim: Workload, by: Workload) -> None:
        """The same preemptor evicting the same victim again and again at one instant: Kueue's
        scheduler would repeat this cycle for ever too, so it is reported, not waited out."""
        pair = (by.key, victim.key)
        seen = self._evicted_at_instant.get(pair, 0) + 1
        self._evicted_at_instant[pair] = seen
        victims = self._evicted_since_admission.setdefault(by.key, {})
        victims[victim.key] = again = victims.get(victim.key, 0) + 1
        if again % LIVELOCK_REPEATS == 0 and seen < LIVELOCK_REPEATS and self._only_evictions_ahead():
            raise NotSettledError(
                f"time {self.now:g}, scheduling cycle {self.scheduler.cycles}: livelock: {by.key} has preempted "
                f"{victim.key} {again} times without being admitted, each release letting the victim back in "
                "first, and nothing else is left to happen (Kueue's scheduler would repeat this for ever)"
            )
        if seen >= LIVELOCK_REPEATS:
            raise NotSettledError(
                f"time {self.now:g}, scheduling cycle {self.scheduler.cycles}: livelock: {by.key} has preempted "
                f"{victim.key} {seen} times at this instant and the cycles keep repeating (Kueue's scheduler "
                "would repeat them for ever)"
            )

    def _only_evictions_ahead(self) -> bool:
        """Nothing but releases of evicted victims is left on the agenda: a preemptor that keeps
        losing its victim back at each release will never be admitted."""
        if self._arrived < len(self._arrivals):  # an arrival is left (not an EVICT)
            return False
        return all(kind == EVICT for _, kind, _, _, _ in self.agenda)

    def _settle(self) -> None:
        """Kueue's scheduling loop at one instant, until it would find nothing new to do.

        ``scheduler.go`` ``schedule`` runs again as soon as a head is back in a heap: a skipped
        head and one pending preemption (``requeueAndUpdate`` -> ``RequeueIfNotPresent`` with
        ``immediate``), a StrictFIFO head, a head whose flavor scan has flavors left
        (``requeueIfNotPresent``: ``PendingFlavors``).  Only parked heads wait for an event
        (``QueueInadmissibleWorkloads``).  So cycles go on while one admits, evicts or parks; a
        quiet cycle (every head back in its heap) changes only the heads' scan progress and the
        sticky marks, and Kueue's next cycle is then a function of those alone.  The instant ends
        when that next cycle is one already run in this quiet stretch: the same state as before
        this cycle (Kueue would repeat it for ever) or as after an earlier quiet cycle (a head
        alternating between flavors: Kueue keeps alternating until an event; here the next event
        finds the state at the first repeat)."""
        changed: list[str] = []
        seen: set[ScanState] = set()
        for _ in range(MAX_CYCLES_PER_INSTANT):
            outcome = self.scheduler.cycle()
            for e in outcome.admitted:
                self._reserve(e)
            for victim, by, reason in outcome.evictions:
                self._livelock(victim, by)
                self.recurrence.evicted()
                self._record(victim, "preempted", by=by.key, reason=reason)
                if self.eviction_delay > 0:
                    self._evicting(victim, True)
                    self._schedule(self.now + self.eviction_delay, EVICT, victim)
                else:
                    self._evict(victim)
            if not outcome.quiet:
                seen.clear()
                changed = [e.workload.key for e in outcome.admitted] + [
                    v.key for v, _, _ in outcome.evictions
                ]
                continue
            if outcome.after == outcome.before or outcome.after in seen:
                return
            seen.add(outcome.after)
        raise NotSettledError(
            f"time {self.now:g}, scheduling cycle {self.scheduler.cycles}: scheduling did not settle after "
            f"{MAX_CYCLES_PER_INSTANT} cycles; the last changed {', '.join(changed[:5]) or 'only queues'}"
        )

    def run(self) -> Outcome:
        with _collector_paused():
            return self._run()

    def _run(self) -> Outcome:
        self.start()
        while self.next_time() < math.inf:
            self.step()
        return self.outcome()

    # --- stepping (one simulation alone, or several on one clock: ``whatif.multikueue``) -----
    def start(self) -> None:
        """Put the trace's arrivals on the agenda: numbered as ``_schedule`` numbers entries, in
        a list sorted once (the order the heap would pop them in: time, kind, number -- numbers
        are unique, so no two entries compare further), merged with the heap's entries as they
        fall due (``_due``).  An arrival another simulation posts (``post``) goes to the heap."""
        arrivals = self._arrivals
        for wl in self.workloads:
            self._tie += 1
            self._submits_due += 1
            arrivals.append((wl.submit, SUBMIT, self._tie, wl.generation, wl))
        arrivals.sort()
        self._rounds = 0

    def next_time(self) -> float:
        """When the next event or requeuer batch is due (infinity when nothing is left)."""
        due = self.agenda[0][0] if self.agenda else math.inf
        if self._arrived < len(self._arrivals):
            due = min(due, self._arrivals[self._arrived][0])
        return min(due, self.requeuer.next_time())

    def _due(self) -> list[tuple[float, int, int, int, Workload]]:
        """The agenda's entries due now, taken off it, in the order one heap of all of them
        would pop them (``start``)."""
        due = []
        agenda, now = self.agenda, self.now
        while agenda and agenda[0][0] == now:
            due.append(heapq.heappop(agenda))
        arrivals, first = self._arrivals, self._arrived
        last = first
        while last < len(arrivals) and arrivals[last][0] == now:
            last += 1
        if last == first:
            return due
        self._arrived = last
        if not due:
            return arrivals[first:last]
        due.extend(arrivals[first:last])
        due.sort()  # both runs share the time: by kind, then number, as the heap pops them
        return due

    def step(self) -> None:
        """One round at the next instant: every event due then, the requeuer's batches due then,
        then the scheduling loop."""
        now = self.next_time()
        if now != self.now:
            self._rounds = 0
            self._evicted_at_instant.clear()
            self.scheduler.idle_until_next_instant()
        self._rounds += 1
        if self._rounds > MAX_ROUNDS_PER_INSTANT:
            left = self.agenda + self._arrivals[self._arrived :]
            keys = sorted({entry[4].key for entry in left if entry[0] == self.now})
            raise NotSettledError(
                f"time {self.now:g}, scheduling cycle {self.scheduler.cycles}: events at this instant keep "
                f"scheduling more ({MAX_ROUNDS_PER_INSTANT} rounds): {', '.join(keys[:5])}"
            )
        self.now = now
        self.queues.advance(self.now)  # admission fair sharing: usage samples due
        due = self._due()  # events this round schedules for now wait for the next round
        if due:
            self._last_agenda = self.now
        self._apply(due)
        # requests notified at this instant are served with the batch already due (the
        # delaying queue keeps one entry per tree), so they are served after the events
        moved = self.requeuer.flush(self.now)
        if not due and not moved:
            return  # a batch that moved nothing: the state is the last instant's settled one
        self._settle()
        if self._submits_due == 0 and self.recurrence.armed:
            self.recurrence.observe(self)

    def _apply(self, due: list[tuple[float, int, int, int, Workload]]) -> None:
        """The agenda's events due now, in their order."""
        for _, kind, _, generation, wl in due:
            if kind == SUBMIT:
                self._submits_due -= 1
                self._submit(wl)
            elif generation != wl.generation:
                continue  # the workload was evicted since this was scheduled
            elif kind == FINISH:
                self._release(wl)
                wl.state = FINISHED
                self._record(wl, "finished")
                self.recurrence.progress()
                if self.hooks is not None:
                    self.hooks.finished(wl)
            elif kind == CHECK:
                if wl.key not in self.evicting:  # ``resetChecksOnEviction``: back to Pending
                    self._check(wl)
            elif kind == EVICT:
                self._evict(wl)
            elif kind == REQUEUE:
                self.queues.push_new(wl)
            elif kind == EXPIRE:
                self._expire(wl)
            elif kind == REMOTE_ADMITTED:
                self._waited_for_capacity(wl)
                self._admit(wl, finish=False)
            elif kind == REMOTE_FINISHED:
                self._release(wl)
                wl.state = FINISHED
                self._record(wl, "finished")
                self.recurrence.progress()
            elif kind == DELETE:
                self._delete(wl)

    def seed(
        self,
        wl: Workload,
        flavors: dict[str, dict[str, str]],
        *,
        reserved_at: float,
        finish_at: float | None,
        check_at: float | None = None,
    ) -> None:
        """``wl`` already holds quota when the run starts (``whatif.status``: a replay from a
        cluster's current state).  Call after :meth:`start`, before the first :meth:`step`.

        Its usage is counted in the flavors Kueue assigned (``status.admission``
        ``podSetAssignments[].flavors``; Kueue v0.19.2 ``pkg/workload/usage.go``: the pod sets'
        requests, ``pods`` where the ClusterQueue covers it), as ``_reserve`` counts an
        assignment.  ``check_at`` None: admitted since ``reserved_at``, ending at ``finish_at``
        (None: not within the run); else quota reserved with its ProvisioningRequest answered at
        ``check_at`` (``_check``: provisioned when a pool can grow, else retried or rejected)."""
        assert wl.cluster_queue is not None
        cq = self.cluster.cluster_queues[wl.cluster_queue]
        counts_pods = cq.group_of("pods") is not None
        usage: dict[FlavorResource, int] = {}
        for ps in wl.pod_sets:
            requests = dict(ps.totals)
            if counts_pods:
                requests["pods"] = ps.count * 1000
            for res, amount in requests.items():
                flavor = flavors.get(ps.name, {}).get(res)
                if flavor is not None and amount:
                    fr = flavor_resource(flavor, res)
                    usage[fr] = usage.get(fr, 0) + amount
        add_all(cq.node, usage)
        wl.usage = usage
        wl.flavors = flavors
        wl.reserved_at = reserved_at
        self.running[wl.cluster_queue][wl.key] = wl
        self.workloads.append(wl)
        self._bump(wl)
        if check_at is not None:
            wl.state = RESERVED
            wl.reserved_since = reserved_at
            self._schedule(check_at, CHECK, wl)
            return
        wl.state = ADMITTED
        wl.first_admitted_at = reserved_at
        placements = []
        for flavor, check in self._checks(wl).items():
            placement, _ = self.capacity.place(wl, flavor, check)
            if placement is not None:  # its nodes exist; a pool over its size is not refused
                placements.append(placement)
        self.capacity.hold(wl, placements, reserved_at)
        if finish_at is not None:
            self._schedule(finish_at, FINISH, wl)

    def outcome(self) -> Outcome:
        """The run's result; it ends at its last event or arrival (a requeuer batch that moved
        nothing after the last finish is not part of the run)."""
        last = self.events[-1].time if self.events else self.now
        end = max(
            [min(self.now, max(last, self._last_agenda))]
            + [w.submit for w in self.workloads if math.isfinite(w.submit)]
        )
        return Outcome(self.events, self.workloads, end, self.capacity.close(end))

    def post(self, time: float, kind: int, wl: Workload) -> None:
        """An event another simulation on the same clock sends (``whatif.multikueue``)."""
        self._schedule(time, kind, wl)

    def _delete(self, wl: Workload) -> None:
        """The workload object is deleted (a MultiKueue worker's copy that lost): out of its
        queue, or its quota and nodes released; its pending events become stale."""
        if wl.state in (FINISHED, REJECTED, DELETED):
            return
        if wl.holds_quota():
            self._release(wl)
        else:
            self.queues.remove(wl)
            wl.generation += 1
            if wl.cluster_queue in self.cluster.cluster_queues:  # ``Delete``: notified all the same
                self.requeuer.notify(wl.cluster_queue, self.now)
        wl.state = DELETED
        self._record(wl, "deleted")
        self.recurrence.progress()


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the run, as it was before afterwards.

    A run allocates millions of short-lived objects that reference counting frees, next to a
    live set that grows with the trace (workloads, the event log); each full collection walks
    that whole live set, so with the collector on the cost per workload grows with the trace
    (``python -m benchmarks.whatif_bench``: about 16% of a 100,000-workload run).  The run makes
    no reference cycles of its own to leave behind."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
