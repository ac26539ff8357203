"""helm-release-renders, and chart-rendered objects as model objects (issue: render every chart)."""

from __future__ import annotations

from typing import Any

from gpu_batch_policy.facts.model import StackModel

from tests.policies.pack_harness import UNKNOWN, Res, policy, run

RELEASE = "kubernetes:helm.sh/v3:Release"
SKYPILOT_REPO = "https://helm.skypilot.co"


def skypilot(values: dict[str, Any], version: str = "0.13.0") -> Res:
    return Res(
        RELEASE,
        "sky",
        {
            "chart": "skypilot",
            "version": version,
            "repositoryOpts": {"repo": SKYPILOT_REPO},
            "name": "skypilot-team1",
            "namespace": "team1",
            "values": values,
        },
    )


def kai(values: dict[str, Any] | None = None) -> Res:
    return Res(
        RELEASE,
        "kai",
        {
            "chart": "oci://ghcr.io/nvidia/kai-scheduler/kai-scheduler",
            "version": "v0.13.0",
            "name": "kai-scheduler",
            "namespace": "kai-scheduler",
            "values": values or {},
        },
    )


def test_a_chart_that_refuses_its_values_is_a_finding_naming_stack_release_and_message() -> None:
    small = skypilot({"apiService": {"resources": {"requests": {"cpu": "1", "memory": "2Gi"}}}})
    result = run(policy("helm-release-renders"), [small])
    (message,) = result.messages
    assert "chart skypilot 0.13.0 refuses the values of release 'skypilot-team1' in stack test" in message
    assert "requires at least 4 CPU cores and 8 GiB memory" in message
    assert "\n" not in message
    assert result.violations[0][1] == small.urn


def test_values_the_chart_schema_rejects_are_a_finding() -> None:
    result = run(policy("helm-release-renders"), [skypilot({"apiService": {"config": 5.0}})])
    (message,) = result.messages
    assert "(values-schema)" in message and "/apiService/config" in message


def test_values_the_chart_accepts_pass() -> None:
    assert run(policy("helm-release-renders"), [skypilot({})]).clean


def test_an_unresolvable_chart_is_cannot_check_never_a_finding() -> None:
    result = run(policy("helm-release-renders"), [skypilot({}, version="0.0.1")])
    assert result.clean
    assert result.cannot_check is not None
    assert "cannot resolve chart skypilot 0.0.1" in result.cannot_check


def test_a_refusal_that_depends_on_an_unknown_value_is_cannot_check() -> None:
    unknown_cpu = skypilot({"apiService": {"resources": {"requests": {"cpu": UNKNOWN, "memory": "2Gi"}}}})
    result = run(policy("helm-release-renders"), [unknown_cpu])
    assert result.clean
    assert result.cannot_check is not None and "chart not rendered" in result.cannot_check


def test_chart_created_objects_join_the_model_marked_with_their_release() -> None:
    release = kai()
    model = StackModel.from_plain([(release.type, release.props, release.urn, release.name)])
    classes = model.kube_objects("scheduling.k8s.io", "PriorityClass")
    assert sorted(c.name for c in classes) == ["build", "build-preemptible", "inference", "train"]
    assert all(c.rendered_from == release.urn and c.urn == release.urn for c in classes)
    assert "[rendered by Helm release 'kai-scheduler']" in classes[0].describe()
    (operator,) = model.kube_objects("apps", "Deployment")
    assert operator.namespace == "kai-scheduler"
    assert model.renders[release.urn].status == "rendered"
    declared_only = StackModel.from_plain(
        [(release.type, release.props, release.urn, release.name)], render=False
    )
    assert declared_only.kube_objects("scheduling.k8s.io", "PriorityClass") == []
