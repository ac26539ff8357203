"""promql-metric-exported for the DCGM and KubeRay families (policies/gpu_batch_policy/facts/metrics/
dcgm.py, kuberay.py, dcgm_source.py).

The catalogs are checked against upstream itself (fetched mirrors; skipped with the reason when
absent): KubeRay's against every ``kuberay_`` metric of ray-project/kuberay v1.7.0
``ray-operator/controllers/ray/metrics/``; DCGM's against the file the GPU Operator v26.7.0
configures by default and that file's content in NVIDIA/dcgm-exporter -- so a new upstream
metric, or the operator switching files, fails here.
"""

from __future__ import annotations

import re

import yaml
from gpu_batch_policy.facts.metrics.dcgm import (
    DCP_METRICS_INCLUDED,
    OPERATOR_PINNED_TAG,
    SOURCE_TAG,
    read_at_pinned_tag,
)
from gpu_batch_policy.facts.metrics.kuberay import KUBERAY_METRICS

from tests.policies.pack_harness import UNKNOWN, Res, run, run_all
from tests.policies.pack_objects import k8s, pinned_release
from tests.policies.rules.test_monitoring_queries import EXPORTED, alert, dashboard
from tests.upstream import upstream_file, upstream_listing

# --- KubeRay v1.7.0: the catalog is upstream's, completely ----------------------------------------

_METRICS_DIR = "ray-operator/controllers/ray/metrics"
KUBERAY, KUBERAY_ENV = "ray-project/kuberay", "GPU_BATCH_KUBERAY_GIT"
GPU_OPERATOR, GPU_OPERATOR_ENV = "NVIDIA/gpu-operator", "GPU_BATCH_GPU_OPERATOR_GIT"
DCGM_EXPORTER, DCGM_ENV = "NVIDIA/dcgm-exporter", "GPU_BATCH_DCGM_EXPORTER_GIT"
_VEC = re.compile(
    r"prometheus\.New(Counter|Gauge|Histogram)Vec\(\s*prometheus\.\w+Opts\{\s*Name:\s*\"(kuberay_\w+)\""
)
_DESC = re.compile(r"prometheus\.NewDesc\(\s*\"(kuberay_\w+)\"")
_CONST_VALUE = re.compile(r"prometheus\.(\w+)Value\b")


def test_every_kuberay_metric_is_catalogued_with_its_type() -> None:
    files = upstream_listing(KUBERAY, "v1.7.0", _METRICS_DIR, env=KUBERAY_ENV)
    found: dict[str, str] = {}
    for name in files:
        if not name.endswith(".go") or name.endswith("_test.go"):
            continue
        source = upstream_file(KUBERAY, "v1.7.0", f"{_METRICS_DIR}/{name}", env=KUBERAY_ENV)
        found.update({metric: kind.lower() for kind, metric in _VEC.findall(source)})
        descs = _DESC.findall(source)
        if descs:
            # Const metrics take their type from MustNewConstMetric's ValueType.
            assert set(_CONST_VALUE.findall(source)) == {"Gauge"}, name
            found.update(dict.fromkeys(descs, "gauge"))
        # No kuberay_ name is registered some other way this parser would miss.
        assert set(re.findall(r"\"(kuberay_\w+)\"", source)) <= set(found), name
    assert len(found) >= 9
    assert dict(KUBERAY_METRICS) == found


def test_a_name_kuberay_does_not_export_is_caught() -> None:
    assert run(EXPORTED, [dashboard("sum by (namespace) (kuberay_cluster_info)")]).clean
    typo = run(EXPORTED, [alert("max(kuberay_cluster_provisioned_seconds) > 600")])
    assert "KubeRay v1.7.0 operator exports no kuberay_cluster_provisioned_seconds" in typo.text()


def kuberay_release(enabled: bool | None = None) -> Res:
    values = {} if enabled is None else {"metrics": {"enabled": enabled}}
    return pinned_release("kuberay-operator", "kuberay-system", values=values)


def test_kuberay_metrics_need_the_chart_to_emit_them() -> None:
    query = "sum(kuberay_job_info)"
    off = run(EXPORTED, [kuberay_release(False), dashboard(query)])
    assert "metrics.enabled: false" in off.text()
    assert run(EXPORTED, [kuberay_release(True), dashboard(query)]).clean
    assert run(EXPORTED, [kuberay_release(), dashboard(query)]).clean  # the chart's default is on


def test_ray_metrics_are_not_judged_here() -> None:
    # Ray's names are judged by the advisory promql-ray-metric-documented (test_monitoring_ray.py):
    # the documented list is not a pinned export registry, so a miss is no mandatory finding.
    assert run(EXPORTED, [dashboard("sum(ray_node_gpus_utilization)")]).clean


# --- DCGM: the GPU Operator's default counters ---------------------------------------------------


def test_the_operator_configures_dcp_metrics_included_and_pins_its_exporter() -> None:
    state = upstream_file(GPU_OPERATOR, "v26.7.0", "internal/state/dcgm_exporter.go", env=GPU_OPERATOR_ENV)
    assert re.search(
        r'dcgmExporterDefaultCollectors\s*=\s*"/etc/dcgm-exporter/dcp-metrics-included\.csv"', state
    )
    values = yaml.safe_load(
        upstream_file(GPU_OPERATOR, "v26.7.0", "deployments/gpu-operator/values.yaml", env=GPU_OPERATOR_ENV)
    )
    assert values["dcgmExporter"]["version"].startswith(OPERATOR_PINNED_TAG + "-")


