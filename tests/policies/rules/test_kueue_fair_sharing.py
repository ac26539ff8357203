"""borrowWithinCohort is ignored under fair sharing, so the pack refuses it there (issue 10 #8)."""

from __future__ import annotations

from tests.policies.pack_harness import Res, run
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import cluster_queue, kueue_release, patch

RULE = get_policy("kueue-borrow-within-cohort-under-fair-sharing")
FAIR_V1BETA2 = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing:\n  preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]\n"
NO_FAIR = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
BORROW = {
    "reclaimWithinCohort": "Any",
    "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100},
}


def borrowing_queue() -> Res:
    return patch(cluster_queue(cohort="ml"), "spec.preemption", BORROW)


def test_borrow_within_cohort_under_fair_sharing_is_caught() -> None:
    result = run(RULE, [kueue_release(FAIR_V1BETA2), borrowing_queue()])
    assert len(result.violations) == 1
    assert "policy LowerPriority, maxPriorityThreshold 100" in result.messages[0]
    assert "ignored because Kueue's fair sharing is enabled" in result.messages[0]


def test_without_fair_sharing_borrow_within_cohort_is_fine() -> None:
    assert run(RULE, [kueue_release(NO_FAIR), borrowing_queue()]).clean
    v1beta1_off = (
        "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nfairSharing:\n  enable: false\n"
    )
    assert run(RULE, [kueue_release(v1beta1_off), borrowing_queue()]).clean


def test_fair_sharing_without_borrow_within_cohort_is_fine() -> None:
    never = patch(
        cluster_queue(cohort="ml"),
        "spec.preemption",
        {"reclaimWithinCohort": "Any", "borrowWithinCohort": {"policy": "Never"}},
    )
    assert run(RULE, [kueue_release(FAIR_V1BETA2), never, cluster_queue("plain")]).clean


def test_v1beta1_enable_flag_counts() -> None:
    v1beta1_on = (
        "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nfairSharing:\n  enable: true\n"
    )
    assert len(run(RULE, [kueue_release(v1beta1_on), borrowing_queue()]).violations) == 1
