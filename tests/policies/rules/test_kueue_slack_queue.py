"""A ClusterQueue no namespace submits to still lends its quota to its cohort (a "slack" queue).

Kueue v0.19.2 counts every member's lendable quota (``lendingLimit``, else nominal) in the cohort's
subtree (``pkg/cache/scheduler/resource_node.go`` ``accumulateFromChild``), and a peer borrows it
through a flavor of its own resource groups (``pkg/scheduler/flavorassigner/flavorassigner.go``
``findFlavorForPodSets``) up to its ``borrowingLimit``.  MLBatch's published setup ships exactly this queue (``slack-cluster-queue``),
so ``kueue-clusterqueue-reachable`` passes it while a peer can borrow, and catches it the moment
no reachable peer can.
"""

from __future__ import annotations

from typing import Any

from tests.policies.pack_harness import UNKNOWN, Res, run
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import cluster_queue, local_queue, namespace, resource_group

RULE = "kueue-clusterqueue-reachable"
CLOSED = {"closedWorld": True}


def _team(gpus: float = 0.0, flavor: str = "gpu-flavor", **limits: dict[str, Any]) -> Res:
    return cluster_queue(
        "team-cq",
        cohortName="pool",
        resourceGroups=[resource_group(flavor, {"nvidia.com/gpu": gpus}, **limits)],
    )


def _slack(cohort: Any = "pool", **limits: dict[str, Any]) -> Res:
    spec: dict[str, Any] = {
        "namespaceSelector": {},
        "resourceGroups": [resource_group("gpu-flavor", {"nvidia.com/gpu": 8.0}, **limits)],
    }
    if cohort is not None:
        spec["cohortName"] = cohort
    return cluster_queue("slack-cq", **spec)


def _stack(team: Res, slack: Res, *, with_lq: bool = True) -> list[Res]:
    found = [namespace("team-a"), team, slack]
    return [*found, local_queue()] if with_lq else found


def _verdict(resources: list[Res]) -> tuple[list[str], str | None]:
    result = run(get_policy(RULE), resources, CLOSED)
    return result.messages, result.cannot_check


def test_a_slack_queue_lent_to_a_reachable_peer_passes() -> None:
    assert _verdict(_stack(_team(), _slack())) == ([], None)


def test_a_peer_with_a_borrowing_limit_above_zero_still_borrows() -> None:
    assert _verdict(_stack(_team(nvidia_com_gpu={"borrowingLimit": 2}), _slack())) == ([], None)


def test_nothing_lent_no_borrower_or_no_cohort_is_caught() -> None:
    cases = {
        "lendingLimit 0": _stack(_team(), _slack(nvidia_com_gpu={"lendingLimit": 0})),
        "peer's borrowingLimit 0": _stack(_team(nvidia_com_gpu={"borrowingLimit": 0}), _slack()),
        "peer lacks the flavor": _stack(_team(flavor="other-flavor"), _slack()),
        "no cohort": _stack(_team(), _slack(cohort=None)),
        "the peer is unreachable too": _stack(_team(), _slack(), with_lq=False),
    }
    for why, resources in cases.items():
        messages, _ = _verdict(resources)
        slack = [m for m in messages if "slack-cq" in m]
        assert len(slack) == 1, (why, messages)
        assert "no namespace can submit" in slack[0], why
    cohort_words = "no reachable queue of its cohort can borrow its GPU quota"
    assert cohort_words in _verdict(cases["lendingLimit 0"])[0][0]
    assert cohort_words not in _verdict(cases["no cohort"])[0][0]


def test_a_lending_limit_unknown_until_apply_cannot_be_judged() -> None:
    messages, cannot = _verdict(_stack(_team(), _slack(nvidia_com_gpu={"lendingLimit": UNKNOWN})))
    assert messages == [] and cannot is not None and "lendingLimit" in cannot
