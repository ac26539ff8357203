"""The scrape layer: a PodMonitoring per installed operator, after the operators exist.

Order in one ``pulumi up``: provider (the cluster, whose ``monitoringConfig`` turns GKE's managed
collection on and with it the ``monitoring.googleapis.com`` CRDs) -> operator releases (Kueue's
release creates the ``<release>-metrics-reader`` ClusterRole the credentials bind to) -> these
objects.  See components/monitoring.py for what each scrape needs and why.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from components.gpu_operator import GPU_OPERATOR_NAMESPACE
from components.kai import KAI_NAMESPACE
from components.kuberay import KUBERAY_NAMESPACE, KUBERAY_RELEASE_NAME
from components.monitoring import (
    KueueMetricsScrape,
    KueueScrapeArgs,
    cluster_pod_monitoring,
    dcgm_exporter_scrape,
    kai_scrapes,
    kuberay_operator_scrape,
    pod_monitoring,
    ray_pods_scrape,
)
from components.observability.alerts import (
    AlertRule,
    AlertThresholds,
    alert_policy,
    alert_rules,
    policy_groups,
)
from components.observability.dashboard import DASHBOARD_OUTPUT, QueueView, page_name, stack_dashboards
from stacks.compose.schedulers import Schedulers
from stacks.config import StackConfig
from stacks.config.kai_queues import walk
from stacks.config.tenancy import teams_by_queue
from stacks.quantity import POLICIES_DIR

assert POLICIES_DIR  # importing stacks.quantity put the pack's package on sys.path

from gpu_batch_policy.primitives.go_duration import parse_go_duration  # noqa: E402


@dataclass(frozen=True)
class MonitoringLayer:
    """Every PodMonitoring the stack declares, by operator."""

    pod_monitorings: dict[str, pulumi.CustomResource]


@dataclass(frozen=True)
class DashboardLayer:
    """The stack's dashboards (one unless its queues need more pages), its alert policies by
    key, and the rules they were made from."""

    dashboards: tuple[gcp.monitoring.Dashboard, ...]
    alerts: dict[str, gcp.monitoring.AlertPolicy]
    rules: tuple[AlertRule, ...]


def build_monitoring(
    provider: pulumi.ProviderResource,
    schedulers: Schedulers,
    gpu_operator: pulumi.Resource | None = None,
    *,
    ray_workloads: bool = False,
    prefix: str = "",
) -> MonitoringLayer:
    """Declare the scrape objects for the operators ``schedulers`` installed, for the GPU
    Operator's dcgm-exporter when ``gpu_operator`` (its release) is installed, and for Ray pods
    when the stack declares Ray workloads (the pack requires a scrape to select pods the stack
    runs; once it exists it scrapes the teams' own Ray pods too)."""
    found: dict[str, pulumi.CustomResource] = {}
    if schedulers.kueue is not None:
        installed = schedulers.kueue.configuration
        scrape = KueueMetricsScrape(
            f"{prefix}kueue-metrics",
            KueueScrapeArgs(release_name=installed.release_name, namespace=installed.namespace),
            opts=pulumi.ResourceOptions(provider=provider, depends_on=[schedulers.kueue.release]),
        )
        found["kueue"] = scrape.pod_monitoring
    if schedulers.kuberay is not None:
        found["kuberay-operator"] = pod_monitoring(
            f"{prefix}kuberay-operator-metrics",
            kuberay_operator_scrape(KUBERAY_RELEASE_NAME, KUBERAY_NAMESPACE),
            opts=pulumi.ResourceOptions(provider=provider, depends_on=[schedulers.kuberay.release]),
        )
    if schedulers.kai is not None:
        for kai in kai_scrapes(KAI_NAMESPACE):
            found[kai.name] = pod_monitoring(
                f"{prefix}{kai.name}-metrics",
                kai,
                opts=pulumi.ResourceOptions(provider=provider, depends_on=[schedulers.kai.release]),
            )
    if schedulers.kuberay is not None and ray_workloads:
        found["ray-pods"] = cluster_pod_monitoring(
            f"{prefix}ray-pods-metrics",
            ray_pods_scrape(),
            opts=pulumi.ResourceOptions(provider=provider, depends_on=[schedulers.kuberay.release]),
        )
    if gpu_operator is not None:
        found["dcgm-exporter"] = pod_monitoring(
            f"{prefix}dcgm-exporter-metrics",
            dcgm_exporter_scrape(GPU_OPERATOR_NAMESPACE),
            opts=pulumi.ResourceOptions(provider=provider, depends_on=[gpu_operator]),
        )
    return MonitoringLayer(pod_monitorings=found)


def queue_views(config: StackConfig) -> list[QueueView]:
    """Every ClusterQueue of the stack with the teams whose LocalQueues point at it."""
    by_queue = teams_by_queue(config.teams)
    return [
        QueueView(
            cq.name,
            tuple(sorted(t.name for t in by_queue.get(cq.name, []))),
            provisioning_check=bool(cq.admission_checks),
        )
        for cq in config.kueue_queues.cluster_queues
    ]


def alert_thresholds(config: StackConfig) -> AlertThresholds:
    seconds = parse_go_duration(config.monitoring.max_provisioning_wait)
    assert seconds is not None  # the config model accepts positive Go durations only
    return AlertThresholds(
        max_provisioning_wait_seconds=float(seconds),
        idle_gpu_utilization_percent=config.monitoring.idle_gpu_utilization_percent,
        window_minutes=config.monitoring.alert_window_minutes,
    )


def build_dashboards(config: StackConfig, project: str) -> DashboardLayer:
    """The stack's dashboard and alert policies (components/observability/)."""
    views = queue_views(config) if config.kueue.enabled else []
    kai_queues = [queue.name for _, queue, _ in walk(config.kai_queues)] if config.kai.enabled else []
    dashboards = stack_dashboards(
        f"{config.cluster.name}-dashboard",
        project,
        f"gpu-batch {config.cluster.name}: queues and GPUs",
        views,
        kai_queues,
    )
    # The console address of each page, known once it exists (its id: projects/<p>/dashboards/<id>).
    for page, dashboard in enumerate(dashboards, 1):
        pulumi.export(
            page_name(DASHBOARD_OUTPUT, page),
            dashboard.id.apply(
                lambda id_: (
                    f"https://console.cloud.google.com/monitoring/dashboards/builder/{id_.rsplit('/', 1)[-1]}"
                    f"?project={project}"
                )
            ),
        )
    rules = alert_rules(views, alert_thresholds(config))
    channels = config.monitoring.notification_channels
    policies = {g.key: alert_policy(g, project, channels) for g in policy_groups(rules)}
    return DashboardLayer(dashboards=tuple(dashboards), alerts=policies, rules=tuple(rules))
