"""Team Roles must not hand out a Kueue bypass through bare pods (issue 10 #9)."""

from __future__ import annotations

from typing import Any

from tests.policies.pack_harness import Res, run
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import k8s, kueue_release, local_queue, namespace

RULE = get_policy("kueue-pod-bypass")
MANAGED = {"gpu-batch/kueue-managed": "true"}
SCOPED = "managedJobsNamespaceSelector:\n  matchLabels:\n    gpu-batch/kueue-managed: 'true'\n"


def config(frameworks: list[str], selector: str = "") -> str:
    return (
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
        + selector
        + ("integrations:\n  frameworks: [" + ", ".join(frameworks) + "]\n")
    )


def role(pod_verbs: list[str], ns: str = "team-a") -> Res:
    rules: list[dict[str, Any]] = [
        {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["create"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": pod_verbs},
    ]
    return k8s("rbac.authorization.k8s.io/v1", "Role", "team-a-submitter", namespace=ns, rules=rules)


def team_queue() -> Res:
    """The team's LocalQueue in team-a: what makes team-a a namespace where users submit."""
    return local_queue()


def test_pod_create_without_the_pod_integration_is_caught() -> None:
    stack = [kueue_release(config(["batch/job", "ray.io/rayjob"])), team_queue(), namespace("team-a")]
    result = run(RULE, [*stack, role(["get", "list", "create"])])
    assert len(result.violations) == 1 and "bypass queues and quota" in result.messages[0]
    assert run(RULE, [*stack, role(["get", "list", "watch", "delete"])]).clean


def test_pod_create_where_kueue_manages_pods_is_fine() -> None:
    stack = [
        kueue_release(config(["batch/job", "pod"], SCOPED)),
        team_queue(),
        namespace("team-a", **MANAGED),
    ]
    assert run(RULE, [*stack, role(["create"])]).clean


def test_pod_create_in_a_namespace_outside_the_selector_is_caught() -> None:
    stack = [kueue_release(config(["batch/job", "pod"], SCOPED)), team_queue(), namespace("team-a")]
    assert len(run(RULE, [*stack, role(["*"])]).violations) == 1


def test_unscoped_pod_integration_is_caught() -> None:
    result = run(RULE, [kueue_release(config(["batch/job", "pod"])), team_queue(), namespace("team-a")])
    assert len(result.violations) == 1 and "every pod in the cluster" in result.messages[0]


def test_roles_outside_team_namespaces_and_stacks_without_kueue_are_not_judged() -> None:
    stack = [kueue_release(config(["batch/job"])), team_queue(), namespace("team-a")]
    assert run(RULE, [*stack, role(["create"], ns="ops")]).clean
    assert run(RULE, [team_queue(), namespace("team-a"), role(["create"])]).clean


def test_malformed_verbs_are_not_verbs_and_never_crash() -> None:
    """Fuzzing found a TypeError on a map among the verbs (unhashable); it is simply not a verb."""
    stack = [kueue_release(config(["batch/job"])), team_queue(), namespace("team-a")]
    odd: list[Any] = [{"create": True}, ["create"]]
    assert run(RULE, [*stack, role(odd)]).clean
    assert len(run(RULE, [*stack, role([*odd, "create"])]).violations) == 1