def _csv_metrics(text: str) -> dict[str, str]:
    rows = [
        line.split(",") for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")
    ]
    return {r[0].strip(): r[1].strip() for r in rows if r[1].strip() != "label"}


def test_every_default_counter_is_catalogued_with_its_type() -> None:
    # The image ships etc/ as /etc/dcgm-exporter, the directory the operator's path names.
    assert "etc /etc/dcgm-exporter" in upstream_file(
        DCGM_EXPORTER, SOURCE_TAG, "docker/Dockerfile", env=DCGM_ENV
    )
    upstream = _csv_metrics(
        upstream_file(DCGM_EXPORTER, SOURCE_TAG, "etc/dcp-metrics-included.csv", env=DCGM_ENV)
    )
    assert len(upstream) >= 20
    assert dict(DCP_METRICS_INCLUDED) == upstream


def test_the_catalog_matches_the_operator_pinned_exporter_when_the_mirror_has_it() -> None:
    upstream = _csv_metrics(
        upstream_file(DCGM_EXPORTER, OPERATOR_PINNED_TAG, "etc/dcp-metrics-included.csv", env=DCGM_ENV)
    )
    assert dict(DCP_METRICS_INCLUDED) == upstream


def test_the_rows_read_at_the_pinned_tag_agree_with_the_catalog() -> None:
    read = read_at_pinned_tag()
    assert len(read) == 12  # SM clock .. XID errors: the part of the file the source showed
    default = _csv_metrics(upstream_file(DCGM_EXPORTER, SOURCE_TAG, "etc/default-counters.csv", env=DCGM_ENV))
    # Reading default-counters.csv stands for dcp-metrics-included.csv: at the mirrored tag the
    # two files enable the same rows with the same types ...
    assert default == _csv_metrics(
        upstream_file(DCGM_EXPORTER, SOURCE_TAG, "etc/dcp-metrics-included.csv", env=DCGM_ENV)
    )
    # ... and the catalog's rows read at the pinned tag are that file's beginning, in order.
    assert tuple(default.items())[: len(read)] == read


def gpu_operator(**dcgm_exporter: object) -> Res:
    values = {"dcgmExporter": dcgm_exporter} if dcgm_exporter else {}
    return pinned_release("gpu-operator", "gpu-operator", values=values)


PROF = "avg(DCGM_FI_PROF_SM_ACTIVE)"  # a DCGM field, but not among the default counters


def test_a_non_default_counter_is_caught_under_the_operator_exporter() -> None:
    result = run(EXPORTED, [gpu_operator(), dashboard(PROF)])
    assert "exports no DCGM_FI_PROF_SM_ACTIVE with its default counters" in result.text()
    assert run(EXPORTED, [gpu_operator(), dashboard("avg(DCGM_FI_PROF_GR_ENGINE_ACTIVE)")]).clean
    assert run(EXPORTED, [gpu_operator(), alert("max by (Hostname, gpu) (DCGM_FI_DEV_XID_ERRORS) > 0")]).clean


def test_dcgm_is_not_judged_where_the_metric_set_is_not_the_default() -> None:
    # No operator in the stack (GKE's managed DCGM, or nothing): no citable list.
    assert run(EXPORTED, [dashboard(PROF)]).clean
    # A custom counters ConfigMap: the user's CSV decides.
    assert run(EXPORTED, [gpu_operator(config={"name": "custom-dcgm-metrics"}), dashboard(PROF)]).clean
    # The operator's exporter off.
    assert run(EXPORTED, [gpu_operator(enabled=False), dashboard(PROF)]).clean
    # Through a ClusterPolicy too.
    policy = k8s(
        "nvidia.com/v1", "ClusterPolicy", "cluster-policy", spec={"dcgmExporter": {"config": {"name": "m"}}}
    )
    assert run(EXPORTED, [gpu_operator(), policy, dashboard(PROF)]).clean


def test_each_new_family_fixture_fires_exactly_its_rule() -> None:
    names = ["promql-parses", "promql-metric-exported", "dcgm-double-exporter"]

    def fired(resources: list[Res]) -> set[str]:
        return {n for n, r in run_all(resources, names).items() if not r.clean}

    assert fired([gpu_operator(), dashboard(PROF)]) == {"promql-metric-exported"}
    assert fired([alert("kuberay_job_infos > 0")]) == {"promql-metric-exported"}
    assert (
        fired([gpu_operator(), dashboard("avg(DCGM_FI_DEV_GPU_UTIL)"), alert("kuberay_job_info > 0")])
        == set()
    )


def test_an_exporter_setting_unknown_until_apply_cannot_be_judged_yet() -> None:
    result = run(EXPORTED, [gpu_operator(enabled=UNKNOWN), dashboard(PROF)])
    assert result.clean
    assert result.cannot_check is not None and "unknown until apply" in result.cannot_check
