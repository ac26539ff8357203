"""KubeRay v1.7.0 operator metrics.

Source: ray-project/kuberay v1.7.0 ``ray-operator/controllers/ray/metrics/``:
``ray_cluster_metrics.go`` (``NewRayClusterMetricsManager``: a ``prometheus.NewGaugeVec`` and
two ``prometheus.NewDesc`` collected as ``GaugeValue``), ``ray_job_metrics.go`` and
``ray_service_metrics.go`` likewise.  Every name is written in full with its ``kuberay_`` prefix.
(``client_go_metrics.go`` registers client-go's ``rest_client_*`` metrics: not this family.)

Ray's own ``ray_`` metrics are a different family (ray-project/ray): :mod:`.ray` lists the
documented ones.
"""

from __future__ import annotations

from typing import Final

from .kueue import MetricType

PREFIX: Final = "kuberay_"

KUBERAY_METRICS: Final[tuple[tuple[str, MetricType], ...]] = (
    ("kuberay_cluster_provisioned_duration_seconds", "gauge"),
    ("kuberay_cluster_info", "gauge"),
    ("kuberay_cluster_condition_provisioned", "gauge"),
    ("kuberay_job_execution_duration_seconds", "gauge"),
    ("kuberay_job_info", "gauge"),
    ("kuberay_job_deployment_status", "gauge"),
    ("kuberay_service_info", "gauge"),
    ("kuberay_service_condition_ready", "gauge"),
    ("kuberay_service_condition_upgrade_in_progress", "gauge"),
)
_NAMES: Final = frozenset(name for name, _ in KUBERAY_METRICS)


def kuberay_problem(series: str) -> str | None:
    """Why ``series`` is not a KubeRay v1.7.0 operator series (None: it is, or is not ``kuberay_``)."""
    if not series.startswith(PREFIX) or series in _NAMES:
        return None
    return f"the KubeRay v1.7.0 operator exports no {series} (ray-operator/controllers/ray/metrics/)"
