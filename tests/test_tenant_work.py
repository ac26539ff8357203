"""Tenants can get work done (issue 27 #8) without hurting each other (#4: ClusterIP only).

The Role: ConfigMaps, Secrets and Services in the team's own namespace, ``pods/exec`` and
``pods/portforward`` (kubernetes.io reference/access-authn-authz/authorization: subresources are
authorised as ``create``), and Kueue's visibility API for the team's own LocalQueues only
(``visibility.kueue.x-k8s.io`` ``localqueues/pendingworkloads``, the resource the Kueue 0.19.2
chart's ``pending_workloads_lq_viewer_role.yaml`` grants).  RBAC is evaluated here the way the
API server's RBAC authorizer matches a rule (``k8s.io/apiserver`` ``rbac.RuleAllows``: group,
resource incl. subresource, verb, and resourceNames when set).

The Services admission policy's CEL runs with cel-python as the API server runs it.
"""

from __future__ import annotations

from typing import Any

import celpy
import pytest
from celpy.adapter import json_to_cel

from components.service_admission import POLICY_NAME, policy_spec
from preview.harness import RunResult
from tests.stack_runner import custom_objects, named, run_stack, unedited_run

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def prod() -> RunResult:
    return unedited_run("prod")


def allows(rules: list[dict[str, Any]], group: str, resource: str, verb: str, name: str = "") -> bool:
    """rbac.RuleAllows over a Role's rules."""
    for rule in rules:
        names = rule.get("resourceNames") or []
        if (
            group in rule["apiGroups"]
            and resource in rule["resources"]
            and verb in rule["verbs"]
            and (not names or name in names)
        ):
            return True
    return False


class TestTeamRole:
    def test_members_can_do_real_work_in_their_namespace(self, prod: RunResult) -> None:
        role = named(prod, "research-role").inputs
        rules = role["rules"]
        assert role["metadata"]["namespace"] == "research"
        for resource in ("configmaps", "secrets", "services"):
            assert allows(rules, "", resource, "create") and allows(rules, "", resource, "delete")
        assert allows(rules, "", "pods/exec", "create") and allows(rules, "", "pods/portforward", "create")
        for queue in ("default", "l4", "h100"):
            assert allows(rules, "visibility.kueue.x-k8s.io", "localqueues/pendingworkloads", "get", queue)

    def test_but_only_their_own_queues_and_nothing_cluster_wide(self, prod: RunResult) -> None:
        rules = named(prod, "research-role").inputs["rules"]
        assert not allows(rules, "visibility.kueue.x-k8s.io", "localqueues/pendingworkloads", "get", "other")
        assert not allows(
            rules, "visibility.kueue.x-k8s.io", "clusterqueues/pendingworkloads", "get", "research-l4"
        )
        assert not allows(rules, "kueue.x-k8s.io", "localqueues", "create")
        assert not allows(rules, "rbac.authorization.k8s.io", "roles", "create")
        assert not [
            r for r in prod.resources if r.type.endswith(":ClusterRoleBinding") and "research" in r.name
        ]


def evaluate(expression: str, obj: dict[str, Any]) -> bool:
    env = celpy.Environment()
    return bool(env.program(env.compile(expression)).evaluate({"object": json_to_cel(obj)}))


def admitted(service_spec: dict[str, Any]) -> bool:
    obj = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "dash"}, "spec": service_spec}
    return all(evaluate(v["expression"], obj) for v in policy_spec()["validations"])


class TestServiceAdmission:
    @pytest.mark.parametrize(
        "spec",
        [
            {"type": "LoadBalancer", "ports": [{"port": 8265}]},
            {"type": "NodePort", "ports": [{"port": 8265}]},
            {"type": "ExternalName", "externalName": "kubernetes.default.svc"},
            {"ports": [{"port": 80}], "externalIPs": ["203.0.113.7"]},
        ],
    )
    def test_exposure_beyond_the_cluster_is_refused(self, spec: dict[str, Any]) -> None:
        assert not admitted(spec)

    @pytest.mark.parametrize(
        "spec",
        [{"ports": [{"port": 8265}]}, {"type": "ClusterIP", "clusterIP": "None", "ports": [{"port": 1}]}],
    )
    def test_cluster_ip_services_are_what_tenants_can_still_create(self, spec: dict[str, Any]) -> None:
        assert admitted(spec)

    def test_every_team_namespace_is_bound_and_every_requester_judged(self, prod: RunResult) -> None:
        (policy,) = [
            p
            for p in custom_objects(prod, "ValidatingAdmissionPolicy")
            if p["metadata"]["name"] == POLICY_NAME
        ]
        assert "matchConditions" not in policy["spec"]  # the KubeRay operator's requests too
        (binding,) = [
            b
            for b in custom_objects(prod, "ValidatingAdmissionPolicyBinding")
            if b["metadata"]["name"] == POLICY_NAME
        ]
        (expr,) = binding["spec"]["matchResources"]["namespaceSelector"]["matchExpressions"]
        assert expr["values"] == ["applied", "research"] and binding["spec"]["validationActions"] == ["Deny"]


