"""The ``--json`` document: events in the order they happen, and per-ClusterQueue figures.

Per queue: ``admitted`` and ``preempted`` count events; ``waitSeconds`` is each admitted
workload's first admission time minus its submit time (p50/p95 by nearest rank), split on average
into ``waitForQuotaSeconds`` (pending in the queue) and ``waitForCapacitySeconds`` (quota reserved
while its ProvisioningRequest is provisioned or failed, and the retry back-off);
``failedProvisioningRequests`` counts failed attempts; ``gpuCapacity`` is what the queue can
really hold: per GPU flavor, its nominal quota or the GPUs of the pools behind the flavor when
fewer; ``gpuUtilisation`` is the GPU-seconds its admitted workloads held between time 0 and the end
of the simulation over ``gpuCapacity`` times that span (above 1 when it borrows; null without GPU
quota); ``gpusHeldByFlavor`` splits the same GPU-seconds by the GPU flavor each admitted pod set
was assigned (the ``admitted`` event's flavors) over the span: the mean GPUs held per flavor; per node pool, ``nodeUtilisation`` is node-time held over ``maxNodes`` times the span;
``neverAdmitted`` lists workloads still not admitted when the simulation ends (starved, rejected
by an admission check, or unable ever to fit).
"""

from __future__ import annotations

import math
from typing import Any

from whatif.amounts import figure
from whatif.cluster import Cluster
from whatif.simulator import GPU, Outcome, _collector_paused
from whatif.workload import Workload

NO_QUEUE = "(no ClusterQueue)"
UNASSIGNED = "(no GPU flavor)"  # a GPU pod set the admission gave no flavor for: never expected


def percentile(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def wait_figures(waits: list[float]) -> dict[str, float | int]:
    """``waitSeconds``: nearest-rank p50 and p95, and the longest."""
    return {
        "p50": figure(percentile(waits, 50)),
        "p95": figure(percentile(waits, 95)),
        "max": figure(max(waits) if waits else 0.0),
    }


def queue_figures(cluster: Cluster, outcome: Outcome) -> dict[str, dict[str, Any]]:
    names = sorted(cluster.cluster_queues)
    admitted = dict.fromkeys(names, 0)
    preempted = dict.fromkeys(names, 0)
    gpu_seconds = dict.fromkeys(names, 0.0)
    by_flavor: dict[str, dict[str, float]] = {n: {} for n in names}
    open_since: dict[str, tuple[float, dict[str, int]]] = {}
    gpus_of = {w.key: w for w in outcome.workloads}
    span_end = max(outcome.end, 0.0)

    def held(cq: str, start: float, until: float, gpus: dict[str, int]) -> None:
        seconds = max(0.0, min(until, span_end) - max(start, 0.0))
        for flavor, milli in gpus.items():
            gpu_seconds[cq] += milli / 1000 * seconds
            by_flavor[cq][flavor] = by_flavor[cq].get(flavor, 0.0) + milli / 1000 * seconds

    for ev in outcome.events:
        cq = ev.cluster_queue
        if cq not in admitted:
            continue
        if ev.event == "admitted":
            admitted[cq] += 1
            open_since[ev.workload] = (ev.time, _gpus_by_flavor(gpus_of[ev.workload], ev.flavors))
        elif ev.event in ("preempted", "finished") and ev.workload in open_since:
            start, gpus = open_since.pop(ev.workload)
            held(cq, start, ev.time, gpus)
            if ev.event == "preempted":
                preempted[cq] += 1
        elif ev.event == "preempted":
            preempted[cq] += 1
    for key, (start, gpus) in open_since.items():
        cq = gpus_of[key].cluster_queue
        if cq in gpu_seconds:
            held(cq, start, span_end, gpus)
    waits: dict[str, list[float]] = {n: [] for n in names}
    for_capacity: dict[str, list[float]] = {n: [] for n in names}
    failed_requests = dict.fromkeys(names, 0)
    never: dict[str, list[str]] = {n: [] for n in names}
    for wl in outcome.workloads:
        cq = wl.cluster_queue if wl.cluster_queue in waits else None
        if cq is None:
            never.setdefault(NO_QUEUE, []).append(wl.key)
            continue
        failed_requests[cq] += wl.failed_requests
        if wl.first_admitted_at is None:
            never[cq].append(wl.key)
        else:
            waits[cq].append(wl.first_admitted_at - wl.submit)
            for_capacity[cq].append(wl.capacity_wait)
    out: dict[str, dict[str, Any]] = {}
    for name in sorted(never):
        capacity = gpu_capacity(cluster, name) / 1000 if name in cluster.cluster_queues else 0
        w = waits.get(name, [])
        cap = for_capacity.get(name, [])
        out[name] = {
            "admitted": admitted.get(name, 0),
            "preempted": preempted.get(name, 0),
            "waitSeconds": wait_figures(w),
            "waitForQuotaSeconds": figure(_mean([a - b for a, b in zip(w, cap, strict=True)])),
            "waitForCapacitySeconds": figure(_mean(cap)),
            "failedProvisioningRequests": failed_requests.get(name, 0),
            "gpuCapacity": figure(capacity) if capacity else None,
            "gpuUtilisation": round(gpu_seconds.get(name, 0.0) / (capacity * span_end), 4)
            if capacity and span_end > 0
            else None,
            "gpusHeldByFlavor": {
                flavor: round(seconds / span_end, 4)
                for flavor, seconds in sorted(by_flavor.get(name, {}).items())
                if span_end > 0
            },
            "neverAdmitted": sorted(never[name]),
        }
    return out


def _gpus_by_flavor(wl: Workload, flavors: dict[str, dict[str, str]] | None) -> dict[str, int]:
    """Milli-GPUs of an admitted workload per GPU flavor its pod sets were assigned (the
    ``admitted`` event's ``flavors``, Kueue's ``status.admission.podSetAssignments``)."""
    out: dict[str, int] = {}
    for ps in wl.pod_sets:
        milli = ps.total().get(GPU, 0)
        if milli:
            flavor = (flavors or {}).get(ps.name, {}).get(GPU, UNASSIGNED)
            out[flavor] = out.get(flavor, 0) + milli
    return out


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 1) if values else 0.0


