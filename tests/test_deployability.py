"""Issue 10: what a real `pulumi up` of each stack would hit, checked in the recorded plan."""

from __future__ import annotations

import pytest

from preview.harness import RunResult
from tests.stack_runner import custom_objects, run_stack

REQUEST_SELECTOR = {
    "key": "autoscaling.gke.io/provisioning-request",
    "valueFromProvisioningClassDetail": "ResizeRequestName",
}


@pytest.fixture(scope="module")
def prod() -> RunResult:
    return run_stack("prod")


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_queued_provisioning_configs_pin_pods_to_their_nodes(stack: str) -> None:
    configs = list(custom_objects(run_stack(stack), "ProvisioningRequestConfig"))
    assert configs
    for prc in configs:
        assert prc["spec"]["provisioningClassName"] == "queued-provisioning.gke.io"
        assert prc["spec"]["podSetUpdates"] == {"nodeSelector": [REQUEST_SELECTOR]}


def test_check_capacity_configs_get_no_request_selector() -> None:
    (prc,) = custom_objects(run_stack("skypilot"), "ProvisioningRequestConfig")
    assert "podSetUpdates" not in prc["spec"]


def test_prod_sets_no_preemption_field_fair_sharing_ignores(prod: RunResult) -> None:
    queues = list(custom_objects(prod, "ClusterQueue"))
    assert len(queues) == 2
    for cq in queues:
        assert cq["spec"]["fairSharing"]["weight"] == "1"
        assert cq["spec"]["preemption"]["borrowWithinCohort"] in (None, {"policy": "Never"})
