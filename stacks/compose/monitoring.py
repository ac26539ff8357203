"""The scrape layer: a PodMonitoring per installed operator, after the operators exist.

Order in one ``pulumi up``: provider (the cluster, whose ``monitoringConfig`` turns GKE's managed
collection on and with it the ``monitoring.googleapis.com`` CRDs) -> operator releases (Kueue's
release creates the ``<release>-metrics-reader`` ClusterRole the credentials bind to) -> these
objects.  See components/monitoring.py for what each scrape needs and why.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from components.kuberay import KUBERAY_NAMESPACE, KUBERAY_RELEASE_NAME
from components.monitoring import KueueMetricsScrape, KueueScrapeArgs, kuberay_operator_scrape, pod_monitoring
from stacks.compose.schedulers import Schedulers


@dataclass(frozen=True)
class MonitoringLayer:
    """Every PodMonitoring the stack declares, by operator."""

    pod_monitorings: dict[str, pulumi.CustomResource]


def build_monitoring(provider: pulumi.ProviderResource, schedulers: Schedulers) -> MonitoringLayer:
    """Declare the scrape objects for the operators ``schedulers`` installed."""
    found: dict[str, pulumi.CustomResource] = {}
    if schedulers.kueue is not None:
        installed = schedulers.kueue.configuration
        scrape = KueueMetricsScrape(
            "kueue-metrics",
            KueueScrapeArgs(release_name=installed.release_name, namespace=installed.namespace),
            opts=pulumi.ResourceOptions(provider=provider, depends_on=[schedulers.kueue.release]),
        )
        found["kueue"] = scrape.pod_monitoring
    if schedulers.kuberay is not None:
        found["kuberay-operator"] = pod_monitoring(
            "kuberay-operator-metrics",
            kuberay_operator_scrape(KUBERAY_RELEASE_NAME, KUBERAY_NAMESPACE),
            opts=pulumi.ResourceOptions(provider=provider, depends_on=[schedulers.kuberay.release]),
        )
    return MonitoringLayer(pod_monitorings=found)
