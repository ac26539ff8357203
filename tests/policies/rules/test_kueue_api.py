"""Kueue API rules (CRD CEL + webhooks): each breakage caught, valid objects of both versions clean."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.policies.pack_harness import UNKNOWN, run
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import (
    DELETE,
    cluster_queue,
    cohort,
    k8s,
    patch,
    priority_class,
    resource_group,
)

LIMITS = get_policy("kueue-limits-need-cohort")
LENDING = get_policy("kueue-lending-limit-within-nominal")
QUANTITIES = get_policy("kueue-quota-quantities")
SHAPE = get_policy("kueue-flavor-resources-match-covered")
UNIQUE = get_policy("kueue-resource-group-uniqueness")
PREEMPTION = get_policy("kueue-preemption-combinations")
VERSIONS = get_policy("kueue-api-version-fields")
API_RULES = (LIMITS, LENDING, QUANTITIES, SHAPE, UNIQUE, PREEMPTION, VERSIONS)

GPU = "spec.resourceGroups[0].flavors[0].resources[2]"


def borrowing_queue(version: str = "v1beta2") -> Any:
    """A valid queue in a cohort that lends and borrows GPUs."""
    field = "cohortName" if version == "v1beta2" else "cohort"
    cq = cluster_queue(version=version, **{field: "org"})
    cq = patch(cq, f"{GPU}.borrowingLimit", 4.0)
    cq = patch(cq, f"{GPU}.lendingLimit", 2.0)
    return patch(
        cq,
        "spec.preemption",
        {
            "reclaimWithinCohort": "Any",
            "borrowWithinCohort": {"policy": "LowerPriority"},
            "withinClusterQueue": "LowerPriority",
        },
    )


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_valid_queues_of_both_versions_are_clean(version: str) -> None:
    for obj in (
        cluster_queue(version=version),
        borrowing_queue(version),
        cohort("org", parent="root", version=version),
    ):
        for pol in API_RULES:
            result = run(pol, [obj])
            assert result.clean and result.cannot_check is None, (pol.name, result.text())


def test_limits_without_cohort_are_caught() -> None:
    cq = patch(borrowing_queue(), "spec.cohortName", DELETE)
    text = run(LIMITS, [cq]).text()
    assert "borrowingLimit is set but spec.cohortName is empty" in text
    assert "lendingLimit is set but spec.cohortName is empty" in text


def test_v1beta2_queue_with_v1beta1_cohort_field_has_no_cohort() -> None:
    cq = patch(patch(borrowing_queue(), "spec.cohortName", DELETE), "spec.cohort", "org")
    assert len(run(LIMITS, [cq]).violations) == 2  # `cohort` is pruned in v1beta2
    assert "spec.cohort does not exist in kueue.x-k8s.io/v1beta2" in run(VERSIONS, [cq]).text()


def test_cohort_limits_need_a_parent() -> None:
    group = resource_group("gpu-flavor", {"nvidia.com/gpu": 4.0}, nvidia_com_gpu={"lendingLimit": 1.0})
    orphan = cohort("org", resourceGroups=[group])
    assert "spec.parentName is empty" in run(LIMITS, [orphan]).text()
    assert run(LIMITS, [cohort("org", parent="root", resourceGroups=[group])]).clean


def test_unknown_cohort_defers_the_limit_check() -> None:
    cq = patch(borrowing_queue(), "spec.cohortName", UNKNOWN)
    result = run(LIMITS, [cq])
    assert result.clean and result.cannot_check is not None and "cohortName" in result.cannot_check


def test_lending_above_nominal_is_caught() -> None:
    cq = patch(borrowing_queue(), f"{GPU}.lendingLimit", 9.0)
    result = run(LENDING, [cq])
    assert len(result.violations) == 1 and "lendingLimit 9 exceeds nominalQuota 8" in result.messages[0]
    memory = patch(borrowing_queue(), "spec.resourceGroups[0].flavors[0].resources[1].lendingLimit", "200Gi")
    assert "exceeds nominalQuota 192Gi" in run(LENDING, [memory]).text()
    assert run(LENDING, [patch(borrowing_queue(), f"{GPU}.lendingLimit", "8")]).clean


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("nominalQuota", -1.0, "is negative"),
        ("nominalQuota", "eight", "is not a quantity"),
        ("nominalQuota", DELETE, "is missing (required)"),
        ("borrowingLimit", "-2", "is negative"),
        ("lendingLimit", "1.5Xi", "is not a quantity"),
    ],
)
def test_bad_quantities_are_caught(field: str, value: Any, expected: str) -> None:
    cq = patch(borrowing_queue(), f"{GPU}.{field}", value)
    result = run(QUANTITIES, [cq])
    assert len(result.violations) == 1 and expected in result.messages[0] and field in result.messages[0]


def test_flavor_resources_must_match_covered_resources() -> None:
    short = patch(
        cluster_queue(), "spec.resourceGroups[0].flavors[0].resources", [{"name": "cpu", "nominalQuota": 1.0}]
    )
    assert "same number of resources" in run(SHAPE, [short]).text()
    cq = cluster_queue()
    resources = cq.props["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    swapped = patch(
        cq, "spec.resourceGroups[0].flavors[0].resources", [resources[1], resources[0], resources[2]]
    )
    result = run(SHAPE, [swapped])
    assert len(result.violations) == 1 and "same order" in result.messages[0]


def test_flavor_and_resource_in_one_group_only() -> None:
    groups = [
        resource_group("gpu-flavor", {"cpu": 1.0}),
        resource_group("gpu-flavor", {"cpu": 2.0}),
    ]
    text = run(UNIQUE, [cluster_queue(resourceGroups=groups)]).text()
    assert "resource 'cpu' is covered in resourceGroups[0] and" in text
    assert "flavor 'gpu-flavor' appears in resourceGroups[0] and" in text
    split = [resource_group("a", {"cpu": 1.0}), resource_group("b", {"nvidia.com/gpu": 1.0})]
    assert run(UNIQUE, [cluster_queue(resourceGroups=split)]).clean


def test_duplicate_flavor_within_a_group_is_caught() -> None:
    group = resource_group("f", {"cpu": 1.0})
    group["flavors"].append(dict(group["flavors"][0]))
    assert "appears twice in" in run(UNIQUE, [cluster_queue(resourceGroups=[group])]).text()


def test_preemption_combinations() -> None:
    never_reclaim = patch(
        cluster_queue(), "spec.preemption", {"borrowWithinCohort": {"policy": "LowerPriority"}}
    )
    assert "reclaimWithinCohort=Never" in run(PREEMPTION, [never_reclaim]).text()
    preference = patch(cluster_queue(), "spec.flavorFungibility", {"preference": "BorrowingOverPreemption"})
    assert "preference can only be set" in run(PREEMPTION, [preference]).text()
    ok = patch(
        cluster_queue(),
        "spec.flavorFungibility",
        {
            "whenCanBorrow": "TryNextFlavor",
            "whenCanPreempt": "TryNextFlavor",
            "preference": "PreemptionOverBorrowing",
        },
    )
    assert run(PREEMPTION, [ok]).clean


@pytest.mark.parametrize(
    ("version", "field", "value"),
    [
        ("v1beta2", "admissionChecks", ["dws"]),
        ("v1beta2", "cohort", "org"),
        ("v1beta1", "cohortName", "org"),
        ("v1beta1", "concurrentAdmissionPolicy", {}),
    ],
)
def test_fields_of_the_other_version_are_caught(version: str, field: str, value: Any) -> None:
    result = run(VERSIONS, [patch(cluster_queue(version=version), f"spec.{field}", value)])
    assert (
        len(result.violations) == 1
        and f"spec.{field} does not exist in kueue.x-k8s.io/{version}" in result.messages[0]
    )


def test_removed_fungibility_values_in_v1beta2() -> None:
    cq = patch(cluster_queue(), "spec.flavorFungibility", {"whenCanBorrow": "Borrow"})
    assert "whenCanBorrow: Borrow was removed" in run(VERSIONS, [cq]).text()
    assert run(
        VERSIONS,
        [patch(cluster_queue(version="v1beta1"), "spec.flavorFungibility", {"whenCanBorrow": "Borrow"})],
    ).clean


def test_admission_check_retry_delay_only_in_v1beta1() -> None:
    spec = {"controllerName": "x/y", "retryDelayMinutes": 15.0}
    assert run(VERSIONS, [k8s("kueue.x-k8s.io/v1beta1", "AdmissionCheck", "a", spec=spec)]).clean
    assert (
        "retryDelayMinutes"
        in run(VERSIONS, [k8s("kueue.x-k8s.io/v1beta2", "AdmissionCheck", "a", spec=spec)]).text()
    )


def test_workload_priority_class_fields_are_top_level() -> None:
    assert run(VERSIONS, [priority_class("prod", 1000.0)]).clean
    nested = k8s("kueue.x-k8s.io/v1beta2", "WorkloadPriorityClass", "prod", spec={"value": 1000.0})
    text = run(VERSIONS, [nested]).text()
    assert "value is written under spec" in text and "top-level `value` (int32, required) is missing" in text


# ../shared/schemas/kueue beside the repository.
SCHEMAS = Path(__file__).resolve().parents[4] / "shared" / "schemas" / "kueue"


@pytest.mark.skipif(not SCHEMAS.is_dir(), reason="upstream CRD schemas not on this machine")
def test_wrong_version_field_table_agrees_with_the_crds() -> None:
    from gpu_batch_policy.rules.kueue.api import _WRONG_VERSION_FIELDS

    files = {"ClusterQueue": "clusterqueues", "AdmissionCheck": "admissionchecks", "Cohort": "cohorts"}
    for (kind, version), fields in _WRONG_VERSION_FIELDS.items():
        crd = yaml.safe_load((SCHEMAS / f"kueue.x-k8s.io_{files[kind]}.yaml").read_text())
        served = {v["name"]: v for v in crd["spec"]["versions"]}
        spec_props = served[version]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        other = "v1beta1" if version == "v1beta2" else "v1beta2"
        other_props = served[other]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        for field in fields:
            assert field not in spec_props, (kind, version, field)
            if field != "parent":  # v1alpha1's name, absent from both
                assert field in other_props, (kind, other, field)
