"""A multi-cluster program whose dashboards or alerts add the clusters up (issue 39).

GKE Managed Service for Prometheus writes every cluster's series into the project's Cloud
Monitoring, each labelled with its ``cluster`` (:mod:`...facts.metrics.cluster_grouping`).  A
MultiKueue manager and its workers export the same queue names there, so a query that sums, maxes
or matches across ``cluster`` cannot see one broken cluster: ``max(kueue_cluster_queue_status
{status="active"}) < 1`` stays quiet while a worker's queue is inactive and the manager's is active.

**promql-tells-clusters-apart** (mandatory: the alert cannot fire, the panel cannot show which
cluster): a ``gcp:monitoring/dashboard:Dashboard`` or ``gcp:monitoring/alertPolicy:AlertPolicy``
query (and a GMP ``GlobalRules`` expression, which reads every cluster) in a program with two or
more GKE clusters in the query's project, where some step drops ``cluster`` and not every selector
picks one cluster.  ``Rules``/``ClusterRules`` are evaluated inside one cluster and are not judged.
A single-cluster program is not judged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.metrics.cluster_grouping import LABEL, merges_clusters
from ...facts.model import Resource, StackModel
from ..kit.builders import stack_policy
from ..kit.report import Reporter
from .queries import known_queries

PER_CLUSTER_RULE_KINDS = ("Rules", "ClusterRules")


def _clusters_in_project(model: StackModel, holder: Resource) -> int:
    project = holder.get("project")
    return sum(
        1
        for c in model.gke_clusters()
        if not (isinstance(project, str) and isinstance(p := c.res.get("project"), str) and p != project)
    )


def check_cluster_label(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    if len(model.gke_clusters()) < 2:
        return
    for res, (where, text, is_promql) in known_queries(model, reporter):
        if not is_promql or getattr(res, "kind", None) in PER_CLUSTER_RULE_KINDS:
            continue
        if _clusters_in_project(model, res) < 2:
            continue
        try:
            step = merges_clusters(text)
        except ValueError:
            continue  # promql-parses reports it
        if step is not None:
            reporter.violation(
                res,
                f"{where} merges the program's {_clusters_in_project(model, res)} clusters ({step}): "
                f"{text!r} cannot tell which cluster a value comes from",
                f"keep GMP's {LABEL} label in every aggregation and vector match (by ({LABEL}, ...), "
                f'on({LABEL}, ...)), or pick one cluster with {LABEL}="..." in every selector',
            )


POLICIES: list[Policy] = [
    stack_policy(
        "promql-tells-clusters-apart",
        "In a program with several GKE clusters, every dashboard and alert query keeps the cluster label.",
        check_cluster_label,
    ),
]
