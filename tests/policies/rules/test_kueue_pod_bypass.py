"""Team workloads that escape their queue (issue 10 #9, issue 19 #2), and the pod webhook's scope
as a hazard rather than an impossibility (issue 18).

Upstream rules the cases are written from:
* Kueue v0.19.2 ``pkg/controller/jobframework/utils.go`` ``WorkloadShouldBeSuspended``: a
  workload with no queue label is Kueue's only with ``manageJobsWithoutQueueName`` in a namespace
  matched by ``managedJobsNamespaceSelector``; ``defaults.go`` LocalQueueDefaulting labels it
  when the namespace has a LocalQueue ``default``;
* KAI v0.17: only ``schedulerName: kai-scheduler`` pods are KAI's (KubeRay v1.7.0's KAI plugin
  stamps it on Ray pods);
* kubernetes v1.34.0 ValidatingAdmissionPolicy matching: a bound policy with ``Deny`` closes it.
"""

from __future__ import annotations

from typing import Any, ClassVar

from components.queue_admission import JOB, POD, QueueAdmissionArgs, binding_spec, policy_spec
from tests.policies.pack_harness import Res, run
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import helm_release, k8s, kueue_release, local_queue, namespace

RULE = get_policy("kueue-pod-bypass")
SCOPE = get_policy("kueue-pod-webhook-scope")
MANAGED = {"gpu-batch/kueue-managed": "true"}
SCOPED = "managedJobsNamespaceSelector:\n  matchLabels:\n    gpu-batch/kueue-managed: 'true'\n"
STRICT = SCOPED + "manageJobsWithoutQueueName: true\n"


def config(frameworks: list[str], extra: str = "") -> str:
    return (
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
        + extra
        + ("integrations:\n  frameworks: [" + ", ".join(frameworks) + "]\n")
    )


def role(pod_verbs: list[Any], ns: str = "team-a", job_verbs: list[str] | None = None) -> Res:
    rules: list[dict[str, Any]] = [
        {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": job_verbs or ["get", "list"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": pod_verbs},
    ]
    return k8s("rbac.authorization.k8s.io/v1", "Role", "team-a-submitter", namespace=ns, rules=rules)


def people_binding(ns: str = "team-a", role_kind: str = "Role", role_name: str = "team-a-submitter") -> Res:
    return k8s(
        "rbac.authorization.k8s.io/v1",
        "RoleBinding",
        "team-a-submitter",
        namespace=ns,
        roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role_name},
        subjects=[{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "team-a@example.com"}],
    )


def admission(scheduler: str, queues: tuple[str, ...], ns: str = "team-a") -> list[Res]:
    args = QueueAdmissionArgs("team-a", ns, scheduler, queues, (JOB, POD))  # type: ignore[arg-type]
    api = "admissionregistration.k8s.io/v1"
    return [
        k8s(api, "ValidatingAdmissionPolicy", args.policy_name, spec=policy_spec(args)),
        k8s(api, "ValidatingAdmissionPolicyBinding", args.policy_name, spec=binding_spec(args)),
    ]


def team_queue(name: str = "team-lq") -> Res:
    """The team's LocalQueue in team-a: what makes team-a a namespace where users submit."""
    return local_queue(name)


class TestKueuePods:
    def test_pod_create_without_the_pod_integration_is_caught(self) -> None:
        stack = [
            kueue_release(config(["batch/job", "ray.io/rayjob"])),
            team_queue(),
            namespace("team-a"),
        ]
        result = run(RULE, [*stack, role(["get", "list", "create"])])
        assert len(result.violations) == 1 and "bypasses queues and quota" in result.messages[0]
        assert run(RULE, [*stack, role(["get", "list", "watch", "delete"])]).clean

    def test_pod_create_where_kueue_manages_every_pod_is_fine(self) -> None:
        stack = [
            kueue_release(config(["batch/job", "pod"], STRICT)),
            team_queue(),
            namespace("team-a", **MANAGED),
        ]
        assert run(RULE, [*stack, role(["create"])]).clean

    def test_pod_integration_without_manage_jobs_without_queue_name_is_caught(self) -> None:
        # PodWebhook.Default: an unlabelled pod in a managed namespace is still ignored.
        stack = [
            kueue_release(config(["batch/job", "pod"], SCOPED)),
            team_queue(),
            namespace("team-a", **MANAGED),
        ]
        assert len(run(RULE, [*stack, role(["create"])]).violations) == 1
        # ... unless LocalQueueDefaulting labels it: the namespace has a LocalQueue "default".
        assert run(RULE, [*stack[:1], team_queue("default"), stack[2], role(["create"])]).clean

    def test_pod_create_in_a_namespace_outside_the_selector_is_caught(self) -> None:
        stack = [
            kueue_release(config(["batch/job", "pod"], STRICT)),
            team_queue(),
            namespace("team-a"),
        ]
        assert len(run(RULE, [*stack, role(["*"])]).violations) == 1


