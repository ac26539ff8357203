"""The ``--json`` document: events in the order they happen, and per-ClusterQueue figures.

Per queue: ``admitted`` and ``preempted`` count events; ``waitSeconds`` is each admitted
workload's first admission time minus its submit time (p50/p95 by nearest rank); ``gpuUtilisation``
is the GPU-seconds its admitted workloads held between time 0 and the end of the simulation,
over its nominal GPU quota times that span (above 1 when it borrows; null without GPU quota);
``neverAdmitted`` lists workloads still not admitted when the simulation ends (starved, rejected
by an admission check, or unable ever to fit).
"""

from __future__ import annotations

import math
from typing import Any

from whatif.cluster import Cluster
from whatif.simulator import GPU, Outcome

NO_QUEUE = "(no ClusterQueue)"


def percentile(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def _num(value: float) -> float | int:
    return int(value) if float(value).is_integer() else round(value, 3)


def queue_figures(cluster: Cluster, outcome: Outcome) -> dict[str, dict[str, Any]]:
    names = sorted(cluster.cluster_queues)
    admitted = dict.fromkeys(names, 0)
    preempted = dict.fromkeys(names, 0)
    gpu_seconds = dict.fromkeys(names, 0.0)
    open_since: dict[str, tuple[float, int]] = {}
    gpus_of = {w.key: w for w in outcome.workloads}
    span_end = max(outcome.end, 0.0)
    for ev in outcome.events:
        cq = ev.cluster_queue
        if cq not in admitted:
            continue
        if ev.event == "admitted":
            admitted[cq] += 1
            wl = gpus_of[ev.workload]
            gpus = sum(ps.total().get(GPU, 0) for ps in wl.pod_sets)
            open_since[ev.workload] = (ev.time, gpus)
        elif ev.event in ("preempted", "finished") and ev.workload in open_since:
            start, gpus = open_since.pop(ev.workload)
            gpu_seconds[cq] += gpus / 1000 * max(0.0, min(ev.time, span_end) - max(start, 0.0))
            if ev.event == "preempted":
                preempted[cq] += 1
        elif ev.event == "preempted":
            preempted[cq] += 1
    for key, (start, gpus) in open_since.items():
        cq = gpus_of[key].cluster_queue
        if cq in gpu_seconds:
            gpu_seconds[cq] += gpus / 1000 * max(0.0, span_end - max(start, 0.0))
    waits: dict[str, list[float]] = {n: [] for n in names}
    never: dict[str, list[str]] = {n: [] for n in names}
    for wl in outcome.workloads:
        cq = wl.cluster_queue if wl.cluster_queue in waits else None
        if cq is None:
            never.setdefault(NO_QUEUE, []).append(wl.key)
            continue
        if wl.first_admitted_at is None:
            never[cq].append(wl.key)
        else:
            waits[cq].append(wl.first_admitted_at - wl.submit)
    out: dict[str, dict[str, Any]] = {}
    for name in sorted(never):
        nominal = cluster.gpu_nominal(name) / 1000 if name in cluster.cluster_queues else 0
        w = waits.get(name, [])
        out[name] = {
            "admitted": admitted.get(name, 0),
            "preempted": preempted.get(name, 0),
            "waitSeconds": {
                "p50": _num(percentile(w, 50)),
                "p95": _num(percentile(w, 95)),
                "max": _num(max(w) if w else 0.0),
            },
            "gpuUtilisation": round(gpu_seconds.get(name, 0.0) / (nominal * span_end), 4)
            if nominal and span_end > 0
            else None,
            "neverAdmitted": sorted(never[name]),
        }
    return out


def document(cluster: Cluster, outcome: Outcome) -> dict[str, Any]:
    fair = cluster.fair_sharing
    return {
        "events": [e.to_json() for e in outcome.events],
        "queues": queue_figures(cluster, outcome),
        "fairSharing": {"preemptionStrategies": list(fair.strategies)} if fair else None,
        "notes": list(cluster.notes),
    }
