"""kuberay-name, kuberay-autoscaling, kuberay-rayjob-spec, written from KubeRay v1.7.0's validation.

Source: ray-project/kuberay v1.7.0 ``ray-operator/controllers/ray/utils/validation.go``:
``ValidateRayClusterMetadata`` / ``ValidateRayJobMetadata`` / ``ValidateRayServiceMetadata``
(names; lengths from ``utils/constant.go``), ``ValidateRayClusterSpec`` with
``validateWorkerGroupIdleTimeout``, ``validateRayGroupLabels``, ``validateRayGroupResources``, and
``ValidateRayJobSpec`` with ``validateDeletionConfiguration``.
"""

from __future__ import annotations

from typing import Any

import pytest
from gpu_batch_policy.rules.webhooks.kuberay import POLICIES

from tests.policies.workload_stack import UNKNOWN, Registration, k8s, pod, ray_cluster, ray_job, run, workers

RULES = {p.name: p for p in POLICIES}
NAME, AUTOSCALING, RAYJOB = RULES["kuberay-name"], RULES["kuberay-autoscaling"], RULES["kuberay-rayjob-spec"]


def head_with_env(**env: str) -> dict[str, Any]:
    template = pod()
    template["spec"]["containers"][0]["env"] = [{"name": k, "value": v} for k, v in env.items()]
    return template


def cluster(spec_extra: dict[str, Any] | None = None, **kwargs: Any) -> Registration:
    reg = ray_cluster("rc", **kwargs)
    reg[1]["spec"].update(spec_extra or {})
    return reg


def rayjob(**spec: Any) -> Registration:
    reg = ray_job("rj", groups=[workers("w", pod(), 1)])
    reg[1]["spec"].update({"shutdownAfterJobFinishes": True, **spec})
    for key in [k for k, v in spec.items() if v is None]:
        del reg[1]["spec"][key]
    return reg


# --- names --------------------------------------------------------------------------------------
@pytest.mark.parametrize(("kind", "limit"), [("RayCluster", 53), ("RayJob", 47), ("RayService", 47)])
def test_name_length_limit(kind: str, limit: int) -> None:
    too_long = k8s("ray.io/v1", kind, "r" * (limit + 1), spec={})
    at_limit = k8s("ray.io/v1", kind, "r" * limit, spec={})
    assert run(NAME, [too_long]).mentions(f"at most {limit}")
    assert run(NAME, [at_limit]).violations == []


@pytest.mark.parametrize("name", ["1job", "my.job", "My-Job", "job-"])
def test_name_must_be_a_dns1035_label(name: str) -> None:
    assert run(NAME, [ray_job(name)]).mentions("DNS-1035")


def test_unknown_name_is_cannot_check() -> None:
    outcome = run(NAME, [ray_job(UNKNOWN)])
    assert outcome.violations == [] and outcome.cannot_check is not None


# --- autoscaling --------------------------------------------------------------------------------
def test_idle_timeout_needs_autoscaler_v2() -> None:
    groups = [workers("w", pod(), 1, idleTimeoutSeconds=60)]
    v1 = cluster({"enableInTreeAutoscaling": True}, groups=groups)
    assert run(AUTOSCALING, [v1]).mentions("idleTimeoutSeconds is set but autoscaler v2 is not enabled")
    v2 = cluster({"enableInTreeAutoscaling": True, "autoscalerOptions": {"version": "v2"}}, groups=groups)
    assert run(AUTOSCALING, [v2]).violations == []
    env_v2 = cluster(
        {"enableInTreeAutoscaling": True}, head=head_with_env(RAY_enable_autoscaler_v2="1"), groups=groups
    )
    assert run(AUTOSCALING, [env_v2]).violations == []


def test_negative_idle_timeouts_are_refused() -> None:
    groups = [workers("w", pod(), 1, idleTimeoutSeconds=-1)]
    spec = {"enableInTreeAutoscaling": True, "autoscalerOptions": {"version": "v2", "idleTimeoutSeconds": -3}}
    outcome = run(AUTOSCALING, [cluster(spec, groups=groups)])
    assert outcome.mentions("idleTimeoutSeconds is -1") and outcome.mentions(
        "autoscalerOptions.idleTimeoutSeconds is -3"
    )


