"""Advisories: infinite quota without a check, priorities without preemption, open tenancy in prod."""

from __future__ import annotations

import pytest
from pulumi_policy import EnforcementLevel

from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_harness import run
from tests.policies.pack_objects import cluster_queue, patch, priority_class

INFINITE = get_policy("kueue-infinite-quota-without-admission-check")
PRIORITY = get_policy("kueue-priority-classes-without-preemption")
OPEN = get_policy("kueue-open-namespace-selector")
GPU = "spec.resourceGroups[0].flavors[0].resources[2].nominalQuota"


def test_advisories_are_advisory() -> None:
    for pol in (INFINITE, PRIORITY, OPEN):
        assert pol.enforcement_level == EnforcementLevel.ADVISORY


def test_infinite_gpu_quota_without_check_is_flagged() -> None:
    cq = patch(cluster_queue(), GPU, 1e9)
    result = run(INFINITE, [cq])
    assert len(result.violations) == 1 and "flavor 'gpu-flavor'" in result.messages[0]
    assert result.violations[0][1] == cq.urn


def test_infinite_quota_behind_a_check_is_fine() -> None:
    v1 = patch(cluster_queue(version="v1beta1", admissionChecks=["dws"]), GPU, 10000.0)
    assert run(INFINITE, [v1], {"infiniteGpuQuota": 10000}).clean
    on_other_flavor = cluster_queue(
        admissionChecksStrategy={"admissionChecks": [{"name": "dws", "onFlavors": ["x"]}]}
    )
    assert len(run(INFINITE, [patch(on_other_flavor, GPU, 1e9)]).violations) == 1


def test_threshold_is_configurable() -> None:
    cq = patch(cluster_queue(), GPU, 500.0)
    assert run(INFINITE, [cq]).clean
    assert len(run(INFINITE, [cq], {"infiniteGpuQuota": 100}).violations) == 1


def test_priority_classes_without_preemption() -> None:
    classes = [priority_class("prod-priority", 1000.0), priority_class("dev-priority", 100.0)]
    result = run(PRIORITY, [*classes, cluster_queue()])
    assert len(result.violations) == 1 and "dev-priority, prod-priority" in result.messages[0]
    preempting = patch(cluster_queue(), "spec.preemption", {"withinClusterQueue": "LowerPriority"})
    assert run(PRIORITY, [*classes, cluster_queue("other"), preempting]).clean
    assert run(PRIORITY, [cluster_queue()]).clean  # no classes, nothing to say


@pytest.mark.parametrize(("stack", "flagged"), [("prod", True), ("org/production", True), ("dev", False)])
def test_open_selector_follows_the_stack_name(
    monkeypatch: pytest.MonkeyPatch, stack: str, flagged: bool
) -> None:
    monkeypatch.setenv("PULUMI_STACK", stack)
    cq = patch(cluster_queue(), "spec.namespaceSelector", {})
    assert (len(run(OPEN, [cq]).violations) == 1) is flagged
    assert run(OPEN, [cluster_queue()]).clean  # a real selector is always fine


def test_strict_tenancy_flag_overrides_the_stack_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PULUMI_STACK", "dev")
    cq = patch(cluster_queue(), "spec.namespaceSelector", {})
    assert len(run(OPEN, [cq], {"strictTenancy": True}).violations) == 1
    monkeypatch.setenv("PULUMI_STACK", "prod")
    assert run(OPEN, [cq], {"strictTenancy": False}).clean
