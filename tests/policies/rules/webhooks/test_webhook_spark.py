"""spark-webhook, written from the Spark operator v2.5.1's test table.

Source: kubeflow/spark-operator v2.5.1 ``internal/webhook/sparkapplication_validator_test.go``:
``TestSparkApplicationValidatorValidateCreate_NodeSelectorConflict``, ``..._Success``,
``..._DriverIngressDuplicatePort``, ``..._PodTemplateRequiresSpark3``,
``TestSparkApplicationValidatorValidateName`` (its cases by name).
"""

from __future__ import annotations

from typing import Any

import pytest
from gpu_batch_policy.rules.webhooks.spark import POLICIES, semver_below

from tests.policies.workload_stack import Registration, k8s, run

RULE = POLICIES[0]


def app(name: str = "test-app", kind: str = "SparkApplication", **spec: Any) -> Registration:
    body = {"type": "Scala", "mode": "cluster", "sparkVersion": "3.5.0", "driver": {}, "executor": {}, **spec}
    return k8s("sparkoperator.k8s.io/v1beta2", kind, name, namespace="ns", spec=body)


def refused(reg: Registration, *parts: str) -> bool:
    return run(RULE, [reg]).mentions("Spark operator v2.5.1", *parts)


def clean(reg: Registration) -> bool:
    outcome = run(RULE, [reg])
    return outcome.violations == [] and outcome.cannot_check is None


def test_success_and_node_selector_conflict() -> None:
    assert clean(app())
    conflict = app(nodeSelector={"a": "b"}, driver={"nodeSelector": {"c": "d"}})
    assert refused(conflict, "nodeSelector on the application and on the driver")


def test_driver_ingress_duplicate_port() -> None:
    duplicate = [
        {"servicePort": 4040, "ingressURLFormat": "a"},
        {"servicePort": 4040, "ingressURLFormat": "b"},
    ]
    assert refused(app(driverIngressOptions=duplicate), "repeats servicePort 4040")
    assert refused(app(driverIngressOptions=[{"ingressURLFormat": "a"}]), "no servicePort")
    assert refused(app(driverIngressOptions=[{"servicePort": 1}]), "empty ingressURLFormat")
    ok = [{"servicePort": 4040, "ingressURLFormat": "a"}, {"servicePort": 4041, "ingressURLFormat": "b"}]
    assert clean(app(driverIngressOptions=ok))


def test_pod_template_requires_spark3() -> None:
    template: dict[str, Any] = {"template": {"spec": {"containers": []}}}
    assert refused(app(sparkVersion="2.4.0", driver=template), "Spark 3.0.0 or higher")
    assert clean(app(sparkVersion="3.0.0", driver=template))


@pytest.mark.parametrize(
    ("name", "bad"),
    [
        ("test-app", False),  # "valid simple name"
        ("a", False),  # "valid single letter"
        ("a" * 63, False),  # "valid 63 char name"
        ("test--app", False),  # "name with consecutive hyphens"
        ("123test-app", True),  # "name starting with number"
        ("Test-App", True),  # "name with uppercase"
        ("test-app-", True),  # "name ending with hyphen"
        ("a" * 64, True),  # "name too long"
        ("test@app", True),  # "name with special characters"
    ],
)
@pytest.mark.parametrize("kind", ["SparkApplication", "ScheduledSparkApplication"])
def test_validate_name(name: str, bad: bool, kind: str) -> None:
    reg = app(name, kind)
    assert refused(reg, "metadata.name") if bad else clean(reg)


@pytest.mark.parametrize(
    ("version", "below"),
    [
        ("3.0.0", False),
        ("3.5", False),
        ("v3", False),
        ("2.4.8", True),
        ("3.0.0-rc1", True),
        ("", True),
        ("three", True),
    ],
)
def test_semver_compare(version: str, below: bool) -> None:
    """golang.org/x/mod/semver ``Compare`` as ``util.CompareSemanticVersion`` uses it."""
    assert semver_below(version, (3, 0, 0)) is below
