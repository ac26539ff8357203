"""Kueue controller config (chart values): integrations cover the workloads; feature gates valid."""

from __future__ import annotations

import yaml

from tests.policies.pack_harness import UNKNOWN, run, secret
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import helm_release, kueue_release, ray_cluster, ray_job

INTEGRATIONS = get_policy("kueue-integrations-cover-workloads")
GATES = get_policy("kueue-feature-gates")


def config(*frameworks: str, **extra: object) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "integrations": {"frameworks": list(frameworks)},
            **extra,
        }
    )


SKYPILOT = helm_release(
    "sky-team1", "skypilot-nightly", {"apiService": {"config": "kubernetes: {}"}}, "team1"
)


def test_chart_default_config_covers_ray_and_pods() -> None:
    assert run(INTEGRATIONS, [kueue_release(), ray_job(), ray_cluster(), SKYPILOT]).clean


def test_custom_config_missing_rayjob_is_caught() -> None:
    result = run(INTEGRATIONS, [kueue_release(config("batch/job")), ray_job()])
    assert len(result.violations) == 1
    message, urn = result.violations[0]
    assert "lacks 'ray.io/rayjob'" in message and "RayJob 'team-a/trainer'" in message
    assert urn == kueue_release().urn


def test_raycluster_and_skypilot_needs() -> None:
    text = run(INTEGRATIONS, [kueue_release(config("ray.io/rayjob")), ray_cluster(), SKYPILOT]).text()
    assert "lacks 'ray.io/raycluster'" in text and "lacks 'pod'" in text
    ok = kueue_release(config("ray.io/rayjob", "ray.io/raycluster", "pod"))
    assert run(INTEGRATIONS, [ok, ray_job(), ray_cluster(), SKYPILOT]).clean


def test_unlabelled_ray_workloads_need_no_integration_unless_kueue_manages_all() -> None:
    unlabelled = ray_job(queue=None, **{"kai.scheduler/queue": "team-a"})
    assert run(INTEGRATIONS, [kueue_release(config("batch/job")), unlabelled]).clean
    manage_all = kueue_release(config("batch/job", manageJobsWithoutQueueName=True))
    assert "lacks 'ray.io/rayjob'" in run(INTEGRATIONS, [manage_all, unlabelled]).text()


def test_empty_framework_list_defaults_to_batch_job() -> None:
    assert "lacks 'ray.io/rayjob'" in run(INTEGRATIONS, [kueue_release(config()), ray_job()]).text()


def test_unknown_framework_name_is_caught() -> None:
    result = run(INTEGRATIONS, [kueue_release(config("batch/job", "ray.io/rayjobs"))])
    assert len(result.violations) == 1 and "unknown framework 'ray.io/rayjobs'" in result.messages[0]


def test_invalid_config_yaml_is_caught() -> None:
    assert "is not valid" in run(INTEGRATIONS, [kueue_release("integrations: [unclosed")]).text()


def test_secret_wrapped_config_is_read() -> None:
    release = kueue_release()
    release.props["values"]["managerConfig"] = {"controllerManagerConfigYaml": secret(config("batch/job"))}
    assert "lacks 'ray.io/rayjob'" in run(INTEGRATIONS, [release, ray_job()]).text()


def test_unknown_config_or_labels_cannot_be_checked() -> None:
    result = run(INTEGRATIONS, [kueue_release(UNKNOWN), ray_job()])
    assert result.clean and result.cannot_check is not None
    job = ray_job()
    job.props["metadata"]["labels"] = UNKNOWN
    result = run(INTEGRATIONS, [kueue_release(config("batch/job")), job])
    assert result.clean and result.cannot_check is not None and "labels" in result.cannot_check


def test_no_kueue_release_means_nothing_to_judge() -> None:
    assert run(INTEGRATIONS, [ray_job()]).clean


def test_removed_feature_gates_are_caught_in_both_places() -> None:
    cli = kueue_release(controllerManager={"featureGates": [{"name": "ProvisioningACC", "enabled": True}]})
    assert "sets 'ProvisioningACC', a gate removed" in run(GATES, [cli]).text()
    in_config = kueue_release(config("batch/job", featureGates={"LendingLimit": True}))
    assert "sets 'LendingLimit'" in run(GATES, [in_config]).text()


def test_gates_in_both_places_are_caught() -> None:
    both = kueue_release(
        config("batch/job", featureGates={"TopologyAwareScheduling": True}),
        controllerManager={"featureGates": [{"name": "PartialAdmission", "enabled": True}]},
    )
    result = run(GATES, [both])
    assert len(result.violations) == 1 and "cannot both specified" in result.messages[0]


def test_current_gates_in_one_place_are_clean() -> None:
    ok = kueue_release(
        controllerManager={"featureGates": [{"name": "TopologyAwareScheduling", "enabled": True}]}
    )
    assert run(GATES, [ok]).clean
