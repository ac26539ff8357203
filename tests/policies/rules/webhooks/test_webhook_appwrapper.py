"""appwrapper-webhook, rule by rule from AppWrapper's own webhook and its tests.

Sources: project-codeflare/appwrapper v1.2.1 ``internal/webhook/appwrapper_webhook.go``
``validateAppWrapperCreate`` and ``internal/webhook/appwrapper_webhook_test.go`` (its cases
"There must be at least one podspec", "There must be no more than 8 podspecs", "Non-existent
PodSpec paths are rejected", "PodSpec paths must refer to a PodSpecTemplate", "Validation of
Array and Map path elements", "Components in other namespaces are rejected", "Nested AppWrappers
are rejected", "Well-formed AppWrappers are accepted"); ``pkg/utils/utils.go`` ``InferPodSets``,
``ValidatePodSets``.
"""

from __future__ import annotations

from typing import Any

from gpu_batch_policy.rules.webhooks.appwrapper import POLICIES

from tests.policies.workload_stack import UNKNOWN, Registration, k8s, pod, run

RULE = POLICIES[0]


def appwrapper(*components: dict[str, Any], namespace: str = "team") -> Registration:
    spec = {"components": list(components)}
    return k8s("workload.codeflare.dev/v1beta2", "AppWrapper", "aw", namespace=namespace, spec=spec)


def job(parallelism: int = 2, **metadata: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", **metadata},
        "spec": {"parallelism": parallelism, "template": pod(gpu=1)},
    }


def test_the_published_shapes_pass() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 2, "template": pod()}}
    good = appwrapper({"template": job(namespace="team")}, {"template": deployment})
    assert run(RULE, [good]).violations == []
    declared = {"template": job(4), "podSets": [{"path": "template.spec.template", "replicas": 4}]}
    assert run(RULE, [appwrapper(declared)]).violations == []


def test_nested_appwrappers_are_forbidden() -> None:
    inner = {"apiVersion": "workload.codeflare.dev/v1beta2", "kind": "AppWrapper", "spec": {"components": []}}
    outcome = run(RULE, [appwrapper({"template": inner}, {"template": job()})])
    assert outcome.mentions(
        "spec.components[0].template is an AppWrapper", "nested AppWrappers are forbidden"
    )


def test_components_in_another_namespace_are_forbidden() -> None:
    outcome = run(RULE, [appwrapper({"template": job(namespace="other")})])
    assert outcome.mentions("metadata.namespace is 'other', not the AppWrapper's 'team'")
    # No namespace on the component: created in the AppWrapper's.
    assert run(RULE, [appwrapper({"template": job()})]).violations == []


def test_declared_pod_set_paths_must_lead_to_a_pod_template() -> None:
    no_path = {"template": job(), "podSets": [{"replicas": 2}]}
    assert run(RULE, [appwrapper(no_path)]).mentions("podSets[0].path is required")
    for bad, why in (
        ("spec.template", "first element of the path must be 'template'"),
        ("template.spec.missing", "the field 'missing' is missing"),
        ("template.spec.template.spec.containers[5]", "out of bounds"),
        ("template.spec", "does not contain a spec mapping"),
    ):
        component = {"template": job(), "podSets": [{"path": bad, "replicas": 2}]}
        outcome = run(RULE, [appwrapper(component)])
        assert outcome.mentions(f"'{bad}' does not refer to a pod template", why), (bad, outcome.violations)


def test_declared_pod_sets_must_agree_with_inference() -> None:
    wrong_count = {"template": job(2), "podSets": [{"path": "template.spec.template", "replicas": 3}]}
    assert run(RULE, [appwrapper(wrong_count)]).mentions(
        "gives 'template.spec.template' 3 replicas", "infers 2"
    )
    twice = {
        "template": job(2),
        "podSets": [
            {"path": "template.spec.template", "replicas": 2},
            {"path": "template.spec.template", "replicas": 2},
        ],
    }
    outcome = run(RULE, [appwrapper(twice)])
    assert outcome.mentions("declares the path 'template.spec.template' twice")
    assert outcome.mentions("declares 2 pod sets but AppWrapper infers 1")


def test_inference_errors_and_the_pod_set_limit() -> None:
    bad_replicas = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "spec": {"replicas": "two", "template": pod()},
    }
    assert run(RULE, [appwrapper({"template": bad_replicas})]).mentions(
        "cannot infer its pod sets", "not an integer"
    )
    custom = {"apiVersion": "example.com/v1", "kind": "Trainer", "spec": {}}
    assert run(RULE, [appwrapper({"template": custom})]).mentions("holds no pod template")
    nine = [{"template": job()} for _ in range(9)]
    assert run(RULE, [appwrapper(*nine)]).mentions("holds 9 pod sets; at most 8")
    assert run(RULE, [appwrapper(*nine[:8])]).violations == []


def test_a_component_that_is_no_object_and_unknowns() -> None:
    assert run(RULE, [appwrapper({"template": {"spec": {}}})]).mentions("is not a Kubernetes object")
    assert run(RULE, [appwrapper({"template": "job"})]).mentions("is not a Kubernetes object")
    outcome = run(RULE, [appwrapper({"template": UNKNOWN})])
    assert outcome.violations == [] and outcome.cannot_check is not None