def gpu_capacity(cluster: Cluster, cq: str) -> int:
    """Milli-GPUs the queue can really hold: per GPU flavor, its nominal quota, or less when the
    node pools behind the flavor hold fewer GPUs."""
    total = 0
    for (flavor, resource), quota in cluster.cluster_queues[cq].node.quotas.items():
        if resource != GPU:
            continue
        pools = cluster.pools.get(flavor)
        pool_gpus = sum(p.gpus_per_node * p.max_nodes for p in pools) * 1000 if pools else None
        total += quota.nominal if pool_gpus is None else min(quota.nominal, pool_gpus)
    return total


def pool_figures(cluster: Cluster, outcome: Outcome) -> dict[str, dict[str, Any]]:
    """Per node pool behind a ProvisioningRequest flavor: its nodes, and the share of node-time
    that admitted workloads held (nodes are provisioned per gang, so this is what the pool held)."""
    span = max(outcome.end, 0.0)
    out: dict[str, dict[str, Any]] = {}
    checked = {f for cq in cluster.cluster_queues.values() for f in cq.provisioning}
    for flavor, pools in cluster.pools.items():
        if flavor not in checked:
            continue
        for p in pools:
            held = outcome.pool_node_seconds.get(p.name, 0.0)
            out[p.name] = {
                "maxNodes": p.max_nodes,
                "gpusPerNode": p.gpus_per_node,
                "nodeUtilisation": round(held / (p.max_nodes * span), 4)
                if p.max_nodes and span > 0
                else None,
            }
    return dict(sorted(out.items()))


def document(cluster: Cluster, outcome: Outcome) -> dict[str, Any]:
    """Built with Python's cyclic garbage collector paused, as the run is
    (``whatif.simulator._collector_paused``): a dictionary per event next to the run's live set
    would start collections that walk that whole set (``python -m benchmarks.whatif_bench``'s
    overloaded trace at 100,000 workloads: 3.7 s with the collector on, 1.35 s paused)."""
    fair = cluster.fair_sharing
    with _collector_paused():
        return {
            "events": [e.to_json() for e in outcome.events],
            "queues": queue_figures(cluster, outcome),
            "pools": pool_figures(cluster, outcome),
            "fairSharing": {"preemptionStrategies": list(fair.strategies)} if fair else None,
            "admissionFairSharing": admission_fair_sharing_facts(cluster),
            "notes": list(cluster.notes),
        }


def admission_fair_sharing_facts(cluster: Cluster) -> dict[str, Any] | None:
    """What the run simulated of admission fair sharing: the usage-based ClusterQueues and the
    Configuration's half-life and sampling interval (None when no ClusterQueue uses it, as then
    it changes nothing: ``whatif.cluster``)."""
    afs = cluster.admission_fair_sharing
    if afs is None:
        return None
    return {
        "clusterQueues": sorted(afs.cluster_queues),
        "usageHalfLifeTimeSeconds": afs.config.half_life,
        "usageSamplingIntervalSeconds": afs.config.sampling,
    }
