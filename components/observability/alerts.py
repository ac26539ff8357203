"""The stack's alert policies: PromQL conditions (``conditionPrometheusQueryLanguage``).

Per ClusterQueue, labelled with its team(s) and queue: the queue is not active; evictions for
``PodsReadyTimeout`` or ``AdmissionCheck``; and, for a DWS queue, the provisioning-check wait p95
above ``monitoring.maxProvisioningWait``.  For the cluster (team ``platform``): GPUs idle while
workloads are admitted, and DCGM XID errors.

``disable_metric_validation``: Cloud Monitoring refuses a PromQL condition on a metric it has not
ingested yet (pulumi-gcp 10.2.0 ``AlertPolicyConditionConditionPrometheusQueryLanguageArgs``), which
on a new cluster is every Kueue metric until the first scrape; the pack checks instead that each
metric exists in the pinned Kueue and is exported under the stack's configuration
(rules/monitoring_queries.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import pulumi
import pulumi_gcp as gcp

from components.observability import queries as q
from components.observability.dashboard import QueueView

PLATFORM_TEAM: Final = "platform"
ALL_QUEUES: Final = "all"


@dataclass(frozen=True)
class AlertThresholds:
    max_provisioning_wait_seconds: float
    idle_gpu_utilization_percent: int
    window_minutes: int


@dataclass(frozen=True)
class AlertRule:
    """One alert policy: a PromQL condition that yields series exactly while it should fire."""

    key: str  # stable resource-name part
    display_name: str
    query: str
    team: str
    queue: str
    # How long the condition must hold ("for" in Prometheus terms).
    duration_seconds: int
    documentation: str

    def user_labels(self) -> dict[str, str]:
        return {"team": _label_value(self.team), "queue": _label_value(self.queue)}


def _label_value(text: str) -> str:
    """A Cloud Monitoring user label value: lowercase letters, digits, ``_`` and ``-``, at most 63
    (AlertPolicy ``user_labels``); a ClusterQueue name may hold ``.``, shown as ``_``."""
    return re.sub(r"[^a-z0-9_-]", "_", text.lower())[:63]


def queue_rules(queue: QueueView, limits: AlertThresholds) -> list[AlertRule]:
    team = ",".join(queue.teams) or PLATFORM_TEAM
    window = f"{limits.window_minutes}m"
    hold = limits.window_minutes * 60
    cq = queue.name
    rules = [
        AlertRule(
            f"{cq}-inactive",
            f"ClusterQueue {cq} is not active",
            q.cluster_queue_not_active(cq),
            team,
            cq,
            hold,
            f"ClusterQueue {cq} admits nothing: check its status conditions (kubectl describe clusterqueue {cq}).",
        ),
        AlertRule(
            f"{cq}-evictions",
            f"ClusterQueue {cq}: workloads evicted for {q.PODS_READY_TIMEOUT} or {q.ADMISSION_CHECK}",
            q.bad_evictions(cq, window),
            team,
            cq,
            0,
            "Gangs did not start in time (waitForPodsReady) or an admission check (DWS) failed or was retried.",
        ),
    ]
    if queue.provisioning_check:
        rules.append(
            AlertRule(
                f"{cq}-provisioning-wait",
                f"ClusterQueue {cq}: provisioning-check wait p95 above {limits.max_provisioning_wait_seconds:g}s",
                q.provisioning_wait_above(cq, limits.max_provisioning_wait_seconds),
                team,
                cq,
                hold,
                "DWS ProvisioningRequests wait longer than the stack allows: capacity is scarce in this zone.",
            )
        )
    return rules


def cluster_rules(limits: AlertThresholds) -> list[AlertRule]:
    return [
        AlertRule(
            "gpus-idle",
            f"GPUs below {limits.idle_gpu_utilization_percent}% utilisation while workloads are admitted",
            q.gpus_idle_while_admitted(limits.idle_gpu_utilization_percent),
            PLATFORM_TEAM,
            ALL_QUEUES,
            limits.window_minutes * 60,
            "Admitted workloads hold GPUs they do not use (stuck data loading, a hung rank).",
        ),
        AlertRule(
            "xid-errors",
            "DCGM reports XID errors",
            q.xid_errors(),
            PLATFORM_TEAM,
            ALL_QUEUES,
            0,
            "A GPU reported an XID error (NVIDIA XID catalogue): drain the node if it repeats.",
        ),
    ]


def alert_rules(queues: Sequence[QueueView], limits: AlertThresholds) -> list[AlertRule]:
    rules = [r for queue in sorted(queues, key=lambda v: v.name) for r in queue_rules(queue, limits)]
    return rules + cluster_rules(limits)


def alert_policy(
    rule: AlertRule,
    project: str,
    channels: Sequence[str],
    opts: pulumi.ResourceOptions | None = None,
) -> gcp.monitoring.AlertPolicy:
    return gcp.monitoring.AlertPolicy(
        f"alert-{rule.key}",
        project=project,
        display_name=rule.display_name,
        combiner="OR",
        conditions=[
            gcp.monitoring.AlertPolicyConditionArgs(
                display_name=rule.display_name,
                condition_prometheus_query_language=gcp.monitoring.AlertPolicyConditionConditionPrometheusQueryLanguageArgs(
                    query=rule.query,
                    duration=f"{rule.duration_seconds}s",
                    evaluation_interval="60s",
                    labels=rule.user_labels(),
                    disable_metric_validation=True,
                ),
            )
        ],
        notification_channels=list(channels),
        user_labels=rule.user_labels(),
        documentation=gcp.monitoring.AlertPolicyDocumentationArgs(
            content=rule.documentation, mime_type="text/markdown"
        ),
        opts=opts,
    )
