"""dcgm-double-exporter, and the GPU Operator's dcgm-exporter as a scrape target.

Upstream: NVIDIA/gpu-operator v26.7.0 (pinned chart, rendered by the real Helm engine; its
ClusterPolicy's ``dcgmExporter`` is on by default, and the controller's dcgm-exporter DaemonSet
serves container port ``metrics`` 9400: assets/state-dcgm-exporter/0800_daemonset.yaml); GKE's
managed DCGM is ``monitoringConfig.enableComponents: [..., DCGM]`` (pulumi-gcp 10.2.0).
"""

from __future__ import annotations

from typing import Any

from pulumi_policy import EnforcementLevel

from components.monitoring import dcgm_exporter_scrape
from tests.policies.pack_harness import UNKNOWN, Res, policy, run, run_all
from tests.policies.pack_objects import gke_cluster, k8s, patch, pinned_release, queued_pool

RULE = policy("dcgm-double-exporter")
TARGET = policy("pod-monitoring-target")


def cluster(*components: str) -> Res:
    return gke_cluster(
        monitoringConfig={"enableComponents": list(components), "managedPrometheus": {"enabled": True}}
    )


def operator_pool(opt_out: bool = False) -> Res:
    pool = queued_pool()
    labels: dict[str, Any] = {"gke-no-default-nvidia-gpu-device-plugin": "true"}
    if opt_out:
        labels["nvidia.com/gpu.deploy.operands"] = "false"
    pool = patch(pool, "nodeConfig.labels", labels)
    return patch(
        pool,
        "nodeConfig.guestAccelerators[0].gpuDriverInstallationConfig",
        {"gpuDriverVersion": "INSTALLATION_DISABLED"},
    )


def gpu_operator(**values: Any) -> Res:
    return pinned_release("gpu-operator", "gpu-operator", values=values)


def test_is_advisory() -> None:
    assert RULE.enforcement_level == EnforcementLevel.ADVISORY


def test_managed_dcgm_with_the_operators_exporter_on_its_pools_is_caught() -> None:
    result = run(RULE, [cluster("SYSTEM_COMPONENTS", "DCGM"), operator_pool(), gpu_operator()])
    assert len(result.messages) == 1
    assert "two collectors for the same GPUs" in result.text()


def test_what_stays_allowed() -> None:
    # The operator's exporter alone (our program on GPU Operator stacks).
    assert run(RULE, [cluster("SYSTEM_COMPONENTS"), operator_pool(), gpu_operator()]).clean
    # GKE's DCGM with the operator's exporter turned off.
    off = gpu_operator(dcgmExporter={"enabled": False})
    assert run(RULE, [cluster("SYSTEM_COMPONENTS", "DCGM"), operator_pool(), off]).clean
    # GKE's DCGM on pools opted out of the operator's operands.
    assert run(
        RULE, [cluster("SYSTEM_COMPONENTS", "DCGM"), operator_pool(opt_out=True), gpu_operator()]
    ).clean
    # No operator at all.
    assert run(RULE, [cluster("SYSTEM_COMPONENTS", "DCGM"), queued_pool()]).clean


def test_unknown_components_cannot_be_checked_yet() -> None:
    unknown = gke_cluster(monitoringConfig={"enableComponents": UNKNOWN})
    result = run(RULE, [unknown, operator_pool(), gpu_operator()])
    assert result.clean and result.cannot_check is not None


def test_the_fixture_fires_exactly_this_rule_among_the_monitoring_rules() -> None:
    names = [
        "dcgm-double-exporter",
        "pod-monitoring-target",
        "servicemonitor-without-crd",
        "promql-parses",
        "promql-metric-exported",
    ]
    runs = run_all([cluster("SYSTEM_COMPONENTS", "DCGM"), operator_pool(), gpu_operator()], names)
    assert {n for n, r in runs.items() if not r.clean} == {"dcgm-double-exporter"}


def test_the_programs_dcgm_exporter_scrape_targets_the_operators_daemonset() -> None:
    scrape = dcgm_exporter_scrape("gpu-operator")
    monitor = k8s(
        "monitoring.googleapis.com/v1",
        "PodMonitoring",
        scrape.name,
        namespace="gpu-operator",
        spec=scrape.spec(),
    )
    assert run(TARGET, [gpu_operator(), monitor]).clean
    wrong = k8s(
        "monitoring.googleapis.com/v1",
        "PodMonitoring",
        scrape.name,
        namespace="gpu-operator",
        spec={
            **scrape.spec(),
            "endpoints": [{"port": "gpu-metrics", "interval": "30s"}],
        },  # the Service's port
    )
    assert "'gpu-metrics' is not a container port" in run(TARGET, [gpu_operator(), wrong]).text()
    # With the exporter off there is no pod to scrape.
    assert "selects no pod" in run(TARGET, [gpu_operator(dcgmExporter={"enabled": False}), monitor]).text()