def test_suspended_worker_group_under_autoscaling() -> None:
    groups = [workers("w", pod(), 1, suspend=True)]
    assert run(AUTOSCALING, [cluster({"enableInTreeAutoscaling": True}, groups=groups)]).mentions(
        "is suspended"
    )
    assert run(AUTOSCALING, [cluster(groups=groups)]).violations == []


def test_autoscaler_v2_env_without_autoscaling() -> None:
    head = head_with_env(RAY_enable_autoscaler_v2="true")
    assert run(AUTOSCALING, [cluster(head=head)]).mentions("enableInTreeAutoscaling is not true")
    both = cluster({"enableInTreeAutoscaling": True, "autoscalerOptions": {"version": "v2"}}, head=head)
    assert run(AUTOSCALING, [both]).mentions("sets both autoscalerOptions.version")


def test_restart_policy_under_autoscaler_v2() -> None:
    template = pod()
    template["spec"]["restartPolicy"] = "Always"
    spec = {"enableInTreeAutoscaling": True, "autoscalerOptions": {"version": "v2"}}
    assert run(AUTOSCALING, [cluster(spec, groups=[workers("w", template, 1)])]).mentions(
        "restartPolicy Always"
    )
    assert run(AUTOSCALING, [cluster(groups=[workers("w", template, 1)])]).violations == []


def test_ray_start_params_labels_and_double_resources() -> None:
    groups = [
        workers("a", pod(), 1, rayStartParams={"labels": "x=y"}),
        workers("b", pod(), 1, rayStartParams={"num-gpus": "1"}, resources={"GPU": "1"}),
        workers("c", pod(), 1, labels={"bad key!": "v"}),
    ]
    outcome = run(AUTOSCALING, [cluster(groups=groups)])
    assert outcome.mentions("rayStartParams sets 'labels'")
    assert outcome.mentions("both in rayStartParams (num-gpus)")
    assert outcome.mentions("labels has 'bad key!: v'")
    fine = [workers("a", pod(), 1, rayStartParams={"num-cpus": "0"}, labels={"ray.io/market": "spot"})]
    assert run(AUTOSCALING, [cluster(groups=fine)]).violations == []


# --- RayJob spec --------------------------------------------------------------------------------
def test_clean_rayjob_passes() -> None:
    assert (
        run(
            RAYJOB, [rayjob(ttlSecondsAfterFinished=60, backoffLimit=2, activeDeadlineSeconds=600)]
        ).violations
        == []
    )


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        (
            {"suspend": True, "shutdownAfterJobFinishes": False},
            "suspended with shutdownAfterJobFinishes false",
        ),
        ({"ttlSecondsAfterFinished": -1}, "ttlSecondsAfterFinished -1"),
        (
            {"ttlSecondsAfterFinished": 60, "shutdownAfterJobFinishes": False},
            "with shutdownAfterJobFinishes false",
        ),
        ({"rayClusterSpec": None}, "neither spec.rayClusterSpec nor spec.clusterSelector"),
        ({"rayClusterSpec": None, "clusterSelector": {"team": "a"}}, "without a 'ray.io/cluster'"),
        ({"clusterSelector": {"ray.io/cluster": "c"}, "suspend": True}, "existing cluster (clusterSelector)"),
        (
            {"clusterSelector": {"ray.io/cluster": "c"}, "submissionMode": "SidecarMode"},
            "clusterSelector in SidecarMode",
        ),
        (
            {"clusterSelector": {"ray.io/cluster": "c"}, "backoffLimit": 1},
            "backoffLimit 1 with a clusterSelector",
        ),
        ({"submissionMode": "InteractiveMode", "backoffLimit": 2}, "in InteractiveMode"),
        (
            {"submissionMode": "SidecarMode", "submitterPodTemplate": pod()},
            "submitterPodTemplate in SidecarMode",
        ),
        ({"activeDeadlineSeconds": 0}, "activeDeadlineSeconds 0"),
        ({"preRunningDeadlineSeconds": -5}, "preRunningDeadlineSeconds -5"),
        ({"backoffLimit": -1}, "backoffLimit -1"),
    ],
)
def test_rayjob_spec_refusals(spec: dict[str, Any], words: str) -> None:
    outcome = run(RAYJOB, [rayjob(**spec)])
    assert outcome.mentions(words, "ValidationFailed"), outcome.violations


