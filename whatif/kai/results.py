"""Per-KAI-queue figures of a run, and the ``--json`` document.

Per queue (a parent queue sums its leaves): ``admitted``, ``reclaimed`` (evicted by another
queue's reclaim) and ``preempted`` (evicted by a higher-priority job of its own queue) count
events; ``waitSeconds`` is first admission minus submission (nearest-rank p50/p95, as
:func:`whatif.results.percentile`); ``gpuQuota`` is the queue's deserved GPUs; ``gpuCapacity``
what it can really hold: the GPUs of the nodes, or less when the queue or an ancestor has a GPU
limit; ``gpuUtilisation`` the GPU-seconds its running PodGroups were charged (fractions as
fractions) between 0 and the last event over ``gpuCapacity`` times that span;
``neverAdmitted`` the PodGroups still not started at the end.
"""

from __future__ import annotations

from typing import Any

from whatif.amounts import figure
from whatif.kai.model import KaiCluster
from whatif.kai.proportion import GPU, UNLIMITED, chain
from whatif.kai.simulator import Outcome
from whatif.results import wait_figures


def _leaves_under(cluster: KaiCluster, name: str) -> set[str]:
    return {leaf for leaf in cluster.leaves() if any(q.name == name for q in chain(cluster.queues, leaf))}


def gpu_capacity(cluster: KaiCluster, name: str) -> float:
    total = float(sum(n.gpus for n in cluster.nodes))
    for q in chain(cluster.queues, name):
        limit = q.of(GPU).max_allowed
        if limit != UNLIMITED:
            total = min(total, limit)
    return total


def queue_figures(cluster: KaiCluster, outcome: Outcome) -> dict[str, dict[str, Any]]:
    jobs = {j.key: j for j in outcome.jobs}
    span = max(outcome.end, 0.0)
    counts: dict[str, dict[str, int]] = {}
    gpu_seconds: dict[str, float] = {}
    running: dict[str, float] = {}
    for ev in outcome.events:
        c = counts.setdefault(ev.queue, {"admitted": 0, "reclaimed": 0, "preempted": 0})
        if ev.event in c:
            c[ev.event] += 1
        if ev.event == "admitted":
            running[ev.workload] = ev.time
        elif ev.event in ("reclaimed", "preempted", "finished") and ev.workload in running:
            start = running.pop(ev.workload)
            held = max(0.0, min(ev.time, span) - max(start, 0.0))
            gpu_seconds[ev.queue] = gpu_seconds.get(ev.queue, 0.0) + jobs[ev.workload].gpus() * held
    for key, start in running.items():
        job = jobs[key]
        gpu_seconds[job.queue] = gpu_seconds.get(job.queue, 0.0) + job.gpus() * max(
            0.0, span - max(start, 0.0)
        )
    out: dict[str, dict[str, Any]] = {}
    for name in sorted(cluster.queues):
        leaves = _leaves_under(cluster, name)
        mine = [j for j in outcome.jobs if j.queue in leaves]
        waits = [j.first_started - j.submit for j in mine if j.first_started is not None]
        q = cluster.queues[name]
        capacity = gpu_capacity(cluster, name)
        held = sum(gpu_seconds.get(leaf, 0.0) for leaf in leaves)
        deserved = q.of(GPU).deserved
        out[name] = {
            "parent": q.parent,
            "admitted": sum(counts.get(leaf, {}).get("admitted", 0) for leaf in leaves),
            "reclaimed": sum(counts.get(leaf, {}).get("reclaimed", 0) for leaf in leaves),
            "preempted": sum(counts.get(leaf, {}).get("preempted", 0) for leaf in leaves),
            "waitSeconds": wait_figures(waits),
            "gpuQuota": None if deserved == UNLIMITED else figure(deserved),
            "gpuCapacity": figure(capacity),
            "gpuUtilisation": round(held / (capacity * span), 4) if capacity and span > 0 else None,
            "neverAdmitted": sorted(j.key for j in mine if j.first_started is None),
        }
    unqueued = sorted(ev.workload for ev in outcome.events if ev.event == "inadmissible")
    if unqueued:
        out["(no KAI leaf queue)"] = {
            "parent": None,
            "admitted": 0,
            "reclaimed": 0,
            "preempted": 0,
            "waitSeconds": {"p50": 0, "p95": 0, "max": 0},
            "gpuQuota": None,
            "gpuCapacity": None,
            "gpuUtilisation": None,
            "neverAdmitted": unqueued,
        }
    return out


def document(cluster: KaiCluster, outcome: Outcome) -> dict[str, Any]:
    return {
        "scheduler": "kai-scheduler v0.17.0",
        "events": [e.to_json() for e in outcome.events],
        "queues": queue_figures(cluster, outcome),
        "nodes": {"count": len(cluster.nodes), "gpus": sum(n.gpus for n in cluster.nodes)},
        "notes": list(cluster.notes),
    }
