"""One KAI scheduling session: open it (queue usage and fair shares), then run the actions
allocate, reclaim and preempt in that order.

kai-scheduler/KAI-Scheduler v0.17.0:

- ``pkg/scheduler/conf_util/scheduler_conf_util.go``: the default actions are ``allocate,
  consolidation, reclaim, preempt, stalegangeviction`` (consolidation is not modelled: it only
  moves running pods between nodes);
- ``actions/utils/job_order_by_queue.go`` ``JobsOrderByQueues``: the next job is found by walking
  the queue tree from the top, at each level taking the child queue first in
  ``proportion`` queue order with its best pending job; within a leaf queue jobs go by the
  ``priority`` plugin (higher first), then creation time (``framework/session_plugins.go``
  ``JobOrderFn``).  Victims are walked the same way with every comparison reversed
  (``VictimQueue``: the queue furthest over its share, the lowest-priority, newest job first);
- ``actions/allocate/allocate.go``, ``actions/common/allocate.go`` ``AllocateJob``: a gang that
  passes ``IsJobOverQueueCapacity`` (limit on the queue and every ancestor; a non-preemptible job
  within deserved quota) is placed whole or not at all;
- ``actions/reclaim/reclaim.go``: a job whose queue stays within its fair share
  (``CanReclaimResources``) may evict preemptible jobs of *other* queues that pass
  ``reclaimVictimFilterFn``; the scenario must be ``Reclaimable``;
- ``actions/preempt/preempt.go``: a job may evict preemptible, lower-priority jobs of its *own*
  queue (``buildFilterFuncForPreempt``), unless it is non-preemptible over quota.

Victims are added one job at a time in victim order until the preemptor fits on the nodes and
the scenario is valid (the solvers' accumulating scenarios, ``actions/common/solvers``); evicted
jobs go back to pending with their creation time, and the preemptor starts on the freed
resources (pipelined).  Preemptibility is ``pkg/common/podgroup/preemptible.go``
``CalculatePreemptibility``: priority below 100 is preemptible.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from whatif.kai.cluster import (
    PENDING,
    RUNNING,
    Job,
    Node,
    Placement,
    place,
    place_job,
    total_resources,
    unplace,
)
from whatif.kai.proportion import (
    RESOURCES,
    QueueAttrs,
    Vector,
    can_reclaim,
    chain,
    non_preemptible_over_quota,
    over_limit,
    queue_order,
    reclaimable,
    set_fair_shares,
    vector,
    victim_filter,
)
from whatif.pack import NON_PREEMPTIBLE_FROM  # preemptible.go nonPreemptiblePriorityThreshold


def preemptible(priority: int) -> bool:
    """``CalculatePreemptibility`` without an explicit ``preemptibility``."""
    return priority < NON_PREEMPTIBLE_FROM


def job_key(job: Job) -> tuple[int, int, str]:
    """``JobOrderFn``: higher priority, then older, then name."""
    return (-job.priority, job.seq, job.key)


class Session:
    """The state one session reads and changes: queues (cloned shares), nodes, jobs."""

    def __init__(self, queues: Mapping[str, QueueAttrs], nodes: list[Node], jobs: Iterable[Job]) -> None:
        self.queues = {name: q.clone() for name, q in queues.items()}
        self.nodes = nodes
        self.jobs = [j for j in jobs if j.queue in self.queues and not self.queues[j.queue].children]
        self.total = total_resources(nodes)
        # what the session did, in order: ("admitted", job, None) or (action, victim, preemptor)
        self.log: list[tuple[str, Job, Job | None]] = []
        for job in self.jobs:
            demand = job.demand()
            for q in chain(self.queues, job.queue):
                for r in RESOURCES:
                    share = q.of(r)
                    share.request += demand[r]
                    if job.state == RUNNING:
                        share.allocated += demand[r]
                        if not job.preemptible:
                            share.allocated_not_preemptible += demand[r]
        set_fair_shares(self.queues, self.total)

    # --- bookkeeping (allocateHandlerFn / deallocateHandlerFn) -------------------------------
    def _charge(self, job: Job, sign: float, queues: Mapping[str, QueueAttrs] | None = None) -> None:
        demand = job.demand()
        for q in chain(queues or self.queues, job.queue):
            for r in RESOURCES:
                q.of(r).allocated += sign * demand[r]
                if not job.preemptible:
                    q.of(r).allocated_not_preemptible += sign * demand[r]

    def over_capacity(self, job: Job) -> str | None:
        """``IsJobOverQueueCapacity``: over a limit, or non-preemptible over deserved quota."""
        demand = job.demand()
        where = over_limit(self.queues, job.queue, demand)
        if where is not None:
            return f"over the limit of queue {where}"
        if not job.preemptible:
            where = non_preemptible_over_quota(self.queues, job.queue, demand)
            if where is not None:
                return f"non-preemptible over the quota of queue {where}"
        return None

    def _start(self, job: Job) -> bool:
        placements = place_job(self.nodes, job)
        if placements is None:
            return False
        job.placements = placements
        job.state = RUNNING
        self._charge(job, 1.0)
        self.log.append(("admitted", job, None))
        return True

    # --- JobsOrderByQueues -------------------------------------------------------------------
    def _ordered(self, jobs: list[Job], *, victims: bool) -> Iterable[Job]:
        """Pop jobs in ``JobsOrderByQueues`` order (``victims``: reversed, for victim queues)."""
        by_queue: dict[str, list[Job]] = {}
        for job in sorted(jobs, key=job_key, reverse=victims):
            by_queue.setdefault(job.queue, []).append(job)
        popped: dict[str, Vector] = {}

        def head(name: str) -> tuple[str, Job] | None:
            q = self.queues[name]
            if not q.children:
                return (name, by_queue[name][0]) if by_queue.get(name) else None
            best: tuple[str, str, Job] | None = None
            for child in q.children:
                found = head(child)
                if found is not None and (
                    best is None
                    or self._before(child, found[1], best[0], best[2], victims=victims, popped=popped)
                ):
                    best = (child, found[0], found[1])
            return (best[1], best[2]) if best else None

        roots = [n for n, q in self.queues.items() if q.parent is None]  # unrooted ones are left out
        while True:
            best: tuple[str, str, Job] | None = None
            for root in roots:
                found = head(root)
                if found is not None and (
                    best is None
                    or self._before(root, found[1], best[0], best[2], victims=victims, popped=popped)
                ):
                    best = (root, found[0], found[1])
            if best is None:
                return
            leaf, job = best[1], best[2]
            by_queue[leaf].pop(0)
            if victims:
                acc = popped.setdefault(leaf, vector())
                for r, v in job.demand().items():
                    acc[r] += v
            yield job

    def _before(
        self, a: str, a_job: Job, b: str, b_job: Job, *, victims: bool, popped: Mapping[str, Vector]
    ) -> bool:
        qa, qb = self.queues[a], self.queues[b]
        if not victims:
            return queue_order(qa, qb, a_job.demand(), b_job.demand(), self.total) < 0
        va = _plus(popped.get(a_job.queue), a_job.demand())
        vb = _plus(popped.get(b_job.queue), b_job.demand())
        return queue_order(qa, qb, None, None, self.total, left_victims=va, right_victims=vb) > 0

    # --- actions -----------------------------------------------------------------------------
    def pending(self) -> list[Job]:
        return [j for j in self.jobs if j.state == PENDING]

    def allocate(self) -> None:
        """``allocateAction.Execute``."""
        for job in list(self._ordered(self.pending(), victims=False)):
            if self.over_capacity(job) is None:
                self._start(job)

    def reclaim(self) -> None:
        """``reclaimAction.Execute``."""
        for job in list(self._ordered(self.pending(), victims=False)):
            if job.state != PENDING:
                continue
            demand = job.demand()
            if not can_reclaim(self.queues[job.queue], demand, job.preemptible):
                continue
            snapshot = {n: q.clone() for n, q in self.queues.items()}  # jobSimulationQueues
            candidates = [
                j
                for j in self.jobs
                if j.state == RUNNING
                and j.preemptible
                and j.queue != job.queue
                and victim_filter(self.queues, job.queue, demand, j.queue)
            ]

            def valid(chosen: list[Job], job: Job = job, snapshot: dict[str, QueueAttrs] = snapshot) -> bool:
                by_queue: dict[str, list[Vector]] = {}
                for v in chosen:
                    by_queue.setdefault(v.queue, []).append(v.demand())
                return reclaimable(
                    snapshot, job.queue, job.demand(), preemptible=job.preemptible, victims=by_queue
                )

            self._solve(job, candidates, valid, "reclaim")

    def preempt(self) -> None:
        """``preemptAction.Execute``."""
        for job in list(self._ordered(self.pending(), victims=False)):
            if job.state != PENDING:
                continue
            if not job.preemptible and non_preemptible_over_quota(self.queues, job.queue, job.demand()):
                continue
            candidates = [
                j
                for j in self.jobs
                if j.state == RUNNING and j.preemptible and j.priority < job.priority and j.queue == job.queue
            ]
            self._solve(job, candidates, lambda chosen: True, "preempt")

    def _solve(
        self, job: Job, candidates: list[Job], valid: Callable[[list[Job]], bool], action: str
    ) -> None:
        """Accumulate victims in victim order until ``job`` fits and the scenario is valid.

        As ``by_pod_solver.go`` ``tryScenarioWithEvictedVictims``: every victim so far is taken
        off, the preemptor placed, then each victim placed again where it still fits (it is
        pipelined, not evicted); the validator sees only the victims really evicted
        (``handleScenarioSolution`` with ``allowConsolidatingReclaim``, true by default:
        ``cmd/scheduler/app/options/options.go``), and a solved trial is committed as it stands."""
        if not candidates:
            return
        chosen: list[Job] = []
        for victim in self._ordered(candidates, victims=True):
            chosen.append(victim)
            self._lift(victim)
            if self.over_capacity(job) is not None:
                continue
            placements = place_job(self.nodes, job)
            if placements is None:
                continue
            self._charge(job, 1.0)
            kept: dict[Job, list[Placement]] = {}
            for v in chosen:
                again = place_job(self.nodes, v) if self.over_capacity(v) is None else None
                if again is not None:
                    kept[v] = again
                    self._charge(v, 1.0)
            evicted = [v for v in chosen if v not in kept]
            if evicted and valid(evicted):
                self._commit(job, placements, kept, evicted, action)
                return
            for v, again in kept.items():
                for p in again:
                    unplace(p)
                self._charge(v, -1.0)
            for p in placements:
                unplace(p)
            self._charge(job, -1.0)
        self._restore(chosen)

    def _commit(
        self,
        job: Job,
        placements: list[Placement],
        kept: dict[Job, list[Placement]],
        evicted: list[Job],
        action: str,
    ) -> None:
        """Keep the trial as it stands (the solver's statement is committed): the evicted victims
        stay off, the victims placed again run where the trial put them (pipelined, perhaps on
        another node), and the preemptor runs where the trial placed it.  Putting the victims
        back where they were first could leave the preemptor no room after the evictions."""
        for v in evicted:
            v.placements = []
            v.state = PENDING
            self.log.append((action, v, job))
        for v, again in kept.items():
            v.placements = again
        job.placements = placements
        job.state = RUNNING
        self.log.append(("admitted", job, None))

    def _lift(self, victim: Job) -> None:
        """Take ``victim`` off its nodes and its queues for a trial (``_restore`` puts it back)."""
        for p in victim.placements:
            unplace(p)
        self._charge(victim, -1.0)

    def _restore(self, chosen: list[Job]) -> None:
        """Undo the trial removal of ``chosen`` (their pods go back where they were)."""
        for v in chosen:
            v.placements = [place(p.node, p.spec, p.devices) for p in v.placements]
            self._charge(v, 1.0)

    def run(self) -> None:
        self.allocate()
        self.reclaim()
        self.preempt()


def _plus(a: Mapping[str, float] | None, b: Mapping[str, float]) -> Vector:
    return {r: (a or {}).get(r, 0.0) + b[r] for r in RESOURCES}