class TestKueueJobs:
    stack: ClassVar[list[Res]] = [kueue_release(config(["batch/job"])), team_queue(), namespace("team-a")]

    def test_job_create_without_manage_jobs_without_queue_name_is_caught(self) -> None:
        result = run(RULE, [*self.stack, role(["get"], job_verbs=["create"])])
        assert len(result.violations) == 1 and "Jobs" in result.messages[0]

    def test_manage_jobs_without_queue_name_closes_it(self) -> None:
        strict = [kueue_release(config(["batch/job"], STRICT)), team_queue(), namespace("team-a", **MANAGED)]
        assert run(RULE, [*strict, role(["get"], job_verbs=["create"])]).clean

    def test_a_bound_admission_policy_closes_it(self) -> None:
        guarded = [*self.stack, *admission("kueue", ("team-lq",))]
        assert run(RULE, [*guarded, role(["create"], job_verbs=["create"])]).clean
        # Bound to another namespace, or Warn only: still open.
        elsewhere = [*self.stack, *admission("kueue", ("team-lq",), ns="team-b")]
        assert len(run(RULE, [*elsewhere, role(["get"], job_verbs=["create"])]).violations) == 1
        warn = admission("kueue", ("team-lq",))
        warn[1].props["spec"]["validationActions"] = ["Warn"]
        assert len(run(RULE, [*self.stack, *warn, role(["get"], job_verbs=["create"])]).violations) == 1

    def test_a_rolebinding_to_the_builtin_edit_role_is_judged(self) -> None:
        result = run(RULE, [*self.stack, people_binding(role_kind="ClusterRole", role_name="edit")])
        # edit aggregates create on every namespaced workload kind: one finding naming them all.
        assert len(result.violations) == 1
        assert all(kind in result.messages[0] for kind in ("bare pods", "Jobs", "Deployments", "MPIJobs"))
        view = run(RULE, [*self.stack, people_binding(role_kind="ClusterRole", role_name="view")])
        assert view.clean and view.cannot_check is None


class TestKai:
    stack: ClassVar[list[Res]] = [
        helm_release("kai-scheduler", "kai-scheduler", namespace="kai-scheduler"),
        namespace("team-a"),
    ]

    def test_pods_or_jobs_on_the_default_scheduler_are_caught(self) -> None:
        result = run(RULE, [*self.stack, role(["create"], job_verbs=["create"]), people_binding()])
        assert len(result.violations) == 1 and "kai-scheduler" in result.messages[0]
        assert "bare pods, Jobs" in result.messages[0]

    def test_a_policy_requiring_kai_scheduler_and_the_queue_closes_it(self) -> None:
        guarded = [
            *self.stack,
            *admission("kai", ("team-a",)),
            role(["create"], job_verbs=["create"]),
            people_binding(),
        ]
        assert run(RULE, guarded).clean
        # A policy that checks only the queue label leaves the default scheduler open.
        only_label = admission("kueue", ("team-a",))
        assert len(run(RULE, [*self.stack, *only_label, role(["create"]), people_binding()]).violations) == 1

    def test_roles_nobody_is_bound_to_are_not_judged(self) -> None:
        assert run(RULE, [*self.stack, role(["create"], job_verbs=["create"])]).clean


def test_roles_outside_team_namespaces_and_stacks_without_a_scheduler_are_not_judged() -> None:
    stack = [kueue_release(config(["batch/job"])), team_queue(), namespace("team-a")]
    assert run(RULE, [*stack, role(["create"], ns="ops", job_verbs=["create"])]).clean
    assert run(RULE, [team_queue(), namespace("team-a"), role(["create"], job_verbs=["create"])]).clean


def test_malformed_verbs_are_not_verbs_and_never_crash() -> None:
    """Fuzzing found a TypeError on a map among the verbs (unhashable); it is simply not a verb."""
    stack = [kueue_release(config(["batch/job"])), team_queue(), namespace("team-a")]
    odd: list[Any] = [{"create": True}, ["create"]]
    assert run(RULE, [*stack, role(odd)]).clean
    assert len(run(RULE, [*stack, role([*odd, "create"])]).violations) == 1


class TestWebhookScope:
    def test_unscoped_pod_integration_is_an_advisory_hazard(self) -> None:
        result = run(SCOPE, [kueue_release(config(["batch/job", "pod"])), team_queue(), namespace("team-a")])
        assert len(result.violations) == 1 and "every pod in the cluster" in result.messages[0]
        assert SCOPE.enforcement_level is not None and SCOPE.enforcement_level.value == "advisory"

    def test_a_scoped_selector_is_clean(self) -> None:
        assert run(SCOPE, [kueue_release(config(["batch/job", "pod"], SCOPED))]).clean


def test_every_kueue_integration_is_a_judged_kind() -> None:
    """The rule knows a kind for each framework Kueue 0.19.2 registers (pkg/controller/jobs/*)."""
    from gpu_batch_policy.rules.kueue.pod_bypass import WORKLOADS

    from components.kueue_config import KNOWN_FRAMEWORKS

    assert {w.framework for w in WORKLOADS} == set(KNOWN_FRAMEWORKS)
