"""kai-podgroup-webhook, written from KAI Scheduler's PodGroup webhook (not from corpus files).

Source: NVIDIA/KAI-Scheduler ``pkg/apis/scheduling/v2alpha2/podgroup_webhook.go``
``validateSubGroups`` (duplicate names), ``validateParent`` (parent not found), ``detectCycle``.
"""

from __future__ import annotations

from typing import Any

from gpu_batch_policy.rules.webhooks.kai import POLICIES

from tests.policies.workload_stack import UNKNOWN, Registration, k8s, kai_queue, run

RULE = POLICIES[0]
QUEUE = kai_queue("team-a")  # KAI is in the stack


def pod_group(*subgroups: dict[str, Any]) -> Registration:
    spec = {"minMember": 3, "queue": "team-a", "subGroups": list(subgroups)}
    return k8s("scheduling.run.ai/v2alpha2", "PodGroup", "pg", namespace="team", spec=spec)


def test_clean_subgroup_tree_passes() -> None:
    tree = pod_group(
        {"name": "leader", "minMember": 1},
        {"name": "workers", "minMember": 2},
        {"name": "decode", "parent": "workers", "minMember": 1},
    )
    assert run(RULE, [QUEUE, tree]).violations == []


def test_duplicate_subgroup_name() -> None:
    outcome = run(RULE, [QUEUE, pod_group({"name": "a", "minMember": 1}, {"name": "a", "minMember": 1})])
    assert outcome.mentions("repeats subgroup name 'a'", "PodGroup webhook refuses it")


def test_parent_not_found() -> None:
    outcome = run(RULE, [QUEUE, pod_group({"name": "a", "minMember": 1}, {"name": "b", "parent": "x"})])
    assert outcome.mentions("parent 'x', which is not a subgroup")


def test_parent_cycle() -> None:
    assert run(RULE, [QUEUE, pod_group({"name": "a", "parent": "a"})]).mentions("cycle")
    cycle = pod_group(
        {"name": "a", "parent": "c"}, {"name": "b", "parent": "a"}, {"name": "c", "parent": "b"}
    )
    assert run(RULE, [QUEUE, cycle]).mentions("cycle")


def test_unknown_names_are_cannot_check_and_malformed_is_no_crash() -> None:
    outcome = run(RULE, [QUEUE, pod_group({"name": UNKNOWN}, {"name": "b"})])
    assert outcome.violations == [] and outcome.cannot_check is not None
    odd = k8s(
        "scheduling.run.ai/v2alpha2",
        "PodGroup",
        "odd",
        namespace="team",
        spec={"subGroups": [1, None, {"x": 1}]},
    )
    assert run(RULE, [QUEUE, odd]).violations == []
