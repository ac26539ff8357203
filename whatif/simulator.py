"""The discrete-event loop: arrivals, admissions, admission checks, preemptions and finishes.

At each instant the simulator applies every event due (finishes, evictions and admission-check
results first, then arrivals in creation order) and then runs scheduling cycles until one changes
nothing, so the state at time T is the settled state (issue 14).  An eviction by preemption frees
its quota after ``eviction_delay`` seconds (default 0: at once) and requeues the victim, which
competes again once the cycles after its eviction have settled (see ``Simulation._evict``).

Admission checks (Kueue v0.19.2 ``pkg/controller/admissionchecks/provisioning``): on a flavor
with a ``queued-provisioning.gke.io`` ProvisioningRequest check, a workload holds its quota for
``provisioning_delay`` seconds before it is admitted; when its GPUs on that flavor exceed the
largest single node pool behind the flavor, the request fails as GKE fails it (one request scales
one pool) and the workload is not admitted.  Other checks are taken as Ready at once.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

from whatif.cluster import Cluster
from whatif.errors import WhatIfError
from whatif.preemption import Preemptor
from whatif.queues import QueueManager
from whatif.scheduler import Entry, Scheduler
from whatif.trace import Trace
from whatif.tree import remove_all
from whatif.workload import ADMITTED, FINISHED, PENDING, REJECTED, RESERVED, Workload

GPU = "nvidia.com/gpu"
FINISH, EVICT, CHECK, SUBMIT, REQUEUE = range(5)
MAX_CYCLES_PER_INSTANT = 100_000


@dataclass
class Event:
    time: float
    workload: str
    event: str
    cluster_queue: str | None
    flavors: dict[str, dict[str, str]] | None = None
    by: str | None = None
    reason: str | None = None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"time": _num(self.time), "workload": self.workload, "event": self.event}
        out["clusterQueue"] = self.cluster_queue
        if self.flavors is not None:
            out["flavors"] = self.flavors
        if self.by is not None:
            out["by"] = self.by
        if self.reason is not None:
            out["reason"] = self.reason
        return out


def _num(value: float) -> float | int:
    return int(value) if float(value).is_integer() else round(value, 3)


@dataclass
class Outcome:
    events: list[Event] = field(default_factory=list)
    workloads: list[Workload] = field(default_factory=list)
    end: float = 0.0


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


class Simulation:
    def __init__(
        self,
        cluster: Cluster,
        trace: Trace,
        *,
        provisioning_delay: float | None = None,
        eviction_delay: float = 0.0,
    ) -> None:
        self.cluster = cluster
        self.provisioning_delay = (
            provisioning_delay if provisioning_delay is not None else (trace.provisioning_delay or 0.0)
        )
        self.eviction_delay = eviction_delay
        self.workloads = build_workloads(cluster, trace)
        self.running: dict[str, dict[str, Workload]] = {name: {} for name in cluster.cluster_queues}
        self.queues = QueueManager(cluster)
        self.preemptor = Preemptor(cluster, self.running)
        self.evicting: set[str] = set()
        self.scheduler = Scheduler(cluster, self.queues, self.preemptor, self.evicting, self._inadmissible)
        self.events: list[Event] = []
        self.agenda: list[tuple[float, int, int, int, Workload]] = []
        self.now = 0.0
        self._tie = 0

    # --- agenda -----------------------------------------------------------------------------
    def _schedule(self, time: float, kind: int, wl: Workload) -> None:
        self._tie += 1
        heapq.heappush(self.agenda, (time, kind, self._tie, wl.generation, wl))

    def _record(self, wl: Workload, event: str, **extra: object) -> None:
        self.events.append(Event(self.now, wl.key, event, wl.cluster_queue, **extra))  # type: ignore[arg-type]

    def _inadmissible(self, wl: Workload, reason: str) -> None:
        if not wl.reported_inadmissible:
            wl.reported_inadmissible = True
            self._record(wl, "inadmissible", reason=reason)

    # --- transitions --------------------------------------------------------------------------
    def _release(self, wl: Workload) -> None:
        assert wl.cluster_queue is not None
        remove_all(self.cluster.cluster_queues[wl.cluster_queue].node, wl.usage)
        self.running[wl.cluster_queue].pop(wl.key, None)
        wl.usage = {}
        wl.generation += 1
        self.queues.queue_inadmissible(wl.cluster_queue)

    def _reserve(self, e: Entry) -> None:
        wl = e.workload
        wl.usage = dict(e.assignment.usage)  # already added to the tree by the cycle
        wl.flavors = e.assignment.flavors()
        wl.reserved_at = self.now
        assert wl.cluster_queue is not None
        self.running[wl.cluster_queue][wl.key] = wl
        needs_check = any(flavor in e.cq.provisioning_flavors for flavor, _ in wl.usage)
        if needs_check:
            wl.state = RESERVED
            self._schedule(self.now + self.provisioning_delay, CHECK, wl)
        else:
            self._admit(wl)

    def _admit(self, wl: Workload) -> None:
        wl.state = ADMITTED
        wl.reported_inadmissible = False
        if wl.first_admitted_at is None:
            wl.first_admitted_at = self.now
        self._record(wl, "admitted", flavors=wl.flavors)
        self._schedule(self.now + wl.duration, FINISH, wl)

    def _check(self, wl: Workload) -> None:
        assert wl.cluster_queue is not None
        cq = self.cluster.cluster_queues[wl.cluster_queue]
        for flavor in sorted(cq.provisioning_flavors):
            gpus = wl.usage.get((flavor, GPU), 0)
            largest = self.cluster.largest_pool_gpus.get(flavor)
            if largest is not None and gpus > largest:
                reason = (
                    f"ProvisioningRequest failed: {gpus // 1000} GPUs on flavor {flavor} exceed the largest "
                    f"queued node pool behind it ({largest // 1000} GPUs); GKE scales one pool per request"
                )
                self._release(wl)
                wl.state = REJECTED
                wl.reported_inadmissible = False
                self._inadmissible(wl, reason)
                return
        self._admit(wl)

    def _evict(self, victim: Workload) -> None:
        """Free the victim's quota now; requeue it once this instant has settled.

        The preemptor, requeued at once, is admitted into the freed quota by the next cycles;
        the victim competes again only after that (its pods must stop before its job is
        suspended and requeued).  Requeueing both together can loop forever at one instant: a
        head the victim's quota cannot help blocks the preemptor's queue for a cycle while the
        victim takes its quota back, and the preemptor evicts it again.
        """
        self.evicting.discard(victim.key)
        self._release(victim)
        victim.state = PENDING
        victim.reported_inadmissible = False
        self._schedule(self.now, REQUEUE, victim)

    def _submit(self, wl: Workload) -> None:
        if wl.cluster_queue is None or wl.cluster_queue not in self.cluster.cluster_queues:
            wl.reported_inadmissible = False
            self._inadmissible(
                wl, f"LocalQueue {wl.namespace}/{wl.queue} does not exist or names no known ClusterQueue"
            )
            return
        self.queues.push(wl)

    # --- loop --------------------------------------------------------------------------------
    def _settle(self) -> None:
        for _ in range(MAX_CYCLES_PER_INSTANT):
            outcome = self.scheduler.cycle()
            for e in outcome.admitted:
                self._reserve(e)
            for victim, by, reason in outcome.evictions:
                self._record(victim, "preempted", by=by.key, reason=reason)
                if self.eviction_delay > 0:
                    self.evicting.add(victim.key)
                    self._schedule(self.now + self.eviction_delay, EVICT, victim)
                else:
                    self._evict(victim)
            if not outcome.changed:
                return
        raise WhatIfError(
            f"time {self.now:g}: scheduling did not settle after {MAX_CYCLES_PER_INSTANT} cycles"
        )

    def run(self) -> Outcome:
        for wl in self.workloads:
            self._schedule(wl.submit, SUBMIT, wl)
        while self.agenda:
            self.now = self.agenda[0][0]
            due = []  # what is due now; events this round schedules for now wait for the next round
            while self.agenda and self.agenda[0][0] == self.now:
                due.append(heapq.heappop(self.agenda))
            for _, kind, _, generation, wl in due:
                if kind == SUBMIT:
                    self._submit(wl)
                elif generation != wl.generation:
                    continue  # the workload was evicted since this was scheduled
                elif kind == FINISH:
                    self._release(wl)
                    wl.state = FINISHED
                    self._record(wl, "finished")
                elif kind == CHECK:
                    self._check(wl)
                elif kind == EVICT:
                    self._evict(wl)
                elif kind == REQUEUE:
                    self.queues.push(wl)
            self._settle()
        end = max([self.now] + [w.submit for w in self.workloads if math.isfinite(w.submit)])
        return Outcome(self.events, self.workloads, end)
