"""The stack's alert policies: PromQL conditions (``conditionPrometheusQueryLanguage``).

Per ClusterQueue, labelled with its team(s) and queue: the queue is not active; evictions for
``PodsReadyTimeout`` or ``AdmissionCheck``; and, for a DWS queue, the provisioning-check wait p95
above ``monitoring.maxProvisioningWait``.  For the cluster (team ``platform``): GPUs idle while
workloads are admitted, and DCGM XID errors.

Policies: one per team (the ClusterQueues its LocalQueues point at), plus one for the platform,
each condition one rule; a team with more than :data:`MAX_CONDITIONS` rules gets more policies.
The policy carries the team label, each condition the team and queue labels (``conditionPrometheus
QueryLanguage.labels``: added to the incident), so an incident names both.  Why grouped: a
1,000-team stack would otherwise declare ~3,000 policies; Cloud Monitoring allows 1 to 6
conditions per policy (googleapis ``google/monitoring/v3/alert.proto`` ``AlertPolicy.conditions``:
"A policy can have from one to six conditions") and a bounded number of policies per metrics scope
(its quotas page, "Alerting"; :data:`MAX_POLICIES`).

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
from stacks.errors import PROJECT_NAMESPACE, ConfigError, ConfigIssue

PLATFORM_TEAM: Final = "platform"
ALL_QUEUES: Final = "all"
MAX_CONDITIONS: Final = 6
# Alerting policies per metrics scope (Cloud Monitoring quotas page, "Alerting"; see
# docs/monitoring.md for where that figure could and could not be checked).
MAX_POLICIES: Final = 2000


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


@dataclass(frozen=True)
class PolicyGroup:
    """One alert policy: a team's rules (at most :data:`MAX_CONDITIONS`), one condition each."""

    team: str
    page: int  # 1-based, per team
    rules: tuple[AlertRule, ...]

    @property
    def key(self) -> str:
        """Stable resource-name part: the team's label value, ``-<page>`` from the second on."""
        return _label_value(self.team) + (f"-{self.page}" if self.page > 1 else "")

    def display_name(self) -> str:
        return f"gpu-batch alerts: {self.team}" + (f" ({self.page})" if self.page > 1 else "")


def policy_groups(rules: Sequence[AlertRule]) -> list[PolicyGroup]:
    """``rules`` as policies: per team in name order, chunks of :data:`MAX_CONDITIONS` in rule
    order."""
    by_team: dict[str, list[AlertRule]] = {}
    for r in rules:
        by_team.setdefault(r.team, []).append(r)
    groups = []
    for team in sorted(by_team):
        team_rules = by_team[team]
        for i in range(0, len(team_rules), MAX_CONDITIONS):
            chunk = tuple(team_rules[i : i + MAX_CONDITIONS])
            groups.append(PolicyGroup(team, i // MAX_CONDITIONS + 1, chunk))
    seen: dict[str, str] = {}
    for g in groups:
        other = seen.setdefault(g.key, g.team)
        if other != g.team:
            raise ConfigError(
                [
                    ConfigIssue(
                        f"{PROJECT_NAMESPACE}:teams",
                        f"team names whose alert policies do not share the name alert-{g.key} (they "
                        "differ only in case, punctuation, or past 63 characters): rename one team",
                        [other, g.team],
                    )
                ]
            )
    return groups


def _documentation(group: PolicyGroup) -> str:
    return "\n".join(f"- **{r.display_name}**: {r.documentation}" for r in group.rules)


def alert_policy(
    group: PolicyGroup,
    project: str,
    channels: Sequence[str],
    opts: pulumi.ResourceOptions | None = None,
) -> gcp.monitoring.AlertPolicy:
    return gcp.monitoring.AlertPolicy(
        f"alert-{group.key}",
        project=project,
        display_name=group.display_name(),
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
            for rule in group.rules
        ],
        notification_channels=list(channels),
        user_labels={"team": _label_value(group.team)},
        documentation=gcp.monitoring.AlertPolicyDocumentationArgs(
            content=_documentation(group), mime_type="text/markdown"
        ),
        opts=opts,
    )
