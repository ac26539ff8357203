"""The team queue admission policies' CEL, run with cel-python the way the API server runs a
ValidatingAdmissionPolicy (kubernetes/kubernetes v1.34.0
``staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating``: matchConditions first,
then ``variables`` bound lazily under ``variables.<name>``, then each validation must be true).

Allowed and refused objects are written from the upstream rules the policy stands for (Kueue
v0.19.2 ``WorkloadShouldBeSuspended``: no queue label = not Kueue's; KAI v0.17 schedules only
``schedulerName: kai-scheduler`` pods; KAI issue #2068: a foreign queue must be refused).
"""

from __future__ import annotations

from typing import Any, ClassVar

import celpy
import pytest
from celpy.adapter import json_to_cel
from gpu_batch_policy.facts.schema.core import CoreValidator

from components.queue_admission import (
    JOB,
    POD,
    RAY_CLUSTER,
    QueueAdmissionArgs,
    binding_spec,
    policy_spec,
)
from preview.crd_validation import Outcome
from tests.stack_runner import custom_objects, unedited_run

TEAM_USER = {"username": "alice@example.com", "groups": ["ml-research@example.com"]}
KUEUE = QueueAdmissionArgs("research", "research", "kueue", ("default",), (JOB, POD))
KAI = QueueAdmissionArgs("team-a", "team-a", "kai", ("team-a",), (JOB, POD, RAY_CLUSTER))


def evaluate(expression: str, activation: dict[str, Any]) -> Any:
    env = celpy.Environment()
    return env.program(env.compile(expression)).evaluate({k: json_to_cel(v) for k, v in activation.items()})


def admitted(spec: dict[str, Any], obj: dict[str, Any], user: dict[str, Any] = TEAM_USER) -> bool | None:
    """True: admitted; False: denied; None: the policy does not judge this request."""
    request = {"userInfo": user, "namespace": obj["metadata"].get("namespace", "")}
    base = {"object": obj, "request": request}
    if not all(bool(evaluate(c["expression"], base)) for c in spec["matchConditions"]):
        return None
    variables = {v["name"]: evaluate(v["expression"], base) for v in spec["variables"]}
    env = {**base, "variables": variables}
    return all(bool(evaluate(v["expression"], env)) for v in spec["validations"])


def job(
    labels: dict[str, str] | None = None, scheduler: str | None = None, ns: str = "research"
) -> dict[str, Any]:
    pod_spec: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}
    if scheduler:
        pod_spec["schedulerName"] = scheduler
    metadata: dict[str, Any] = {"name": "train", "namespace": ns}
    if labels is not None:
        metadata["labels"] = labels
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata,
        "spec": {"template": {"spec": pod_spec}},
    }


