"""Kueue's metric series as a simulated run would have produced them (the what-if event trace).

Each function turns the what-if simulator's outcome (whatif/simulator.py: its events and
workloads, Kueue v0.19.2 admission rules) into the series Kueue 0.19.2 would export, sampled every
``step`` seconds, following where upstream observes each metric:

- ``kueue_admission_checks_wait_time_seconds`` (histogram, buckets ``generateExponentialBuckets
  (14)`` = 1, 2.5, 5, ... 10240: pkg/metrics/metrics.go) is observed once per admission with the time
  since the QuotaReserved transition (pkg/controller/core/workload_controller.go, ``Admitted``
  branch).  In the simulator that is the workload's ``capacity_wait`` when no ProvisioningRequest
  of it failed; a workload with failed attempts is refused here (its last-reservation time is not
  in the outcome), never silently dropped.
- ``kueue_evicted_workloads_total{reason}``: a ``requeued`` event (a failed ProvisioningRequest
  with retries left: Kueue evicts with reason ``AdmissionCheck``, apis/kueue/v1beta2
  ``WorkloadEvictedByAdmissionCheck``) and a ``preempted`` event (reason ``Preempted``).
- ``kueue_admitted_active_workloads``: admitted minus finished/preempted, per ClusterQueue.
"""

from __future__ import annotations

from collections.abc import Iterable

from tests.alerts.promql_eval import Series
from whatif.simulator import Outcome

CHECK_WAIT_BUCKETS = (1.0, *(2.5 * 2**i for i in range(13)), float("inf"))


def _grid(end: float, step: float) -> list[float]:
    count = int(end // step) + 1
    return [i * step for i in range(count)]


def _le(bound: float) -> str:
    return "+Inf" if bound == float("inf") else f"{bound:g}"


def admission_check_wait(
    outcome: Outcome, cluster_queue: str, end: float, step: float = 60.0
) -> list[Series]:
    observations: list[tuple[float, float]] = []
    for wl in outcome.workloads:
        if wl.cluster_queue != cluster_queue or wl.first_admitted_at is None:
            continue
        if wl.failed_requests:
            raise ValueError(f"{wl.key}: failed ProvisioningRequests; its check wait is not in the outcome")
        observations.append((wl.first_admitted_at, wl.capacity_wait))
    observations.sort()
    out = []
    for bound in CHECK_WAIT_BUCKETS:
        labels = {
            "__name__": "kueue_admission_checks_wait_time_seconds_bucket",
            "cluster_queue": cluster_queue,
            "le": _le(bound),
        }
        samples = [
            (t, float(sum(1 for at, v in observations if at <= t and v <= bound))) for t in _grid(end, step)
        ]
        out.append(Series(labels, samples))
    return out


def evictions(outcome: Outcome, cluster_queue: str, end: float, step: float = 60.0) -> list[Series]:
    reasons = {"requeued": "AdmissionCheck", "preempted": "Preempted"}
    times: dict[str, list[float]] = {r: [] for r in reasons.values()}
    for ev in outcome.events:
        if ev.cluster_queue == cluster_queue and ev.event in reasons:
            times[reasons[ev.event]].append(ev.time)
    return [
        Series(
            {"__name__": "kueue_evicted_workloads_total", "cluster_queue": cluster_queue, "reason": reason},
            [(t, float(sum(1 for at in at_times if at <= t))) for t in _grid(end, step)],
        )
        for reason, at_times in sorted(times.items())
    ]


def admitted_active(outcome: Outcome, cluster_queue: str, end: float, step: float = 60.0) -> Series:
    """Admitted and not yet finished or evicted; a workload preempted while only reserved (waiting
    for its checks) was never counted."""
    active: set[str] = set()
    changes: list[tuple[float, int]] = []
    for ev in outcome.events:
        if ev.cluster_queue != cluster_queue:
            continue
        if ev.event == "admitted" and ev.workload not in active:
            active.add(ev.workload)
            changes.append((ev.time, 1))
        elif ev.event in ("finished", "preempted") and ev.workload in active:
            active.discard(ev.workload)
            changes.append((ev.time, -1))
    samples = [(t, float(sum(d for at, d in changes if at <= t))) for t in _grid(end, step)]
    return Series({"__name__": "kueue_admitted_active_workloads", "cluster_queue": cluster_queue}, samples)


def constant(name: str, labels: dict[str, str], values: Iterable[tuple[float, float]]) -> Series:
    """A synthetic series (for what the simulator does not model: DCGM, waitForPodsReady evictions)."""
    return Series({"__name__": name, **labels}, list(values))
