"""KAI Scheduler v0.17.0's metrics, with the ``kai_`` prefix its documentation leaves out.

Source: kai-scheduler/KAI-Scheduler v0.17.0 ``pkg/scheduler/metrics/metrics.go`` and
``pkg/queuecontroller/metrics/metrics.go`` (``InitMetrics(namespace)``: every metric is
``promauto.New*`` with ``Namespace: namespace``), called with ``--metrics-namespace``, whose default
is ``constants.DefaultMetricsNamespace`` = ``kai`` (``pkg/common/constants/constants.go``;
``cmd/scheduler/app/options/options.go``).  So the series are ``kai_queue_allocated_gpus`` etc.;
a dashboard written from the docs' bare ``queue_allocated_gpus`` reads nothing.
"""

from __future__ import annotations

from typing import Final

from .kueue import MetricType

KAI_NAMESPACE: Final = "kai"

# (name without the namespace, type) -- scheduler, then queue controller.
KAI_METRICS: Final[tuple[tuple[str, MetricType], ...]] = (
    ("e2e_scheduling_latency_milliseconds", "gauge"),
    ("open_session_latency_milliseconds", "gauge"),
    ("close_session_latency_milliseconds", "gauge"),
    ("plugin_scheduling_latency_milliseconds", "gauge"),
    ("action_scheduling_latency_milliseconds", "gauge"),
    ("task_scheduling_latency_milliseconds", "histogram"),
    ("task_bind_latency_milliseconds", "histogram"),
    ("podgroups_scheduled_by_action", "counter"),
    ("podgroups_acted_on_by_action", "counter"),
    ("scenarios_simulation_by_action", "counter"),
    ("scenarios_filtered_by_action", "counter"),
    ("total_preemption_attempts", "counter"),
    ("queue_fair_share_cpu_cores", "gauge"),
    ("queue_fair_share_memory_gb", "gauge"),
    ("queue_fair_share_gpu", "gauge"),
    ("queue_cpu_usage", "gauge"),
    ("queue_memory_usage", "gauge"),
    ("queue_gpu_usage", "gauge"),
    ("usage_query_latency_milliseconds", "histogram"),
    ("pod_group_evicted_pods_total", "counter"),
    ("scenario_search_jobs_total", "counter"),
    ("scenario_search_action_budget_configured_seconds", "gauge"),
    ("scenario_search_job_budget_configured_seconds", "gauge"),
    ("scenario_search_generator_budget_configured_seconds", "gauge"),
    ("scenario_search_action_budget_exhausted_total", "counter"),
    ("scenario_search_duration_seconds", "histogram"),
    ("scenario_search_scenarios_total", "counter"),
    ("queue_info", "gauge"),
    ("queue_deserved_gpus", "gauge"),
    ("queue_quota_cpu_cores", "gauge"),
    ("queue_quota_memory_bytes", "gauge"),
    ("queue_allocated_gpus", "gauge"),
    ("queue_allocated_cpu_cores", "gauge"),
    ("queue_allocated_memory_bytes", "gauge"),
)
_TYPES: Final = dict(KAI_METRICS)
_SUFFIXES: Final = ("_bucket", "_sum", "_count")


def _base(name: str) -> str | None:
    if name in _TYPES:
        return name
    for suffix in _SUFFIXES:
        if name.endswith(suffix) and _TYPES.get(name.removesuffix(suffix)) == "histogram":
            return name.removesuffix(suffix)
    return None


def kai_problem(series: str, *, kai_installed: bool, namespace: str = KAI_NAMESPACE) -> str | None:
    """Why ``series`` is not a KAI v0.17.0 series (None when it is, or is not KAI's at all).

    A bare name (``queue_allocated_gpus``) is judged only when the stack installs KAI: another
    exporter may have a metric of that name."""
    prefix = f"{namespace}_"
    if series.startswith(prefix):
        if _base(series.removeprefix(prefix)) is None:
            return f"KAI Scheduler v0.17.0 exports no {series} (pkg/scheduler/metrics, pkg/queuecontroller/metrics)"
        return None
    if kai_installed and _base(series) is not None:
        return (
            f"KAI Scheduler v0.17.0 exports {series} as {prefix}{series}: its metrics carry the "
            f"--metrics-namespace prefix ({namespace!r} by default)"
        )
    return None