def pod(
    labels: dict[str, str] | None = None, scheduler: str | None = None, ns: str = "research"
) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox"}]}
    if scheduler:
        spec["schedulerName"] = scheduler
    metadata: dict[str, Any] = {
        "name": "p",
        "namespace": ns,
        **({"labels": labels} if labels is not None else {}),
    }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def ray_cluster(labels: dict[str, str] | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "r", "namespace": "team-a", **({"labels": labels} if labels else {})}
    return {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": metadata}


class TestKueueTeams:
    spec = policy_spec(KUEUE)

    def test_a_job_naming_the_teams_local_queue_is_admitted(self) -> None:
        assert admitted(self.spec, job({"kueue.x-k8s.io/queue-name": "default"})) is True

    def test_an_unlabelled_job_or_pod_is_refused(self) -> None:
        # Kueue v0.19.2 WorkloadShouldBeSuspended: without a queue name and with
        # manageJobsWithoutQueueName off, Kueue leaves it alone -- outside every quota.
        assert admitted(self.spec, job()) is False
        assert admitted(self.spec, job({"app": "x"})) is False
        assert admitted(self.spec, pod()) is False

    def test_another_queue_name_is_refused(self) -> None:
        assert admitted(self.spec, job({"kueue.x-k8s.io/queue-name": "someone-else"})) is False
        assert admitted(self.spec, pod({"kueue.x-k8s.io/queue-name": ""})) is False

    def test_platform_controllers_are_not_judged(self) -> None:
        # The Job controller creating a Job's pods, KubeRay creating a RayCluster's pods.
        for user in (
            "system:serviceaccount:kube-system:job-controller",
            "system:serviceaccount:kuberay-system:kuberay-operator",
            "system:kube-controller-manager",
        ):
            assert admitted(self.spec, pod(), {"username": user}) is None

    def test_a_service_account_of_the_team_namespace_is_judged(self) -> None:
        sa = {"username": "system:serviceaccount:research:skypilot-api-sa"}
        assert admitted(self.spec, pod(), sa) is False
        assert admitted(self.spec, pod({"kueue.x-k8s.io/queue-name": "default"}), sa) is True

    def test_it_matches_only_the_teams_kinds_on_create_and_update(self) -> None:
        rules = self.spec["matchConstraints"]["resourceRules"]
        assert {(r["apiGroups"][0], r["resources"][0]) for r in rules} == {("batch", "jobs"), ("", "pods")}
        assert all(r["operations"] == ["CREATE", "UPDATE"] for r in rules)
        assert binding_spec(KUEUE)["matchResources"]["namespaceSelector"] == {
            "matchLabels": {"kubernetes.io/metadata.name": "research"}
        }
        assert binding_spec(KUEUE)["validationActions"] == ["Deny"]


class TestKaiTeams:
    spec = policy_spec(KAI)
    label: ClassVar[dict[str, str]] = {"kai.scheduler/queue": "team-a"}

    def test_a_job_on_kai_in_its_own_queue_is_admitted(self) -> None:
        assert admitted(self.spec, job(self.label, "kai-scheduler", ns="team-a")) is True
        assert admitted(self.spec, pod(self.label, "kai-scheduler", ns="team-a")) is True

    def test_the_default_scheduler_is_refused(self) -> None:
        # A GPU Job on default-scheduler takes a GPU KAI never accounts for.
        assert admitted(self.spec, job(self.label, ns="team-a")) is False
        assert admitted(self.spec, pod(self.label, "default-scheduler", ns="team-a")) is False

    def test_another_teams_queue_is_refused(self) -> None:
        # KAI issue #2068: nothing in KAI itself stops it.
        other = {"kai.scheduler/queue": "team-b"}
        assert admitted(self.spec, job(other, "kai-scheduler", ns="team-a")) is False

    def test_a_ray_cluster_needs_only_the_label(self) -> None:
        # KubeRay v1.7.0's KAI plugin stamps schedulerName on the RayCluster's pods itself.
        assert admitted(self.spec, ray_cluster(self.label)) is True
        assert admitted(self.spec, ray_cluster()) is False


@pytest.mark.parametrize("stack", ["dev", "kai"])
def test_each_team_namespace_gets_a_policy_and_binding(stack: str) -> None:
    result = unedited_run(stack)
    policies = {
        p["metadata"]["name"]: p["spec"]
        for p in custom_objects(result, "ValidatingAdmissionPolicy")
        if p["metadata"]["name"].startswith("gpu-batch-queue-")  # not the tenant-services policy
    }
    bindings = [
        b
        for b in custom_objects(result, "ValidatingAdmissionPolicyBinding")
        if b["spec"]["policyName"] in policies
    ]
    assert policies and {b["spec"]["policyName"] for b in bindings} == set(policies)
    spec = next(iter(policies.values()))
    if stack == "kai":
        assert admitted(spec, ray_cluster({"kai.scheduler/queue": "team-a"})) is True
        assert admitted(spec, job({"kai.scheduler/queue": "team-a"}, ns="team-a")) is False
    else:
        assert admitted(spec, job({"kueue.x-k8s.io/queue-name": "user-queue"}, ns="default")) is True
        assert admitted(spec, job(ns="default")) is False


@pytest.mark.parametrize("args", [KUEUE, KAI], ids=["kueue", "kai"])
def test_the_policy_and_binding_are_valid_kubernetes_objects(args: QueueAdmissionArgs) -> None:
    """Against the strict OpenAPI schema the preview validates built-in objects with
    (admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy is GA since Kubernetes 1.30)."""
    api = "admissionregistration.k8s.io/v1"
    meta = {"name": args.policy_name}
    for kind, spec in (
        ("ValidatingAdmissionPolicy", policy_spec(args)),
        ("ValidatingAdmissionPolicyBinding", binding_spec(args)),
    ):
        result = CoreValidator("1.33").validate(
            {"apiVersion": api, "kind": kind, "metadata": meta, "spec": spec}
        )
        assert result.outcome is Outcome.VALID, result.messages()
    broken = policy_spec(args)
    broken["validations"][0]["expresion"] = broken["validations"][0].pop("expression")
    result = CoreValidator("1.33").validate(
        {"apiVersion": api, "kind": "ValidatingAdmissionPolicy", "metadata": meta, "spec": broken}
    )
    assert result.outcome is Outcome.INVALID
