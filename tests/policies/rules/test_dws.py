"""Queued pools set flex-start; queued-provisioning configs pin pods to their own nodes (issue 10 #6, #7)."""

from __future__ import annotations

from tests.policies.pack_harness import UNKNOWN, run
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import (
    DELETE,
    REQUEST_NODE_SELECTOR,
    cpu_pool,
    flex_pool,
    patch,
    provisioning_request_config,
    queued_pool,
)

FLEX = get_policy("gke-queued-pool-flex-start")
SELECTOR = get_policy("kueue-queued-provisioning-node-selector")


def test_queued_pool_without_flex_start_is_caught() -> None:
    assert run(FLEX, [queued_pool(), flex_pool(), cpu_pool()]).clean
    unset = run(FLEX, [patch(queued_pool(), "nodeConfig.flexStart", DELETE)])
    assert len(unset.violations) == 1 and "nodeConfig.flexStart is None" in unset.messages[0]
    off = run(FLEX, [patch(queued_pool(), "nodeConfig.flexStart", False)])
    assert len(off.violations) == 1 and "--flex-start" in off.messages[0]


def test_unknown_flex_start_cannot_be_checked_yet() -> None:
    result = run(FLEX, [patch(queued_pool(), "nodeConfig.flexStart", UNKNOWN)])
    assert result.clean and result.cannot_check and "flexStart" in result.cannot_check


def test_queued_provisioning_config_without_request_selector_is_caught() -> None:
    assert run(SELECTOR, [provisioning_request_config()]).clean
    missing = run(SELECTOR, [patch(provisioning_request_config(), "spec.podSetUpdates", DELETE)])
    assert len(missing.violations) == 1
    assert "autoscaling.gke.io/provisioning-request" in missing.messages[0]
    wrong_detail = {**REQUEST_NODE_SELECTOR, "valueFromProvisioningClassDetail": "RequestKey"}
    other = patch(provisioning_request_config(), "spec.podSetUpdates.nodeSelector", [wrong_detail])
    assert len(run(SELECTOR, [other]).violations) == 1


def test_other_classes_need_no_request_selector() -> None:
    check_capacity = patch(
        patch(provisioning_request_config(), "spec.podSetUpdates", DELETE),
        "spec.provisioningClassName",
        "check-capacity.autoscaling.x-k8s.io",
    )
    assert run(SELECTOR, [check_capacity]).clean
