"""kai-podgroup-members: a PodGroup created beside its pods (KAI v0.17.0 ``pod_controller.go``
``isOrphanPodWithPodGroup``; readiness: ``subgroup_info/podset.go`` ``IsReadyForScheduling``)."""

from __future__ import annotations

from typing import Any

from gpu_batch_policy.rules.kai.pod_group_members import POLICIES

from tests.policies.workload_stack import Registration, k8s, pod, run

RULE = POLICIES[0]


def pod_group(**spec: Any) -> Registration:
    return k8s(
        "scheduling.run.ai/v2alpha2", "PodGroup", "pg", namespace="ml", spec={"queue": "team-a", **spec}
    )


def member(name: str, scheduler: str = "kai-scheduler", subgroup: str | None = None) -> Registration:
    template = pod(gpu=1)
    template["spec"]["schedulerName"] = scheduler
    labels = {"kai.scheduler/subgroup-name": subgroup} if subgroup else None
    return k8s(
        "v1",
        "Pod",
        name,
        namespace="ml",
        spec=template["spec"],
        labels=labels,
        annotations={"pod-group-name": "pg"},
    )


def test_min_member_against_the_pods_that_attach() -> None:
    outcome = run(RULE, [pod_group(minMember=3), member("a"), member("b")])
    assert outcome.mentions("PodGroup 'ml/pg'", "spec.minMember needs 3 pods but only 2")
    assert run(RULE, [pod_group(minMember=2), member("a"), member("b")]).violations == []
    # A pod of another scheduler never joins the gang.
    other = run(RULE, [pod_group(minMember=2), member("a"), member("b", scheduler="default-scheduler")])
    assert other.mentions("only 1", "1 of its pods name another scheduler")


def test_leaf_subgroups_count_their_own_pods() -> None:
    subgroups = [{"name": "workers", "minMember": 2}, {"name": "leader", "minMember": 1}]
    short = [pod_group(subGroups=subgroups), member("w1", subgroup="workers"), member("l", subgroup="leader")]
    assert run(RULE, short).mentions("('workers') minMember needs 2 pods but only 1")
    enough = [*short, member("w2", subgroup="workers")]
    assert run(RULE, enough).violations == []


def test_a_group_whose_pods_come_from_elsewhere_is_not_judged() -> None:
    outcome = run(RULE, [pod_group(minMember=4)])
    assert outcome.violations == [] and outcome.cannot_check is not None
