"""promql-parses and promql-metric-exported (policies/gpu_batch_policy/rules/monitoring/queries.py).

The Kueue metric list is checked against kubernetes-sigs/kueue v0.19.2 ``pkg/metrics/metrics.go``
itself (fetched mirror; skipped with the reason when absent): every ``prometheus.New*Vec`` must be
in the catalog, every metric ``RegisterLQMetrics`` registers must need the LocalQueueMetrics
setting, and the metric registered only under ``MetricForWorkloadCreationLatency`` must need that
gate -- so a new upstream metric, or a new gated one, fails here.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml
from gpu_batch_policy.facts.metrics.kueue import BY_NAME, KUEUE_METRICS

from components.kueue_config import KueueConfiguration
from tests.policies.pack_harness import UNKNOWN, Res, policy, run, run_all
from tests.policies.pack_objects import k8s, pinned_release
from tests.upstream import (
    accelerated_platforms_file,
    accelerated_platforms_kueue_version,
    kueue_file,
    upstream_file,
)

PARSES = policy("promql-parses")
EXPORTED = policy("promql-metric-exported")
DASHBOARD = "gcp:monitoring/dashboard:Dashboard"
ALERT = "gcp:monitoring/alertPolicy:AlertPolicy"


def dashboard(*queries: str, name: str = "d") -> Res:
    tiles = [
        {"widget": {"xyChart": {"dataSets": [{"timeSeriesQuery": {"prometheusQuery": q}}]}}} for q in queries
    ]
    body = {"displayName": name, "mosaicLayout": {"columns": 48, "tiles": tiles}}
    return Res(DASHBOARD, name, {"dashboardJson": json.dumps(body)})


def alert(query: str, name: str = "a") -> Res:
    return Res(
        ALERT,
        name,
        {
            "displayName": name,
            "combiner": "OR",
            "conditions": [{"displayName": "c", "conditionPrometheusQueryLanguage": {"query": query}}],
        },
    )


def kueue(configuration: KueueConfiguration | None = None, gates: dict[str, bool] | None = None) -> Res:
    values: dict[str, Any] = {}
    if configuration is not None:
        values["managerConfig"] = {"controllerManagerConfigYaml": configuration.to_yaml()}
    if gates:
        values["controllerManager"] = {"featureGates": [{"name": k, "enabled": v} for k, v in gates.items()]}
    return pinned_release("kueue", "kueue-system", values=values)


USAGE = 'sum by (cluster_queue, flavor) (kueue_cluster_queue_resource_usage{resource="nvidia.com/gpu"})'


# --- the catalog is upstream's, completely -------------------------------------------------------

_VEC = re.compile(
    r"(\w+)\s*=\s*(?:\w+\()?prometheus\.New(Counter|Gauge|Histogram)Vec\(\s*prometheus\.\w+Opts\{\s*"
    r"Subsystem:\s*constants\.(\w+),\s*Name:\s*\"(\w+)\""
)
_SUBSYSTEMS = {"KueueName": "kueue", "MultiKueueName": "multikueue"}


def _upstream() -> tuple[dict[str, tuple[str, str]], str]:
    source = kueue_file("v0.19.2", "pkg/metrics/metrics.go")
    by_var = {
        var: (f"{_SUBSYSTEMS[sub]}_{name}", kind.lower()) for var, kind, sub, name in _VEC.findall(source)
    }
    return by_var, source


def test_every_upstream_metric_is_catalogued_with_its_type() -> None:
    by_var, _ = _upstream()
    assert len(by_var) >= 60
    upstream = dict(by_var.values())
    assert set(upstream) == set(BY_NAME), set(upstream) ^ set(BY_NAME)
    assert {m.name: m.type for m in KUEUE_METRICS} == upstream


def test_gated_registrations_need_their_setting() -> None:
    by_var, source = _upstream()
    body = source[source.index("func RegisterLQMetrics()") :]
    body = body[: body.index("\n}\n")]
    lq_vars = re.findall(r"^\s*(\w+),$", body, flags=re.M)
    assert lq_vars
    for var in lq_vars:
        assert "local_queue_metrics" in BY_NAME[by_var[var][0]].needs, var
    gated = re.findall(
        r"features\.Enabled\(features\.MetricForWorkloadCreationLatency\) \{\s*\S+MustRegister\((\w+)\)",
        source,
    )
    assert gated == ["WorkloadCreationLatency"]
    assert BY_NAME[by_var[gated[0]][0]].needs == {"workload_creation_latency"}
    # Every other metric with a local_queue_ name is a RegisterLQMetrics one.
    lq_names = {by_var[v][0] for v in lq_vars}
    assert {n for n in BY_NAME if n.startswith("kueue_local_queue_")} == lq_names


# --- promql-parses ---------------------------------------------------------------------------


def test_bad_promql_is_caught_in_dashboards_and_alerts() -> None:
    result = run(
        PARSES,
        [dashboard("sum(rate(kueue_admitted_workloads_total[5m])"), alert("kueue_pending_workloads >")],
    )
    assert len(result.messages) == 2
    assert "unclosed left parenthesis" in result.text()
    assert run(PARSES, [dashboard(USAGE), alert("kueue_pending_workloads > 0")]).clean


def test_gmp_rules_are_read_too() -> None:
    rules = k8s(
        "monitoring.googleapis.com/v1",
        "Rules",
        "r",
        namespace="default",
        spec={"groups": [{"name": "g", "rules": [{"alert": "x", "expr": "rate(("}]}]},
    )
    assert "spec.groups[0].rules[0].expr is not valid PromQL" in run(PARSES, [rules]).text()


def test_unknown_queries_cannot_be_checked_yet() -> None:
    pending = Res(DASHBOARD, "d", {"dashboardJson": UNKNOWN})
    result = run(PARSES, [pending])
    assert result.clean and result.cannot_check is not None


def test_dashboard_json_that_is_not_json_is_a_finding() -> None:
    assert "is not JSON" in run(PARSES, [Res(DASHBOARD, "d", {"dashboardJson": "{"})]).text()


# --- promql-metric-exported ------------------------------------------------------------------


def test_quota_usage_needs_enable_cluster_queue_resources() -> None:
    off = run(EXPORTED, [kueue(KueueConfiguration(cluster_queue_resource_metrics=False)), dashboard(USAGE)])
    assert len(off.messages) == 1
    assert "kueue_cluster_queue_resource_usage" in off.text()
    assert "enableClusterQueueResources" in off.text()
    assert run(EXPORTED, [kueue(KueueConfiguration()), dashboard(USAGE)]).clean


def test_the_chart_default_configuration_lacks_it() -> None:
    assert "enableClusterQueueResources" in run(EXPORTED, [kueue(), dashboard(USAGE)]).text()


def test_local_queue_metrics_follow_the_gate() -> None:
    query = "sum(kueue_local_queue_pending_workloads)"
    assert run(EXPORTED, [kueue(KueueConfiguration()), alert(query)]).clean
    result = run(EXPORTED, [kueue(KueueConfiguration(), gates={"LocalQueueMetrics": False}), alert(query)])
    assert "LocalQueueMetrics" in result.text()


def test_ready_wait_needs_wait_for_pods_ready() -> None:
    query = "histogram_quantile(0.95, sum by (le) (rate(kueue_ready_wait_time_seconds_bucket[10m])))"
    assert run(EXPORTED, [kueue(KueueConfiguration()), alert(query)]).clean
    disabled = run(
        EXPORTED, [kueue(KueueConfiguration(), gates={"DisableWaitForPodsReady": True}), alert(query)]
    )
    assert "waitForPodsReady" in disabled.text()


def test_weighted_share_needs_fair_sharing() -> None:
    query = "kueue_cluster_queue_weighted_share"
    assert "fairSharing" in run(EXPORTED, [kueue(KueueConfiguration()), alert(query)]).text()
    fair = KueueConfiguration(fair_sharing_strategies=("LessThanOrEqualToFinalShare", "LessThanInitialShare"))
    assert run(EXPORTED, [kueue(fair), alert(query)]).clean


def test_a_name_kueue_does_not_export_is_caught() -> None:
    result = run(EXPORTED, [kueue(KueueConfiguration()), alert("kueue_cluster_queue_pending_workloads > 0")])
    assert "does not export" in result.text()
    # Non-Kueue series are not judged by this rule.
    assert run(EXPORTED, [kueue(KueueConfiguration()), alert("DCGM_FI_DEV_GPU_UTIL < 10")]).clean


def test_each_fixture_fires_exactly_its_rule() -> None:
    names = ["promql-parses", "promql-metric-exported"]

    def fired(resources: list[Res]) -> set[str]:
        return {n for n, r in run_all(resources, names).items() if not r.clean}

    assert fired([kueue(KueueConfiguration()), dashboard("sum(")]) == {"promql-parses"}
    assert fired([kueue(KueueConfiguration(cluster_queue_resource_metrics=False)), dashboard(USAGE)]) == {
        "promql-metric-exported"
    }
    assert fired([kueue(KueueConfiguration()), dashboard(USAGE)]) == set()


# --- accelerated-platforms' published Kueue dashboard, converted at test time ------------------

AP_DASHBOARD = "platforms/gke/base/core/workloads/kueue/dashboards/kueue-monitoring-dashboard.json"


def test_accelerated_platforms_dashboard_reads_metrics_its_kueue_never_exports() -> None:
    version = accelerated_platforms_kueue_version()
    # Kueue's manager configuration as that project installs it: the release manifests.yaml's
    # ConfigMap, built from config/components/manager/controller_manager_config.yaml at that tag.
    configuration = yaml.safe_load(
        kueue_file(f"v{version}", "config/components/manager/controller_manager_config.yaml")
    )
    board = Res(DASHBOARD, "kueue-monitoring", {"dashboardJson": accelerated_platforms_file(AP_DASHBOARD)})
    config = {"kueueConfiguration": configuration}
    result = run(EXPORTED, [board], config)
    assert "kueue_cluster_queue_resource_usage" in result.text()
    assert all("enableClusterQueueResources" in m for m in result.messages)
    assert run(PARSES, [board]).clean
    corrected = {
        "kueueConfiguration": {
            **configuration,
            "metrics": {**configuration["metrics"], "enableClusterQueueResources": True},
        }
    }
    assert run(EXPORTED, [board], corrected).clean


def test_dashboard_variables_are_expanded_before_parsing() -> None:
    query = 'sum(rate(kueue_admitted_workloads_total{${cluster_name}, cluster_queue="${cq.value}"}[${__interval}]))'
    assert run(PARSES, [dashboard(query)]).clean
    assert not run(
        PARSES, [dashboard("sum(rate(kueue_admitted_workloads_total{${cluster_name}}[${__interval}])")]
    ).clean


# --- KAI Scheduler v0.17.0: the kai_ prefix, and the catalog is upstream's ------------------------

_KAI_METRIC = re.compile(
    r"promauto\.New(Counter|Gauge|Histogram)(?:Vec)?\(\s*prometheus\.\w+Opts\{\s*Namespace:\s*namespace,\s*Name:\s*\"(\w+)\""
)


def _kai_file(path: str) -> str:
    return upstream_file("kai-scheduler/KAI-Scheduler", "v0.17.0", path, env="GPU_BATCH_KAI_GIT")


def test_every_kai_metric_is_catalogued() -> None:
    from gpu_batch_policy.facts.metrics.kai import KAI_METRICS

    found: dict[str, str] = {}
    for path in ("pkg/scheduler/metrics/metrics.go", "pkg/queuecontroller/metrics/metrics.go"):
        found.update({name: kind.lower() for kind, name in _KAI_METRIC.findall(_kai_file(path))})
    assert len(found) >= 30
    assert dict(KAI_METRICS) == found
    constants = _kai_file("pkg/common/constants/constants.go")
    assert re.search(r'DefaultMetricsNamespace\s*=\s*"kai"', constants)


def kai_release() -> Res:
    return pinned_release("kai-scheduler", "kai-scheduler")


def test_kai_metrics_need_their_prefix() -> None:
    bare = run(EXPORTED, [kai_release(), dashboard("sum by (queue_name) (queue_allocated_gpus)")])
    assert "as kai_queue_allocated_gpus" in bare.text()
    assert run(EXPORTED, [kai_release(), dashboard("sum by (queue_name) (kai_queue_allocated_gpus)")]).clean
    typo = run(EXPORTED, [kai_release(), alert("kai_queue_allocated_gpu > 0")])
    assert "exports no kai_queue_allocated_gpu" in typo.text()
    histogram = "histogram_quantile(0.9, sum by (le) (rate(kai_task_bind_latency_milliseconds_bucket[5m])))"
    assert run(EXPORTED, [kai_release(), alert(histogram)]).clean
    # Without KAI in the stack a bare name may be another exporter's: not judged.
    assert run(EXPORTED, [dashboard("sum(queue_allocated_gpus)")]).clean


def test_the_rules_reading_queries_share_one_read_and_each_reports_a_broken_dashboard(
    monkeypatch: Any,
) -> None:
    """One model (as one AnalyzeStack call shares it): the queries of each holder are read once
    for every rule that reads them, and each rule still reports a dashboard that is not JSON."""
    from gpu_batch_policy.facts.model import StackModel
    from gpu_batch_policy.rules.kit.report import Reporter
    from gpu_batch_policy.rules.monitoring import queries as module
    from gpu_batch_policy.rules.monitoring.ray_metrics import check_ray_metric_documented

    reads: list[str] = []
    real = module._read

    def counting(res: Any) -> Any:
        reads.append(res.urn)
        return real(res)

    monkeypatch.setattr(module, "_read", counting)
    holders = [
        dashboard("kueue_pending_workloads", name="ok"),
        Res(DASHBOARD, "broken", {"dashboardJson": "{"}),
    ]
    model = StackModel.from_plain(((r.type, r.props, r.urn, r.name) for r in holders), render=False)
    found: dict[str, list[str]] = {}
    for check in (module.check_promql_parses, module.check_metric_exported, check_ray_metric_documented):
        messages = found.setdefault(check.__name__, [])

        def report(message: str, _urn: str | None = None, into: list[str] = messages) -> None:
            into.append(message)

        check(model, Reporter(report, stack=True), {})
    for name, messages in found.items():
        assert any("is not JSON" in m for m in messages), (name, messages)
        assert not any("'ok'" in m for m in messages), (name, messages)
    assert sorted(reads) == sorted(r.urn for r in holders)