def test_rayjob_unknown_field_is_cannot_check() -> None:
    outcome = run(RAYJOB, [rayjob(suspend=UNKNOWN)])
    assert outcome.violations == [] and outcome.cannot_check is not None


def test_malformed_ray_objects_do_not_crash() -> None:
    odd = k8s(
        "ray.io/v1",
        "RayCluster",
        "odd",
        spec={
            "headGroupSpec": {"template": {"spec": {"containers": "x"}}},
            "workerGroupSpecs": [None, 3, {"rayStartParams": []}],
        },
    )
    odd_job = k8s("ray.io/v1", "RayJob", "oddjob", spec={"clusterSelector": ["x"], "backoffLimit": "lots"})
    for rule in POLICIES:
        run(rule, [odd, odd_job])  # any exception fails the test


# --- RayService spec ----------------------------------------------------------------------------
SERVICE = RULES["kuberay-rayservice-spec"]


def rayservice(annotations: dict[str, Any] | None = None, **spec: Any) -> Registration:
    config = {"headGroupSpec": {"template": pod()}, "workerGroupSpecs": [workers("w", pod(), 1)]}
    body = {"serveConfigV2": "applications: []", "rayClusterConfig": config, **spec}
    return k8s("ray.io/v1", "RayService", "serve", annotations=annotations, spec=body)


OPTIONS: dict[str, Any] = {
    "maxSurgePercent": 50,
    "stepSizePercent": 25,
    "intervalSeconds": 30,
    "gatewayClassName": "gke-l7",
}
INCREMENTAL: dict[str, Any] = {
    "type": "NewClusterWithIncrementalUpgrade",
    "clusterUpgradeOptions": OPTIONS,
}


def autoscaling_service(options: dict[str, Any]) -> Registration:
    reg = rayservice(upgradeStrategy={**INCREMENTAL, "clusterUpgradeOptions": options})
    reg[1]["spec"]["rayClusterConfig"]["enableInTreeAutoscaling"] = True
    return reg


def test_clean_rayservice_passes() -> None:
    fine = [rayservice({"ray.io/initializing-timeout": "10m"}, rayClusterDeletionDelaySeconds=60)]
    fine.append(autoscaling_service(OPTIONS))
    fine.append(rayservice({"ray.io/initializing-timeout": "600"}, upgradeStrategy={"type": "NewCluster"}))
    assert run(SERVICE, fine).violations == []


@pytest.mark.parametrize(
    ("service", "words"),
    [
        (rayservice(upgradeStrategy={"type": "Rolling"}), "upgradeStrategy.type 'Rolling'"),
        (rayservice(rayClusterDeletionDelaySeconds=-1), "rayClusterDeletionDelaySeconds -1"),
        (rayservice({"ray.io/initializing-timeout": "-5m"}), "initializing-timeout='-5m'"),
        (rayservice({"ray.io/initializing-timeout": "soon"}), "initializing-timeout='soon'"),
        (rayservice({"ray.io/initializing-timeout": "0"}), "initializing-timeout='0'"),
        (rayservice(upgradeStrategy=INCREMENTAL), "without in-tree autoscaling"),
        (
            autoscaling_service({**OPTIONS, "stepSizePercent": 80}),
            "above maxSurgePercent",
        ),
        (
            autoscaling_service({**OPTIONS, "intervalSeconds": 0}),
            "intervalSeconds 0",
        ),
        (autoscaling_service({"stepSizePercent": 10, "intervalSeconds": 5}), "without a gatewayClassName"),
    ],
)
def test_rayservice_refusals(service: Registration, words: str) -> None:
    assert run(SERVICE, [service]).mentions(words, "never reconciles it")


def test_head_service_name_is_refused() -> None:
    service = rayservice()
    service[1]["spec"]["rayClusterConfig"]["headGroupSpec"]["headService"] = {"metadata": {"name": "fixed"}}
    assert run(SERVICE, [service]).mentions("headService.metadata.name")


def test_template_placeholder_name_is_cannot_check_not_a_finding() -> None:
    """A published template (envsubst ``${JOB_ID}``) has no name until substituted."""
    outcome = run(NAME, [ray_job("rayjob-${JOB_ID}")])
    assert outcome.violations == []
    assert (
        outcome.cannot_check is not None
        and "'rayjob-${JOB_ID}' (an unsubstituted template" in outcome.cannot_check
    )
