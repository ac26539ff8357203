"""Objects Kueue would reject are refused in one line, by the pack's own checks
(``gpu_batch_policy.rules.kueue.api.API_CHECKS``).

kubernetes-sigs/kueue v0.19.2 ``pkg/webhooks/clusterqueue_webhook.go`` ``validatePreemption``:
``reclaimWithinCohort == Never && borrowWithinCohort != nil && borrowWithinCohort.Policy != Never``
is ``field.Invalid(..., "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never")`` (the
CRD's CEL rule on ``spec.preemption`` says the same).  ``reclaimWithinCohort`` defaults to
``Never``, so a ClusterQueue that sets only ``borrowWithinCohort`` is rejected too.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.whatif.kueue_cases import build, cluster_queue, flavor, flavor_quotas, group
from whatif.errors import WhatIfError
from whatif.pack import API_CHECKS

BORROW = {"policy": "LowerPriority", "maxPriorityThreshold": 100}


def _cq(preemption: dict[str, Any], **kw: Any) -> list[dict[str, Any]]:
    quotas = group(flavor_quotas("l4", ("nvidia.com/gpu", "4", "4")))
    return [flavor("l4"), cluster_queue("cq", quotas, cohort="co", preemption=preemption, **kw)]


@pytest.mark.parametrize(
    "preemption",
    [
        {"reclaimWithinCohort": "Never", "borrowWithinCohort": BORROW},
        {"borrowWithinCohort": BORROW},  # reclaimWithinCohort defaults to Never
    ],
)
def test_reclaim_never_with_a_borrow_within_cohort_policy_is_refused_in_one_line(
    preemption: dict[str, Any],
) -> None:
    with pytest.raises(WhatIfError) as raised:
        build(_cq(preemption))
    message = str(raised.value)
    assert "\n" not in message
    assert "ClusterQueue 'cq'" in message or "ClusterQueue cq" in message
    assert "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never" in message
    assert "[kueue-preemption-combinations]" in message and "not simulated" in message


@pytest.mark.parametrize(
    "preemption",
    [
        {"reclaimWithinCohort": "LowerPriority", "borrowWithinCohort": BORROW},
        {"reclaimWithinCohort": "Any", "borrowWithinCohort": BORROW},
        {"reclaimWithinCohort": "Never", "borrowWithinCohort": {"policy": "Never"}},
        {"reclaimWithinCohort": "Never"},
    ],
)
def test_what_kueue_accepts_is_still_simulated(preemption: dict[str, Any]) -> None:
    assert "cq" in build(_cq(preemption)).cluster_queues


def test_every_webhook_rule_of_the_pack_is_applied() -> None:
    """Other rejections take the same path: a lendingLimit above nominal (``validateLendingLimit``),
    a preference without TryNextFlavor on both (``validateFlavorFungibility``)."""
    over = group(flavor_quotas("l4", ("nvidia.com/gpu", "4", "", "8")))
    with pytest.raises(WhatIfError, match=r"\[kueue-lending-limit-within-nominal\]"):
        build([flavor("l4"), cluster_queue("cq", over, cohort="co")])
    fung = {
        "whenCanBorrow": "MayStopSearch",
        "whenCanPreempt": "TryNextFlavor",
        "preference": "BorrowingOverPreemption",
    }
    with pytest.raises(WhatIfError, match=r"preference can only be set"):
        build(_cq({}, fungibility=fung))
    assert {c.name for c in API_CHECKS} >= {
        "kueue-preemption-combinations",
        "kueue-lending-limit-within-nominal",
    }