class TestPriorityClassesPerTeam:
    """Issue 27 #7: which priority classes a team may name is config, enforced by its queue
    admission policy (Kueue's kueue.x-k8s.io/priority-class label, KAI's priorityClassName
    label, and a Pod's or Job's spec.priorityClassName)."""

    @staticmethod
    def spec(scheduler: str = "kueue") -> dict[str, Any]:
        from components.queue_admission import JOB, POD, QueueAdmissionArgs
        from components.queue_admission import policy_spec as queue_policy

        queue = "default" if scheduler == "kueue" else "team-a"
        return queue_policy(
            QueueAdmissionArgs("research", "research", scheduler, (queue,), (JOB, POD), ("dev-priority",))  # type: ignore[arg-type]
        )

    @staticmethod
    def admitted(
        spec: dict[str, Any], labels: dict[str, str], pod_spec: dict[str, Any] | None = None
    ) -> bool:
        from tests.test_queue_admission import admitted

        job = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "j", "namespace": "research", "labels": labels},
            "spec": {"template": {"spec": {"schedulerName": "kai-scheduler", **(pod_spec or {})}}},
        }
        result = admitted(spec, job)
        assert result is not None
        return result

    def test_a_team_cannot_take_a_class_it_was_not_given(self) -> None:
        spec, q = self.spec(), {"kueue.x-k8s.io/queue-name": "default"}
        assert not self.admitted(spec, {**q, "kueue.x-k8s.io/priority-class": "prod-priority"})
        assert not self.admitted(spec, q, {"priorityClassName": "system-cluster-critical"})
        kai = self.spec("kai")
        assert not self.admitted(kai, {"kai.scheduler/queue": "team-a", "priorityClassName": "inference"})

    def test_what_the_team_may_still_do(self) -> None:
        spec, q = self.spec(), {"kueue.x-k8s.io/queue-name": "default"}
        assert self.admitted(spec, {**q, "kueue.x-k8s.io/priority-class": "dev-priority"})
        assert self.admitted(spec, q)  # no class: the queue's default priority
        assert self.admitted(spec, q, {"priorityClassName": "dev-priority"})

    def test_config_names_declared_classes_and_workloads_stay_within(self) -> None:
        from stacks.errors import ConfigError
        from tests.stack_runner import config_value

        teams = config_value("dev", "gpu-batch:teams")
        teams[0]["priorityClasses"] = ["dev-priority"]
        # dev's second workload runs at prod-priority: refused before anything is planned.
        with pytest.raises(
            ConfigError, match=r"gpu-batch:workloads\[1\]\.priorityClass: got 'prod-priority'"
        ):
            run_stack("dev", {"gpu-batch:teams": teams})
        teams[0]["priorityClasses"] = ["dev-priority", "urgent"]
        with pytest.raises(ConfigError, match=r"gpu-batch:teams\[0\]\.priorityClasses\[1\]"):
            run_stack("dev", {"gpu-batch:teams": teams})
        teams[0]["priorityClasses"] = ["dev-priority", "prod-priority"]
        result = run_stack("dev", {"gpu-batch:teams": teams})
        (policy,) = [
            p
            for p in custom_objects(result, "ValidatingAdmissionPolicy")
            if p["metadata"]["name"] == "gpu-batch-queue-ml"
        ]
        assert any("prod-priority" in v["expression"] for v in policy["spec"]["validations"])


def test_prod_gives_each_team_its_priority_classes() -> None:
    """prod sets teams[].priorityClasses: research may not name prod-priority; applied may."""
    from components.queue_admission import PRIORITY_LABELS
    from tests.test_queue_admission import admitted as queue_admitted

    prod = unedited_run("prod")
    policies = {p["metadata"]["name"]: p["spec"] for p in custom_objects(prod, "ValidatingAdmissionPolicy")}
    label = PRIORITY_LABELS["kueue"]

    def job(priority: str) -> dict[str, Any]:
        labels = {"kueue.x-k8s.io/queue-name": "default", label: priority}
        return {
            "kind": "Job",
            "metadata": {"name": "j", "namespace": "research", "labels": labels},
            "spec": {"template": {"spec": {}}},
        }

    research, applied = policies["gpu-batch-queue-research"], policies["gpu-batch-queue-applied"]
    assert not queue_admitted(research, job("prod-priority"))
    assert queue_admitted(research, job("dev-priority"))
    assert queue_admitted(applied, job("prod-priority")) and queue_admitted(applied, job("dev-priority"))
