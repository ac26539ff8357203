"""The stacks' scrape objects, followed end to end (components/monitoring.py, stacks/compose/monitoring.py).

What is checked is the chain a real cluster walks: GKE's managed collection on
(``monitoringConfig``) -> a PodMonitoring selecting the controller pod the pinned chart renders,
on the container port it names -> a bearer token from a Secret the collector
(``gmp-system/collector``) may read, and only that Secret -> the token's ServiceAccount bound to
the ClusterRole the chart renders, which grants ``get /metrics`` (kueue v0.19.2
``charts/kueue/templates/rbac/metrics_reader_role.yaml``).  The chart objects are rendered from
the recorded release with the real Helm engine, never written here.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from gpu_batch_policy.facts.charts import default_resolver, reference_from_release, render_chart

from preview.harness import RunResult
from stacks.errors import ConfigError
from tests.stack_runner import config_value, custom_objects, of_type, run_stack, unedited_run

CLUSTER = "gcp:container/cluster:Cluster"
RELEASE = "kubernetes:helm.sh/v3:Release"


@pytest.fixture(scope="module")
def plans() -> dict[str, RunResult]:
    return {stack: unedited_run(stack) for stack in ("dev", "kai")}


def _one(result: RunResult, type_token: str) -> dict[str, Any]:
    found = of_type(result, type_token)
    assert len(found) == 1, [r.name for r in found]
    return found[0].inputs


def _rendered(result: RunResult, release_name: str) -> list[dict[str, Any]]:
    release = next(r.inputs for r in of_type(result, RELEASE) if r.inputs["name"] == release_name)
    reference = reference_from_release(
        release["chart"], release["version"], (release.get("repositoryOpts") or {}).get("repo")
    )
    chart = render_chart(
        default_resolver().resolve(reference),
        release["values"],
        release_name=release["name"],
        namespace=release["namespace"],
    )
    return [o.manifest for o in chart.objects]


def _pod_template(objects: list[dict[str, Any]], labels: dict[str, str]) -> dict[str, Any]:
    for obj in objects:
        if obj.get("kind") != "Deployment":
            continue
        template = obj["spec"]["template"]
        have = template["metadata"].get("labels", {})
        if all(have.get(k) == v for k, v in labels.items()):
            return dict(template)
    raise AssertionError(f"no rendered Deployment's pods carry {labels}")


def test_managed_prometheus_is_on_and_dcgm_follows_the_gpu_stack(plans: dict[str, RunResult]) -> None:
    dev = _one(plans["dev"], CLUSTER)["monitoringConfig"]
    assert dev["managedPrometheus"] == {"enabled": True}
    assert dev["enableComponents"] == ["SYSTEM_COMPONENTS", "DCGM"]  # dev's pools: GKE drivers
    kai = _one(plans["kai"], CLUSTER)["monitoringConfig"]
    # kai's only GPU pool runs the GPU Operator, whose own dcgm-exporter serves the GPU metrics.
    assert kai["enableComponents"] == ["SYSTEM_COMPONENTS"]


def test_kueue_scrape_reaches_the_rendered_controller_with_readable_credentials(
    plans: dict[str, RunResult],
) -> None:
    result = plans["dev"]
    monitors = [
        m for m in custom_objects(result, "PodMonitoring") if m["metadata"]["namespace"] == "kueue-system"
    ]
    assert len(monitors) == 1
    monitor = monitors[0]
    endpoint = monitor["spec"]["endpoints"][0]
    rendered = _rendered(result, "kueue")
    pod = _pod_template(rendered, monitor["spec"]["selector"]["matchLabels"])
    ports = {p["name"]: p["containerPort"] for c in pod["spec"]["containers"] for p in c.get("ports", [])}
    assert endpoint["port"] in ports and ports[endpoint["port"]] == 8443
    assert endpoint["scheme"] == "https"

    token = endpoint["authorization"]["credentials"]["secret"]
    secrets = [s for s in custom_objects(result, "Secret") if s["metadata"]["name"] == token["name"]]
    assert len(secrets) == 1 and token["key"] == "token"
    secret = secrets[0]
    assert secret["type"] == "kubernetes.io/service-account-token"
    assert "data" not in secret and "stringData" not in secret  # the token controller fills it
    account = secret["metadata"]["annotations"]["kubernetes.io/service-account.name"]

    # The collector may read that Secret, and nothing else.
    roles = {r["metadata"]["name"]: r for r in custom_objects(result, "Role")}
    bindings = [
        b
        for b in custom_objects(result, "RoleBinding")
        if {"kind": "ServiceAccount", "name": "collector", "namespace": "gmp-system"} in b["subjects"]
    ]
    assert len(bindings) == 1
    rules = roles[bindings[0]["roleRef"]["name"]]["rules"]
    assert rules == [
        {
            "apiGroups": [""],
            "resources": ["secrets"],
            "resourceNames": [token["name"]],
            "verbs": ["get", "list", "watch"],
        }
    ]

    # The token's account gets exactly the chart's metrics-reader ClusterRole: get /metrics.
    granted = [
        b
        for b in custom_objects(result, "ClusterRoleBinding")
        if any(s["name"] == account and s["namespace"] == "kueue-system" for s in b["subjects"])
    ]
    assert len(granted) == 1
    role_name = granted[0]["roleRef"]["name"]
    chart_roles = {o["metadata"]["name"]: o for o in rendered if o.get("kind") == "ClusterRole"}
    assert chart_roles[role_name]["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]


def test_kuberay_operator_scrape_matches_its_rendered_pod(plans: dict[str, RunResult]) -> None:
    for stack in ("dev", "kai"):
        result = plans[stack]
        monitor = next(
            m
            for m in custom_objects(result, "PodMonitoring")
            if m["metadata"]["namespace"] == "kuberay-system"
        )
        pod = _pod_template(_rendered(result, "kuberay-operator"), monitor["spec"]["selector"]["matchLabels"])
        names = {p["name"] for c in pod["spec"]["containers"] for p in c.get("ports", [])}
        assert monitor["spec"]["endpoints"][0]["port"] in names
        assert "authorization" not in monitor["spec"]["endpoints"][0]  # plain-HTTP /metrics


# --- the dashboard and alert policies ------------------------------------------------------------

DASHBOARD = "gcp:monitoring/dashboard:Dashboard"
ALERT = "gcp:monitoring/alertPolicy:AlertPolicy"


def test_dashboard_has_a_row_per_cluster_queue_and_the_gpus(plans: dict[str, RunResult]) -> None:
    doc = json.loads(_one(plans["dev"], DASHBOARD)["dashboardJson"])
    titles = [t["widget"]["title"] for t in doc["mosaicLayout"]["tiles"]]
    assert titles == [
        "cluster-queue: pending workloads",
        "cluster-queue: admission wait (s)",
        "cluster-queue: GPU quota in use",
        "cluster-queue: evictions by reason (1h)",
        "cluster-queue: preemptions by reason (1h)",
        "cluster-queue: provisioning-check wait (s)",  # dev's queue has a DWS admission check
        "GPU utilisation (%)",
        "GPU memory used (MiB)",
    ]
    # The kai stack has no Kueue: a panel per KAI queue (its kaiQueues tree), then the GPUs.
    kai = json.loads(_one(plans["kai"], DASHBOARD)["dashboardJson"])
    kai_titles = [t["widget"]["title"] for t in kai["mosaicLayout"]["tiles"]]
    queues = [q["name"] for q in config_value("kai", "gpu-batch:kaiQueues")]
    queues += [c["name"] for q in config_value("kai", "gpu-batch:kaiQueues") for c in q.get("children", [])]
    assert kai_titles == [
        *(f"KAI {name}: GPUs allocated / deserved / fair share" for name in sorted(queues)),
        *titles[-2:],
    ]


def test_dashboard_json_is_deterministic(plans: dict[str, RunResult]) -> None:
    again = run_stack("dev")
    assert _one(again, DASHBOARD)["dashboardJson"] == _one(plans["dev"], DASHBOARD)["dashboardJson"]


def test_alerts_are_labelled_and_notify_the_configured_channel() -> None:
    channel = "projects/gpu-batch-dev/notificationChannels/123"
    result = run_stack(
        "dev", {"gpu-batch:monitoring": {"notificationChannels": [channel], "maxProvisioningWait": "1h"}}
    )
    # One policy per team (dev: ml's ClusterQueue) and one for the platform's cluster-wide rules.
    policies = {r.inputs["userLabels"]["team"]: r.inputs for r in of_type(result, ALERT)}
    assert set(policies) == {"ml", "platform"}
    conditions = {
        c["displayName"]: c["conditionPrometheusQueryLanguage"]
        for p in policies.values()
        for c in p["conditions"]
    }
    assert len(conditions) == 5
    for inputs in policies.values():
        assert inputs["notificationChannels"] == [channel]
        assert 1 <= len(inputs["conditions"]) <= 6
    for condition in conditions.values():
        assert condition["disableMetricValidation"] is True
        assert set(condition["labels"]) == {"team", "queue"}
    wait = conditions["ClusterQueue cluster-queue: provisioning-check wait p95 above 3600s"]
    assert wait["labels"] == {"team": "ml", "queue": "cluster-queue"}
    assert wait["query"].endswith("> 3600")
    assert [c["displayName"] for c in policies["platform"]["conditions"]] == [
        "GPUs below 10% utilisation while workloads are admitted",
        "DCGM reports XID errors",
    ]


@pytest.mark.parametrize(
    ("monitoring", "expected"),
    [
        ({"maxProvisioningWait": "3h"}, "gpu-batch:monitoring.maxProvisioningWait"),
        ({"notificationChannels": ["my-channel"]}, "gpu-batch:monitoring.notificationChannels[0]"),
        ({"idleGpuUtilizationPercent": 0}, "gpu-batch:monitoring.idleGpuUtilizationPercent"),
        ({"alertWindow": 5}, "gpu-batch:monitoring.alertWindow"),
    ],
)
def test_bad_monitoring_config_is_one_line_naming_the_key(monitoring: dict[str, Any], expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        run_stack("dev", {"gpu-batch:monitoring": monitoring})
    lines = str(caught.value).splitlines()
    assert len(lines) == 1 and expected in lines[0], lines


# --- the scrape objects against the pinned GMP CRDs (prometheus-engine, ../shared/schemas/gmp) --


def test_the_stacks_pod_monitorings_are_valid_against_the_gmp_crd(plans: dict[str, RunResult]) -> None:
    from preview.crd_validation import Outcome, validate_object

    for stack in ("dev", "kai"):
        for monitor in custom_objects(plans[stack], "PodMonitoring"):
            result = validate_object(monitor)
            assert result.outcome == Outcome.VALID, result
            assert result.schema == "monitoring.googleapis.com/v1"
            # Every CEL rule runs: the port rule (self != 0 on an int-or-string, CEL's heterogeneous
            # equality) and the "no namespace on secret references" rules (__namespace__ escape).
            assert result.cel_rules_unchecked == 0 and result.cel_rules_checked > 0, result
    bad = next(iter(custom_objects(plans["dev"], "PodMonitoring")))
    zero = {**bad, "spec": {**bad["spec"], "endpoints": [{**bad["spec"]["endpoints"][0], "port": 0}]}}
    result = validate_object(zero)
    assert result.outcome == Outcome.INVALID and "Port is required" in str(result.violations)
    # GMP refuses a secret reference into another namespace (the collector reads only its own).
    kueue = next(
        m
        for m in custom_objects(plans["dev"], "PodMonitoring")
        if m["metadata"]["namespace"] == "kueue-system"
    )
    endpoint = kueue["spec"]["endpoints"][0]
    secret = {**endpoint["authorization"]["credentials"]["secret"], "namespace": "other"}
    elsewhere = {
        **endpoint,
        "authorization": {**endpoint["authorization"], "credentials": {"secret": secret}},
    }
    result = validate_object({**kueue, "spec": {**kueue["spec"], "endpoints": [elsewhere]}})
    assert result.outcome == Outcome.INVALID and "Namespace not allowed" in str(result.violations)


def test_ray_pods_are_scraped_cluster_wide_where_the_stack_runs_ray(plans: dict[str, RunResult]) -> None:
    for stack in ("dev", "kai"):
        (monitor,) = list(custom_objects(plans[stack], "ClusterPodMonitoring"))
        assert monitor["spec"]["selector"] == {"matchLabels": {"ray.io/is-ray-node": "yes"}}
        assert monitor["spec"]["endpoints"][0]["port"] == "metrics"


def test_dcgm_without_managed_prometheus_is_refused() -> None:
    from components.gke import monitoring_config

    with pytest.raises(ValueError, match="DCGM metrics need managed Prometheus"):
        monitoring_config(managed_prometheus=False, dcgm=True)
    assert monitoring_config(managed_prometheus=False, dcgm=False) is None


def test_kueue_resource_metrics_can_be_turned_off_in_the_component() -> None:
    from components.kueue_config import KueueConfiguration

    assert KueueConfiguration().document()["metrics"]["enableClusterQueueResources"] is True
    off = KueueConfiguration(cluster_queue_resource_metrics=False).document()["metrics"]
    assert off == {"bindAddress": ":8443", "enableClusterQueueResources": False}
