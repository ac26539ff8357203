"""The PromQL behind the stack's dashboard and alerts.

Metric and label names (kubernetes-sigs/kueue v0.19.2 ``pkg/metrics/metrics.go``):
``kueue_pending_workloads{cluster_queue, status="active"|"inadmissible"}``,
``kueue_admission_wait_time_seconds`` and ``kueue_admission_checks_wait_time_seconds``
(histograms, ``cluster_queue``), ``kueue_cluster_queue_resource_usage`` /
``kueue_cluster_queue_nominal_quota{cluster_queue, flavor, resource}`` (need
``enableClusterQueueResources``, which components/kueue_config.py sets),
``kueue_evicted_workloads_total{cluster_queue, reason}`` (reasons ``PodsReadyTimeout``,
``AdmissionCheck``: apis/kueue/v1beta2/workload_types.go), ``kueue_preempted_workloads_total
{preempting_cluster_queue, reason}``, ``kueue_cluster_queue_status{cluster_queue, status}`` (one
series per status, 1 on the current one: ``CQStatuses``), ``kueue_admitted_active_workloads
{cluster_queue}``.  GPU metrics: NVIDIA/dcgm-exporter ``etc/dcp-metrics-included.csv`` (the GPU
Operator's default counters; policies/gpu_batch_policy/facts/metrics/dcgm.py, tag 4.5.3-4.8.2, the rows
through XID also read at the operator's pinned 4.6.0-4.8.3): ``DCGM_FI_DEV_GPU_UTIL`` (%),
``DCGM_FI_DEV_FB_USED`` (MiB), ``DCGM_FI_DEV_XID_ERRORS`` (last XID), labelled ``modelName`` and
``Hostname`` (``hostname`` from 4.6.0-4.8.3 on: :func:`xid_errors`).  Whether GKE's managed
DCGM exports the same names is not established here: GKE lists them on "Collect and view DCGM
metrics" (cloud.google.com/kubernetes-engine/docs/how-to/dcgm-metrics), whose table could not be
read (docs/monitoring.md), so on managed-DCGM-only pools these panels and the XID alert are
unverified.
"""

from __future__ import annotations

from typing import Final

GPU_RESOURCE: Final = "nvidia.com/gpu"
PODS_READY_TIMEOUT: Final = "PodsReadyTimeout"
ADMISSION_CHECK: Final = "AdmissionCheck"


def _cq(name: str) -> str:
    return f'cluster_queue="{name}"'


def pending(cq: str) -> str:
    return f"sum by (status) (kueue_pending_workloads{{{_cq(cq)}}})"


def admission_wait(cq: str, quantile: float, window: str = "10m") -> str:
    return (
        f"histogram_quantile({quantile}, sum by (le) "
        f"(rate(kueue_admission_wait_time_seconds_bucket{{{_cq(cq)}}}[{window}])))"
    )


def provisioning_wait(cq: str, quantile: float, window: str = "30m") -> str:
    """The admission-check (DWS ProvisioningRequest) wait."""
    return (
        f"histogram_quantile({quantile}, sum by (le) "
        f"(rate(kueue_admission_checks_wait_time_seconds_bucket{{{_cq(cq)}}}[{window}])))"
    )


def gpu_quota_usage(cq: str) -> str:
    return f'sum by (flavor) (kueue_cluster_queue_resource_usage{{{_cq(cq)}, resource="{GPU_RESOURCE}"}})'


def gpu_nominal_quota(cq: str) -> str:
    return f'sum by (flavor) (kueue_cluster_queue_nominal_quota{{{_cq(cq)}, resource="{GPU_RESOURCE}"}})'


def evictions(cq: str, window: str = "1h") -> str:
    return f"sum by (reason) (increase(kueue_evicted_workloads_total{{{_cq(cq)}}}[{window}]))"


def preemptions(cq: str, window: str = "1h") -> str:
    return f'sum by (reason) (increase(kueue_preempted_workloads_total{{preempting_cluster_queue="{cq}"}}[{window}]))'


# KAI Scheduler v0.17.0 queue metrics (``kai_`` prefix: --metrics-namespace default ``kai``;
# label ``queue_name``): pkg/queuecontroller/metrics/metrics.go ``queue_allocated_gpus`` /
# ``queue_deserved_gpus``, pkg/scheduler/metrics/metrics.go ``queue_fair_share_gpu``.


def kai_allocated_gpus(queue: str) -> str:
    return f'sum(kai_queue_allocated_gpus{{queue_name="{queue}"}})'


def kai_deserved_gpus(queue: str) -> str:
    return f'sum(kai_queue_deserved_gpus{{queue_name="{queue}"}})'


def kai_fair_share_gpus(queue: str) -> str:
    return f'sum(kai_queue_fair_share_gpu{{queue_name="{queue}"}})'


def gpu_utilization() -> str:
    return "avg by (modelName) (DCGM_FI_DEV_GPU_UTIL)"


def gpu_memory_used() -> str:
    return "sum by (modelName) (DCGM_FI_DEV_FB_USED)"


# --- alert conditions: each is true (a non-empty result) exactly when the alert should fire ---


def cluster_queue_not_active(cq: str) -> str:
    return f'max(kueue_cluster_queue_status{{{_cq(cq)}, status="active"}}) < 1'


def provisioning_wait_above(cq: str, max_seconds: float) -> str:
    return f"{provisioning_wait(cq, 0.95)} > {max_seconds:g}"


def bad_evictions(cq: str, window: str) -> str:
    reasons = f"{PODS_READY_TIMEOUT}|{ADMISSION_CHECK}"
    return f'sum by (reason) (increase(kueue_evicted_workloads_total{{{_cq(cq)}, reason=~"{reasons}"}}[{window}])) > 0'


def gpus_idle_while_admitted(percent: int) -> str:
    return f"(avg(DCGM_FI_DEV_GPU_UTIL) < {percent}) and on() (sum(kueue_admitted_active_workloads) > 0)"


def xid_errors() -> str:
    """Grouped by the node under both spellings: dcgm-exporter up to 4.5.3-4.8.2 labels it
    ``Hostname``, 4.6.0-4.8.3 -- the GPU Operator v26.7.0's pin -- ``hostname`` (release notes
    "Rename the Hostname label to hostname", #655).  By one spelling only, the incident of a
    cluster on the other would not name the node; a label a series lacks groups as empty."""
    return "max by (hostname, Hostname, gpu) (DCGM_FI_DEV_XID_ERRORS) > 0"
