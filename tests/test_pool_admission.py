"""Issue 27 item 2: a team's pod cannot tolerate the system pool's platform-only taint.

The policy's CEL runs with cel-python over pods that tolerate the taint in every way Kubernetes'
``Toleration.ToleratesTaint`` (k8s.io/api core/v1/toleration.go) accepts, and over the
tolerations tenants still need (GPU and queued-provisioning taints), which pass.  The operators
that must run there tolerate it through their chart values, and the pack's placement logic
(``fit.placement``, the one ``kueue-flavor-on-operator-pool`` uses) puts them on the system pool
and a tenant pod off it.
"""

from __future__ import annotations

from typing import Any

import celpy
import pytest
from celpy.adapter import json_to_cel
from gpu_batch_policy.facts.fit.placement import placement
from gpu_batch_policy.facts.model.workloads import PodTemplate
from gpu_batch_policy.rules.tenancy import operator_pool

from components.gke import SYSTEM_POOL_TAINT_KEY, SYSTEM_POOL_TOLERATIONS
from components.pool_admission import POLICY_NAME, policy_spec
from tests.stack_runner import custom_objects, unedited_run
from tests.test_operator_pool import model
from tests.test_tenancy_findings import items


def admitted(tolerations: list[dict[str, Any]] | None) -> bool:
    pod: dict[str, Any] = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}
    if tolerations is not None:
        pod["spec"]["tolerations"] = tolerations
    env = celpy.Environment()
    (validation,) = policy_spec()["validations"]
    program = env.program(env.compile(validation["expression"]))
    return bool(program.evaluate({"object": json_to_cel(pod)}))


TOLERATES = {
    "the platform's own toleration": [dict(t) for t in SYSTEM_POOL_TOLERATIONS],
    "Exists on the key": [{"key": SYSTEM_POOL_TAINT_KEY, "operator": "Exists"}],
    "Equal without operator": [{"key": SYSTEM_POOL_TAINT_KEY, "value": "true", "effect": "NoSchedule"}],
    "every taint": [{"operator": "Exists"}],
    "every NoSchedule taint": [{"operator": "Exists", "effect": "NoSchedule"}],
    "among others": [
        {"key": "nvidia.com/gpu", "operator": "Exists"},
        {"key": "", "operator": "Exists", "effect": ""},
    ],
}
STILL_ALLOWED = {
    "no tolerations": None,
    "the GPU taint": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    "the queued-provisioning taint": [
        {"key": "cloud.google.com/gke-queued", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    ],
    "the key with another value": [{"key": SYSTEM_POOL_TAINT_KEY, "operator": "Equal", "value": "false"}],
    "the key for another effect": [
        {"key": SYSTEM_POOL_TAINT_KEY, "operator": "Exists", "effect": "NoExecute"}
    ],
    "the not-ready taint": [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}
    ],
}


@pytest.mark.parametrize("tolerations", TOLERATES.values(), ids=TOLERATES.keys())
def test_a_pod_that_tolerates_the_system_pool_is_refused(tolerations: list[dict[str, Any]]) -> None:
    assert not admitted(tolerations)


@pytest.mark.parametrize("tolerations", STILL_ALLOWED.values(), ids=STILL_ALLOWED.keys())
def test_what_tenants_can_still_tolerate(tolerations: list[dict[str, Any]] | None) -> None:
    assert admitted(tolerations)


def test_every_team_namespace_is_bound_every_requester_and_every_pod_update_judged() -> None:
    prod = unedited_run("prod")
    (policy,) = [
        p for p in custom_objects(prod, "ValidatingAdmissionPolicy") if p["metadata"]["name"] == POLICY_NAME
    ]
    assert "matchConditions" not in policy["spec"]  # the Job controller's and KubeRay's pods too
    (rule,) = policy["spec"]["matchConstraints"]["resourceRules"]
    assert rule["resources"] == ["pods"] and rule["operations"] == ["CREATE", "UPDATE"]
    (binding,) = [
        b
        for b in custom_objects(prod, "ValidatingAdmissionPolicyBinding")
        if b["metadata"]["name"] == POLICY_NAME
    ]
    (expr,) = binding["spec"]["matchResources"]["namespaceSelector"]["matchExpressions"]
    teams = sorted(t["namespace"] for t in custom_objects(prod, "LocalQueue") for t in [t["metadata"]])
    assert expr["values"] == sorted(set(teams)) and binding["spec"]["validationActions"] == ["Deny"]


def test_operators_land_on_the_system_pool_and_a_tenant_pod_does_not() -> None:
    """With the pack's placement logic over prod's rendered objects and its tainted pools."""
    m = model(items("prod"))
    ((pool, running),) = operator_pool.operator_pools(m).values()
    assert pool.name == "system" and len(running) == 2  # Kueue and KubeRay
    cpu_only = PodTemplate({"spec": {"containers": [{"name": "head"}]}}, "a Ray head")
    assert "system" not in {p.name for p in placement(m, cpu_only).matched}
    pinned = PodTemplate(
        {"spec": {"nodeSelector": {"cloud.google.com/gke-nodepool": "system"}}},
        "a pod selecting the system pool",
    )
    assert not placement(m, pinned).matched  # pending: the taint keeps it off
    # The same pod with the toleration would land there: what the admission policy refuses.
    tolerating = PodTemplate(
        {
            "spec": {
                "nodeSelector": {"cloud.google.com/gke-nodepool": "system"},
                "tolerations": [dict(t) for t in SYSTEM_POOL_TOLERATIONS],
            }
        },
        "a tolerating pod",
    )
    assert [p.name for p in placement(m, tolerating).matched] == ["system"]
    assert not admitted([dict(t) for t in SYSTEM_POOL_TOLERATIONS])
