"""Where a pack rule re-states a Kueue CRD CEL rule, both must agree on the same objects.

The pack keeps its own copy (``rules.kueue_api``) because a fresh-cluster ``pulumi preview``
has no CRDs to ask; the offline preview runs the CRD's CEL itself (``preview.cel_rules``).
Each case feeds one broken object to both, asserts both reject it, then asserts both accept the
fixed object, so neither can drift from the CRD without a failing test.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from preview.crd_validation import Outcome, validate_object
from preview.records import for_display
from tests.policies.pack_harness import Res, run
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import DELETE, cluster_queue, cohort, patch, resource_group

GPU = "spec.resourceGroups[0].flavors[0].resources[2]"


def borrowing_queue() -> Res:
    cq = patch(cluster_queue(cohortName="org"), f"{GPU}.borrowingLimit", 4.0)
    return patch(
        cq,
        "spec.preemption",
        {"reclaimWithinCohort": "Any", "borrowWithinCohort": {"policy": "LowerPriority"}},
    )


def gpu_cohort() -> Res:
    return cohort(
        "org",
        parent="root",
        resourceGroups=[resource_group("gpu-flavor", {"cpu": 8.0, "nvidia.com/gpu": 4.0})],
    )


# (case, pack policy, correct object, how to break it, the CRD's CEL message)
CASES: list[tuple[str, str, Callable[[], Res], Callable[[Res], Res], str]] = [
    (
        "borrowing-limit-without-cohort",
        "kueue-limits-need-cohort",
        borrowing_queue,
        lambda cq: patch(cq, "spec.cohortName", DELETE),
        "borrowingLimit must be nil when cohort is empty",
    ),
    (
        "cluster-queue-flavor-shorter-than-covered",
        "kueue-flavor-resources-match-covered",
        borrowing_queue,
        lambda cq: patch(
            cq, "spec.resourceGroups[0].flavors[0].resources", [{"name": "cpu", "nominalQuota": 1.0}]
        ),
        "flavors must have the same number of resources as the coveredResources",
    ),
    (
        "cohort-covered-longer-than-flavor",
        "kueue-flavor-resources-match-covered",
        gpu_cohort,
        lambda c: patch(c, "spec.resourceGroups[0].coveredResources", ["cpu", "nvidia.com/gpu", "memory"]),
        "flavors must have the same number of resources as the coveredResources",
    ),
    (
        "borrow-within-cohort-with-default-never-reclaim",
        "kueue-preemption-combinations",
        borrowing_queue,
        lambda cq: patch(cq, "spec.preemption.reclaimWithinCohort", DELETE),
        "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never",
    ),
    (
        "fungibility-preference-without-try-next-flavor",
        "kueue-preemption-combinations",
        borrowing_queue,
        lambda cq: patch(cq, "spec.flavorFungibility", {"preference": "PreemptionOverBorrowing"}),
        "preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor",
    ),
]


def cel_messages(res: Res) -> list[str]:
    result = validate_object(for_display(res.props))
    assert result.cel_rules_checked > 0
    return [v.message for v in result.violations] if result.outcome is Outcome.INVALID else []


@pytest.mark.parametrize(
    ("policy_name", "correct", "breaks", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_pack_rule_and_crd_cel_agree(
    policy_name: str, correct: Callable[[], Res], breaks: Callable[[Res], Res], message: str
) -> None:
    pol = get_policy(policy_name)
    good = correct()
    assert cel_messages(good) == []
    assert run(pol, [good]).clean, run(pol, [good]).text()

    bad = breaks(good)
    assert [m for m in cel_messages(bad) if message in m], cel_messages(bad)
    assert not run(pol, [bad]).clean, f"{policy_name} accepted what the CRD rejects: {message}"
