"""Kueue 0.19.2's metrics, and the settings without which a metric has no series.

Source: kubernetes-sigs/kueue v0.19.2 ``pkg/metrics/metrics.go`` (each ``prometheus.New*Vec``
with ``Subsystem: constants.KueueName`` = ``kueue`` or ``constants.MultiKueueName`` =
``multikueue``; ``Register`` / ``RegisterLQMetrics``).  A metric can be registered and still
never get a series: the settings below are where upstream decides that.

- ``cluster_queue_resources`` -- ``metrics.enableClusterQueueResources`` (cmd/kueue/main.go
  ``WithResourceMetrics``; pkg/cache/scheduler/clusterqueue.go ``reportResourceMetrics``:
  nominal quota, borrowing and lending limits, resource reservation and usage;
  pkg/cache/queue/metrics.go ``reportCQPendingWorkloads``: resource pending).
- ``local_queue_metrics`` -- the ``LocalQueueMetrics`` feature gate (Beta, on by default since
  0.17: pkg/features/kube_features.go) and ``metrics.localQueueMetrics.enable`` when that block is
  written (pkg/metrics/localqueue.go ``IsEnabled``): ``Register`` calls ``RegisterLQMetrics`` only
  with the gate on.
- ``fair_sharing`` -- the ``fairSharing`` block: pkg/controller/core/clusterqueue_controller.go and
  cohort_controller.go report the weighted shares only when fair sharing is on (the ClusterQueue
  one also only with ``cluster_queue_resources``).
- ``wait_for_pods_ready`` -- pkg/controller/jobframework/reconciler.go observes the ready-wait
  histograms only in the ``if r.waitForPodsReady`` branch.
- ``workload_creation_latency`` -- the ``MetricForWorkloadCreationLatency`` gate (Beta, on).
- ``cohorts`` -- the ``MetricsForCohorts`` gate (Beta, on): pkg/cache/scheduler/cache.go and
  cohort_metrics.go.
- ``admission_fair_sharing`` -- the ``AdmissionFairSharing`` gate with ``admissionFairSharing``
  configured: pkg/controller/core/localqueue_controller.go.
- ``multikueue`` -- a MultiKueue manager cluster (pkg/controller/admissionchecks/multikueue).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

MetricType = Literal["counter", "gauge", "histogram"]
Setting = Literal[
    "cluster_queue_resources",
    "local_queue_metrics",
    "fair_sharing",
    "wait_for_pods_ready",
    "workload_creation_latency",
    "cohorts",
    "admission_fair_sharing",
    "multikueue",
]

# What each setting is called in Kueue's configuration, for messages and the report.
SETTING_KEYS: Final[dict[Setting, str]] = {
    "cluster_queue_resources": "metrics.enableClusterQueueResources: true",
    "local_queue_metrics": "the LocalQueueMetrics feature gate (and metrics.localQueueMetrics.enable when set)",
    "fair_sharing": "a fairSharing block",
    "wait_for_pods_ready": "waitForPodsReady (not disabled)",
    "workload_creation_latency": "the MetricForWorkloadCreationLatency feature gate",
    "cohorts": "the MetricsForCohorts feature gate",
    "admission_fair_sharing": "the AdmissionFairSharing feature gate with admissionFairSharing configured",
    "multikueue": "a MultiKueue setup (MultiKueue admission checks)",
}


@dataclass(frozen=True)
class Metric:
    name: str
    type: MetricType
    needs: frozenset[Setting] = frozenset()


def _m(name: str, type_: MetricType, *needs: Setting) -> Metric:
    return Metric(name, type_, frozenset(needs))


_LQ: Final = "local_queue_metrics"
_CQR: Final = "cluster_queue_resources"

KUEUE_METRICS: Final[tuple[Metric, ...]] = (
    _m("kueue_admission_attempts_total", "counter"),
    _m("kueue_admission_attempt_duration_seconds", "histogram"),
    _m("multikueue_workloads_dispatched_total", "counter", "multikueue"),
    _m("multikueue_workloads_admitted_total", "counter", "multikueue"),
    _m("kueue_admission_cycle_preemption_skips", "gauge"),
    _m("kueue_build_info", "gauge"),
    _m("kueue_pending_workloads", "gauge"),
    _m("kueue_local_queue_pending_workloads", "gauge", _LQ),
    _m("kueue_finished_workloads", "gauge"),
    _m("kueue_local_queue_finished_workloads", "gauge", _LQ),
    _m("kueue_quota_reserved_workloads_total", "counter"),
    _m("kueue_local_queue_quota_reserved_workloads_total", "counter", _LQ),
    _m("kueue_finished_workloads_total", "counter"),
    _m("kueue_local_queue_finished_workloads_total", "counter", _LQ),
    _m("kueue_quota_reserved_wait_time_seconds", "histogram"),
    _m("kueue_pods_ready_to_evicted_time_seconds", "histogram"),
    _m("kueue_local_queue_quota_reserved_wait_time_seconds", "histogram", _LQ),
    _m("kueue_admitted_workloads_total", "counter"),
    _m("kueue_local_queue_admitted_workloads_total", "counter", _LQ),
    _m("kueue_admission_wait_time_seconds", "histogram"),
    _m("kueue_ready_wait_time_seconds", "histogram", "wait_for_pods_ready"),
    _m("kueue_admitted_until_ready_wait_time_seconds", "histogram", "wait_for_pods_ready"),
    _m("kueue_local_queue_admission_wait_time_seconds", "histogram", _LQ),
    _m("kueue_admission_checks_wait_time_seconds", "histogram"),
    _m("kueue_local_queue_admission_checks_wait_time_seconds", "histogram", _LQ),
    _m("kueue_local_queue_ready_wait_time_seconds", "histogram", _LQ, "wait_for_pods_ready"),
    _m("kueue_local_queue_admitted_until_ready_wait_time_seconds", "histogram", _LQ, "wait_for_pods_ready"),
    _m("kueue_workload_creation_latency_seconds", "histogram", "workload_creation_latency"),
    _m("kueue_pod_scheduling_gate_removal_seconds", "histogram"),
    _m("kueue_evicted_workloads_total", "counter"),
    _m("kueue_replaced_workload_slices_total", "counter"),
    _m("kueue_local_queue_evicted_workloads_total", "counter", _LQ),
    _m("kueue_evicted_workloads_once_total", "counter"),
    _m("kueue_preempted_workloads_total", "counter"),
    _m("kueue_workload_eviction_latency_seconds", "histogram"),
    _m("kueue_reserving_active_workloads", "gauge"),
    _m("kueue_local_queue_reserving_active_workloads", "gauge", _LQ),
    _m("kueue_admitted_active_workloads", "gauge"),
    _m("kueue_local_queue_admitted_active_workloads", "gauge", _LQ),
    _m("kueue_cluster_queue_status", "gauge"),
    _m("kueue_local_queue_status", "gauge", _LQ),
    _m("kueue_unadmitted_workloads", "gauge"),
    _m("kueue_local_queue_unadmitted_workloads", "gauge", _LQ),
    _m("kueue_cluster_queue_resource_reservation", "gauge", _CQR),
    _m("kueue_cluster_queue_resource_pending", "gauge", _CQR),
    _m("kueue_cluster_queue_resource_usage", "gauge", _CQR),
    _m("kueue_local_queue_resource_reservation", "gauge", _LQ),
    _m("kueue_local_queue_resource_usage", "gauge", _LQ),
    _m("kueue_local_queue_admission_fair_sharing_usage", "gauge", _LQ, "admission_fair_sharing"),
    _m("kueue_cluster_queue_nominal_quota", "gauge", _CQR),
    _m("kueue_cluster_queue_borrowing_limit", "gauge", _CQR),
    _m("kueue_cluster_queue_lending_limit", "gauge", _CQR),
    _m("kueue_cluster_queue_weighted_share", "gauge", _CQR, "fair_sharing"),
    _m("kueue_cohort_weighted_share", "gauge", "fair_sharing"),
    _m("kueue_cohort_subtree_quota", "gauge", "cohorts"),
    _m("kueue_cohort_subtree_admitted_workloads_total", "counter", "cohorts"),
    _m("kueue_cohort_subtree_resource_reservations", "gauge", "cohorts"),
    _m("kueue_cohort_subtree_admitted_active_workloads", "gauge", "cohorts"),
    _m("kueue_cohort_info", "gauge", "cohorts"),
    _m("kueue_cluster_queue_info", "gauge"),
)

BY_NAME: Final[dict[str, Metric]] = {m.name: m for m in KUEUE_METRICS}
# The series names a Prometheus histogram exposes (client_golang: <name>_bucket/_sum/_count).
HISTOGRAM_SUFFIXES: Final = ("_bucket", "_sum", "_count")
PREFIXES: Final = ("kueue_", "multikueue_")


def metric_for_series(series: str) -> Metric | None:
    """The Kueue metric a series name belongs to (histogram series map to their histogram)."""
    found = BY_NAME.get(series)
    if found is not None:
        return found
    for suffix in HISTOGRAM_SUFFIXES:
        base = BY_NAME.get(series.removesuffix(suffix)) if series.endswith(suffix) else None
        if base is not None and base.type == "histogram":
            return base
    return None


def is_kueue_series(series: str) -> bool:
    return series.startswith(PREFIXES)
