"""lws-webhook, written from LWS v0.9.0's own tests.

Sources: kubernetes-sigs/lws v0.9.0 ``test/integration/webhooks/leaderworkerset_test.go`` (the
``ginkgo.Entry`` creation cases of the validation table, named in each test) and
``pkg/webhooks/leaderworkerset_webhook_test.go`` (``TestGetPercentValue``,
``TestIsNotMoreThan100Percent``, ``TestValidateNonnegativeOrZeroField``).
"""

from __future__ import annotations

from typing import Any

import pytest
from gpu_batch_policy.rules.webhooks.lws import POLICIES, int_or_percent_problems

from tests.policies.workload_stack import UNKNOWN, Registration, k8s, run

RULE = POLICIES[0]
POD = {"spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def lws(
    name: str = "lws", *, replicas: int | None = None, size: int | None = None, **spec: Any
) -> Registration:
    template: dict[str, Any] = {"workerTemplate": POD}
    if size is not None:
        template["size"] = size
    template.update(spec.pop("template", {}))
    body: dict[str, Any] = {"leaderWorkerTemplate": template, **spec}
    if replicas is not None:
        body["replicas"] = replicas
    annotations = body.pop("annotations", None)
    return k8s(
        "leaderworkerset.x-k8s.io/v1",
        "LeaderWorkerSet",
        name,
        namespace="ns",
        spec=body,
        annotations=annotations,
    )


def refused(reg: Registration, *parts: str) -> bool:
    return run(RULE, [reg]).mentions("LeaderWorkerSet v0.9.0", *parts)


def clean(reg: Registration) -> bool:
    outcome = run(RULE, [reg])
    return outcome.violations == [] and outcome.cannot_check is None


def rolling(**config: Any) -> dict[str, Any]:
    return {"rolloutStrategy": {"type": "RollingUpdate", "rollingUpdateConfiguration": config}}


def test_defaults_pass() -> None:
    """ "apply defaulting logic for replicas/size": a bare LWS is valid after defaults."""
    assert clean(lws())


def test_invalid_name() -> None:
    """ "creation with invalid name should fail" ("2cube")."""
    assert refused(lws("2cube"), "metadata.name '2cube'")


def test_replicas_and_size() -> None:
    """ "creation with invalid replicas and size should fail", "... invalid size", "... invalid replicas"."""
    assert refused(lws(replicas=100000, size=1000000), "exceeds 2147483647")
    assert refused(lws(replicas=2, size=-1), "size -1")
    assert refused(lws(replicas=-1, size=2), "spec.replicas -1")


def test_subgroups() -> None:
    """ "creation with invalid subGroupSize", "... subGroupSize larger than size", "... LeaderExcluded"."""
    assert refused(lws(size=2, template={"subGroupPolicy": {"subGroupSize": -1}}), "subGroupSize -1")
    assert refused(lws(size=2, template={"subGroupPolicy": {"subGroupSize": 3}}), "larger than size 2")
    excluded = {"subGroupPolicy": {"subGroupSize": 2, "subGroupPolicyType": "LeaderExcluded"}}
    assert refused(lws(size=4, template=excluded), "LeaderExcluded")
    assert clean(lws(size=4, template={"subGroupPolicy": {"subGroupSize": 2}}))
    assert clean(
        lws(size=5, template={"subGroupPolicy": {"subGroupSize": 2, "subGroupPolicyType": "LeaderExcluded"}})
    )


def test_exclusive_topology_annotation_needs_subgroups() -> None:
    annotations = {"leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology": "topology.kubernetes.io/zone"}
    assert refused(lws(size=2, annotations=annotations), "without subGroupPolicy")
    with_sub = lws(size=2, annotations=annotations, template={"subGroupPolicy": {"subGroupSize": 2}})
    assert clean(with_sub)


@pytest.mark.parametrize(
    ("config", "replicas", "ok"),
    [
        ({"maxUnavailable": 10}, 2, True),  # "set maxUnavailable greater than replicas is allowed"
        ({"maxUnavailable": "101%"}, 2, False),  # "set maxUnavailable greater than 100% should be failed"
        ({"maxUnavailable": -1}, 2, False),  # "set maxUnavailable less than 0 should be failed"
        ({"maxUnavailable": 1, "maxSurge": 10}, 2, True),  # "set maxSurge greater than replicas is allowed"
        ({"maxSurge": "101%"}, 2, False),  # "set maxSurge greater than 100% should be failed"
        ({"maxSurge": -1}, 2, False),  # "set maxSurge less than 0 should be failed"
        ({"maxUnavailable": 0, "maxSurge": 0}, 2, False),  # "... both to 0 should be failed"
        (
            {"maxUnavailable": 0, "maxSurge": 1},
            2,
            True,
        ),  # "set maxUnavailable to 0 and maxSurge to non-zero ..."
        ({"maxUnavailable": 0, "maxSurge": 0}, 0, True),  # "set replica to 0 no matter ..."
        ({"maxUnavailable": "10%", "maxSurge": 0}, 2, False),  # 10% of 2 rounds down to 0
        ({"maxUnavailable": "0%", "maxSurge": "10%"}, 2, True),  # maxSurge rounds up to 1
        ({"partition": -1}, 2, False),  # "creation with negative partition should fail"
        ({"partition": 5}, 2, True),  # "creation with partition greater than replicas should succeed"
        ({"partition": 0}, 2, True),  # "creation with partition zero should succeed"
    ],
)
def test_rollout(config: dict[str, Any], replicas: int, ok: bool) -> None:
    reg = lws(replicas=replicas, **rolling(**config))
    assert clean(reg) if ok else refused(reg, "rollingUpdateConfiguration")


@pytest.mark.parametrize(
    ("value", "refusals"),
    [
        (1, 0),  # TestGetPercentValue "input type int"
        ("1", 1),  # "input type string - invalid format"
        ("1%", 0),
        ("100%", 0),  # TestIsNotMoreThan100Percent "equal to 100"
        ("101%", 1),  # "greater than 100"
        (-1, 1),  # TestValidateNonnegativeOrZeroField "input less than 0"
        (0, 0),
    ],
)
def test_int_or_percent(value: Any, refusals: int) -> None:
    assert len(int_or_percent_problems(value, "f")) == refusals


def test_unknown_is_cannot_check() -> None:
    outcome = run(RULE, [lws(replicas=UNKNOWN)])  # type: ignore[arg-type]
    assert outcome.violations == [] and outcome.cannot_check is not None
