"""The KAI what-if over time: arrivals, sessions, evictions and finishes.

At every instant something happens (a PodGroup is created or its pods finish) KAI's scheduling
sessions run (``allocate, reclaim, preempt``: :mod:`whatif.kai.session`) until one changes
nothing.  KAI opens a session every ``schedulePeriod`` (1 s by default); here evicted pods
release their resources at once, so the sessions of one instant stand for the next few seconds.
An evicted PodGroup goes back to pending with its creation time and starts over when it is
allocated again.  More than ``MAX_SESSIONS`` sessions at one instant is reported as a livelock.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any

from whatif.errors import NotSettledError
from whatif.kai.cluster import FINISHED, PENDING, RUNNING, Job, unplace
from whatif.kai.model import KaiCluster
from whatif.kai.session import Session
from whatif.kai.workloads import pod_specs, priority_of
from whatif.trace import Trace

MAX_SESSIONS = 200


@dataclass(frozen=True)
class Event:
    time: float
    workload: str
    event: str  # admitted | reclaimed | preempted | finished | inadmissible
    queue: str
    by: str | None = None
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "time": self.time,
            "workload": self.workload,
            "event": self.event,
            "queue": self.queue,
        }
        if self.by:
            out["by"] = self.by
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass
class Outcome:
    events: list[Event] = field(default_factory=list)
    jobs: list[Job] = field(default_factory=list)
    end: float = 0.0


def jobs_of(cluster: KaiCluster, trace: Trace) -> list[Job]:
    order = sorted(range(len(trace.entries)), key=lambda i: (trace.entries[i].submit, i))
    jobs = []
    for seq, i in enumerate(order):
        e = trace.entries[i]
        where = f"workloads[{i}]"
        priority, can_preempt = priority_of(e, cluster.priority_classes, where)
        jobs.append(
            Job(
                key=f"{e.namespace}/{e.name}",
                queue=e.queue,
                priority=priority,
                preemptible=can_preempt,
                seq=seq,
                pods=pod_specs(e, where),
                submit=e.submit,
                duration=e.duration,
            )
        )
    return jobs


def simulate(cluster: KaiCluster, trace: Trace) -> Outcome:
    jobs = jobs_of(cluster, trace)
    out = Outcome(jobs=jobs)
    leaves = set(cluster.leaves())
    arrivals = sorted(jobs, key=lambda j: (j.submit, j.seq))
    finishes: list[tuple[float, int, int]] = []  # (time, seq, generation)
    by_seq = {j.seq: j for j in jobs}
    active: list[Job] = []
    a = 0
    while a < len(arrivals) or finishes:
        now = min(
            arrivals[a].submit if a < len(arrivals) else float("inf"),
            finishes[0][0] if finishes else float("inf"),
        )
        while finishes and finishes[0][0] == now:
            _, seq, generation = heapq.heappop(finishes)
            job = by_seq[seq]
            if job.generation != generation or job.state != RUNNING:
                continue
            for p in job.placements:
                unplace(p)
            job.placements, job.state = [], FINISHED
            active.remove(job)
            out.events.append(Event(now, job.key, "finished", job.queue))
        while a < len(arrivals) and arrivals[a].submit == now:
            job = arrivals[a]
            a += 1
            if job.queue not in leaves:
                why = cluster.unrooted.get(job.queue) or (
                    "no such KAI queue" if job.queue not in cluster.queues else "not a leaf queue"
                )
                out.events.append(Event(now, job.key, "inadmissible", job.queue, reason=why))
                continue
            active.append(job)
        _settle(cluster, active, now, out, finishes)
        out.end = now
    return out


def _settle(
    cluster: KaiCluster, active: list[Job], now: float, out: Outcome, finishes: list[tuple[float, int, int]]
) -> None:
    for count in range(MAX_SESSIONS + 1):
        if not any(j.state == PENDING for j in active):
            return
        if count == MAX_SESSIONS:
            pending = sorted(j.key for j in active if j.state == PENDING)[:3]
            raise NotSettledError(
                f"time {now:g}, session {count}: livelock: sessions keep evicting and allocating ({', '.join(pending)})"
            )
        session = Session(cluster.queues, cluster.nodes, active)
        session.run()
        if not session.log:
            return
        for action, job, by in session.log:
            job.generation += 1
            if action == "admitted":
                job.started = now
                if job.first_started is None:
                    job.first_started = now
                heapq.heappush(finishes, (now + job.duration, job.seq, job.generation))
                out.events.append(Event(now, job.key, "admitted", job.queue))
                continue
            assert by is not None
            kind = "reclaimed" if action == "reclaim" else "preempted"
            reason = (
                f"reclaimed by queue {by.queue}"
                if action == "reclaim"
                else f"preempted by priority {by.priority}"
            )
            out.events.append(Event(now, job.key, kind, job.queue, by=by.key, reason=reason))
