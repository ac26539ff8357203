"""promql-tells-clusters-apart (rules/monitoring/cluster_label.py) and the stack's own queries (issue 39).

The multiregion stack's manager and workers export one queue name into one Cloud Monitoring
project; every query the stack writes must keep GMP's ``cluster`` label.  The cases below break
one query and show the rule catches it, and the stack's real dashboard and alerts pass.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from gpu_batch_policy.facts.metrics.cluster_grouping import merges_clusters

from components.observability import queries as q
from stacks.errors import ConfigError
from tests.policies.pack_harness import Res, policy, run
from tests.policies.pack_objects import gke_cluster
from tests.stack_runner import run_stack, unedited_run

RULE = policy("promql-tells-clusters-apart")
ALERT = "gcp:monitoring/alertPolicy:AlertPolicy"
DASHBOARD = "gcp:monitoring/dashboard:Dashboard"


def alert(query: str, project: str = "p") -> Res:
    body = {"project": project, "conditions": [{"conditionPrometheusQueryLanguage": {"query": query}}]}
    return Res(ALERT, "a", body)


def clusters(n: int, project: str = "p") -> list[Res]:
    return [gke_cluster(f"c{i}", project=project) for i in range(n)]


@pytest.mark.parametrize(
    ("query", "step"),
    [
        ('max(kueue_cluster_queue_status{status="active"}) < 1', "max(...)"),
        ("histogram_quantile(0.95, sum by (le) (rate(x_bucket[5m])))", "sum by (le)"),
        ("sum without (cluster) (x)", "sum without (cluster)"),
        ("(avg by (cluster) (x) < 10) and on() (sum by (cluster) (y) > 0)", "on()"),
    ],
)
def test_a_query_that_merges_clusters_is_caught_in_a_multi_cluster_program(query: str, step: str) -> None:
    (message,) = run(RULE, [*clusters(3), alert(query)]).messages
    assert step in message and "3 clusters" in message
    # ... and not in a single-cluster program, or when the clusters are in other projects.
    assert run(RULE, [*clusters(1), alert(query)]).clean
    assert run(RULE, [*clusters(3, project="other"), alert(query)]).clean


def test_queries_that_keep_or_pin_the_cluster_pass() -> None:
    for query in (
        'max by (cluster) (kueue_cluster_queue_status{status="active"}) < 1',
        'max(kueue_cluster_queue_status{cluster="mk-worker-us-east4", status="active"}) < 1',
        "x > 0",
    ):
        assert run(RULE, [*clusters(2), alert(query)]).clean, query


def _stack_queries(stack: str) -> list[str]:
    out: list[str] = []
    for r in unedited_run(stack).resources:
        if r.type == ALERT:
            out += [c["conditionPrometheusQueryLanguage"]["query"] for c in r.inputs["conditions"]]
        elif r.type == DASHBOARD:
            doc: Any = json.loads(r.inputs["dashboardJson"])
            out += [
                d["timeSeriesQuery"]["prometheusQuery"]
                for t in doc["mosaicLayout"]["tiles"]
                for d in t["widget"]["xyChart"]["dataSets"]
            ]
    return out


def test_every_multiregion_query_keeps_the_cluster_and_the_rule_agrees() -> None:
    queries = _stack_queries("multiregion")
    assert queries and all(merges_clusters(text) is None for text in queries)
    assert run(
        RULE,
        [
            *clusters(3, project="gpu-batch-multiregion"),
            *(alert(t, "gpu-batch-multiregion") for t in queries),
        ],
    ).clean


def test_the_cluster_queue_alert_sees_one_inactive_worker() -> None:
    """The alert condition keeps one series per cluster, so one cluster at 0 is a result."""
    from tests.alerts.promql_eval import Evaluator, Series

    status = [
        Series(
            {
                "__name__": "kueue_cluster_queue_status",
                "cluster": c,
                "cluster_queue": "research-h100",
                "status": "active",
            },
            [(0.0, v)],
        )
        for c, v in (("mk-manager", 1.0), ("mk-worker-us-east4", 0.0), ("mk-worker-europe-west4", 1.0))
    ]
    result = Evaluator(status).instant(q.cluster_queue_not_active("research-h100"), 10.0)
    assert isinstance(result, dict) and [dict(k)["cluster"] for k in result] == ["mk-worker-us-east4"]
    # The old query (no grouping) saw nothing: max over the three clusters is 1.
    old = Evaluator(status).instant(
        'max(kueue_cluster_queue_status{cluster_queue="research-h100", status="active"}) < 1', 10.0
    )
    assert old == {}


def test_prod_requires_notification_channels_in_one_line() -> None:
    with pytest.raises(ConfigError) as caught:
        run_stack("prod", {"gpu-batch:monitoring": {"notificationChannels": []}})
    message = str(caught.value)
    assert message.splitlines() == [
        "config error: gpu-batch:monitoring.notificationChannels: got [], expected at least one "
        "projects/<project>/notificationChannels/<id>: this stack's alerts must reach someone "
        "(monitoring.requireNotificationChannels, on by default with cluster.protect)"
    ]
