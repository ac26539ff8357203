"""promql-ray-metric-documented (policies/gpu_batch_policy/rules/monitoring/ray_metrics.py) and Ray's
documented metric list (policies/gpu_batch_policy/facts/metrics/ray.py).

The list is compared with the source file itself when a ray-project/ray mirror is present
(``../.mirror/ray-project+ray/repo`` or $GPU_BATCH_RAY_GIT; skipped with the reason otherwise):
every backquoted ``ray_`` name in the "Ray System Metrics" table, so a row added upstream fails here.
"""

from __future__ import annotations

import json
import re

from gpu_batch_policy.facts.metrics.ray import RAY_SYSTEM_METRICS

from tests.policies.pack_harness import UNKNOWN, Res, policy, run, run_all
from tests.policies.pack_objects import k8s
from tests.policies.rules.test_monitoring_queries import ALERT, DASHBOARD, alert, dashboard
from tests.upstream import upstream_file

DOCUMENTED = policy("promql-ray-metric-documented")
RAY_DOC = "doc/source/ray-observability/reference/system-metrics.rst"
RAY_COMMIT = "07cdf040df3521acfbd4c1d3311fe2e4631a557b"
GCM_FILTER = 'metric.type="prometheus.googleapis.com/ray_actor/gauge"'


def _table_names(rst: str) -> list[str]:
    table = rst.split(".. list-table:: Ray System Metrics", 1)[1].split("\nMetrics Semantics", 1)[0]
    return re.findall(r"^\s*\* - `(ray_\w+)`", table, flags=re.MULTILINE)


def test_the_list_is_the_documented_table() -> None:
    names = _table_names(upstream_file("ray-project/ray", RAY_COMMIT, RAY_DOC, env="GPU_BATCH_RAY_GIT"))
    assert len(names) >= 30
    assert tuple(names) == RAY_SYSTEM_METRICS


def test_the_list_has_no_duplicates_and_only_ray_names() -> None:
    assert len(set(RAY_SYSTEM_METRICS)) == len(RAY_SYSTEM_METRICS)
    assert all(re.fullmatch(r"ray_[a-z_]+", n) for n in RAY_SYSTEM_METRICS)


def test_a_near_miss_of_a_documented_name_is_flagged() -> None:
    # "gpu" for "gpus": the panel reads nothing on a real Ray cluster.
    typo = run(DOCUMENTED, [dashboard("avg by (instance) (ray_node_gpu_utilization)")])
    assert "ray_node_gpu_utilization is not among Ray's documented system metrics" in typo.text()
    assert "prometheusQuery reads" in typo.text()
    fixed = run(DOCUMENTED, [dashboard("avg by (instance) (ray_node_gpus_utilization)")])
    assert fixed.clean


def test_every_documented_name_passes_in_alerts_and_dashboards() -> None:
    for name in RAY_SYSTEM_METRICS:
        assert run(DOCUMENTED, [alert(f"sum({name}) > 0")]).clean, name
    assert run(DOCUMENTED, [dashboard(*(f"sum({n})" for n in RAY_SYSTEM_METRICS))]).clean


def test_gmp_rules_and_metric_filters_are_judged_too() -> None:
    rules = k8s(
        "monitoring.googleapis.com/v1",
        "Rules",
        "r",
        namespace="team-a",
        spec={"groups": [{"name": "g", "rules": [{"alert": "x", "expr": "sum(ray_task) > 0"}]}]},
    )
    assert "ray_task is not among" in run(DOCUMENTED, [rules]).text()
    data_set = {"timeSeriesQuery": {"timeSeriesFilter": {"filter": GCM_FILTER}}}
    body = json.dumps({"mosaicLayout": {"tiles": [{"widget": {"xyChart": {"dataSets": [data_set]}}}]}})
    assert "ray_actor is not among" in run(DOCUMENTED, [Res(DASHBOARD, "d", {"dashboardJson": body})]).text()


def test_other_families_and_unknown_queries_are_not_its_business() -> None:
    assert run(DOCUMENTED, [alert("kuberay_cluster_info > 0"), dashboard("avg(DCGM_FI_DEV_GPU_UTIL)")]).clean
    pending = run(DOCUMENTED, [Res(ALERT, "a", {"conditions": UNKNOWN})])
    assert pending.clean and pending.cannot_check is not None


def test_the_fixture_fires_exactly_this_rule_and_only_advisory() -> None:
    names = ["promql-parses", "promql-metric-exported", "promql-ray-metric-documented"]
    fired = {
        n for n, r in run_all([dashboard("sum(ray_node_gpu_utilization)")], names).items() if not r.clean
    }
    assert fired == {"promql-ray-metric-documented"}
    assert DOCUMENTED.enforcement_level is not None and DOCUMENTED.enforcement_level.value == "advisory"
