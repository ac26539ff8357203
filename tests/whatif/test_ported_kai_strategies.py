"""KAI's reclaim strategies, ported from KAI Scheduler v0.17.0's own tests.

Source: kai-scheduler/KAI-Scheduler@v0.17.0
``pkg/scheduler/plugins/proportion/reclaimable/strategies/strategies_test.go`` (Describe "Reclaim
strategies"); each test names its Context and It / table key.  Under test: the ports of
``strategies.go`` ``FitsMaintainFairShare``, ``ReclaimerFitsDeservedQuota``,
``ReclaimeeExceedsDeservedQuota``, ``GuaranteeDeservedQuotaStrategy.Reclaimable`` and
``FitsReclaimStrategy`` in :mod:`whatif.kai.proportion`.  The remaining share passed is the
reclaimee's allocated share where the Go test passes ``GetAllocatedShare()``.  A share the Go
test leaves empty is all zeros (MaxAllowed 0 included).
"""

from __future__ import annotations

import pytest

from whatif.kai.proportion import (
    CPU,
    GPU,
    MEMORY,
    UNLIMITED,
    QueueAttrs,
    fits_maintain_fair_share,
    fits_reclaim_strategy,
    guarantee_deserved_quota,
    reclaimee_exceeds_deserved_quota,
    reclaimer_fits_deserved_quota,
    vector,
)

MIN_MEMORY = 10 * 1024 * 1024  # resource_info.MinMemory (base_resources.go)

# resource -> (deserved, fairShare, allocated, maxAllowed)
Spec = dict[str, tuple[float, float, float, float]]


def _queue(spec: Spec) -> QueueAttrs:
    q = QueueAttrs("q", None, 100, 0)
    for r, (deserved, fair, allocated, max_allowed) in spec.items():
        share = q.of(r)
        share.deserved, share.fair_share, share.allocated, share.max_allowed = (
            deserved,
            fair,
            allocated,
            max_allowed,
        )
    for r in (CPU, MEMORY, GPU):
        if r not in spec:
            q.of(r).max_allowed = 0.0
    return q


def test_checks_maintain_fair_share_against_allocatable_share() -> None:
    """Context "Reclaim strategy predicates", It "checks maintain fair share against allocatable
    share": deserved 2, fair share 4: keeping 3 GPUs is not above the allocatable 4, keeping 5 is."""
    reclaimee = _queue({GPU: (2, 4, 0, UNLIMITED)})
    assert not fits_maintain_fair_share(reclaimee, vector(0, 0, 3))
    assert fits_maintain_fair_share(reclaimee, vector(0, 0, 5))


def test_checks_deserved_quota_strategy_boundaries() -> None:
    """Context "Reclaim strategy predicates", It "checks deserved quota strategy boundaries"."""
    reclaimer = _queue({GPU: (4, 4, 2, 0)})
    reclaimee = _queue({GPU: (2, 4, 0, 0)})
    assert reclaimer_fits_deserved_quota(vector(0, 0, 2), reclaimer)
    assert not reclaimer_fits_deserved_quota(vector(0, 0, 3), reclaimer)
    assert reclaimee_exceeds_deserved_quota(reclaimee, vector(0, 0, 3))
    assert not reclaimee_exceeds_deserved_quota(reclaimee, vector(0, 0, 2))


def test_reclaimer_fits_deserved_quota_does_not_allocate() -> None:
    """``TestReclaimerFitsDeservedQuotaDoesNotAllocate`` (its result; allocations are Go's)."""
    reclaimer = _queue({CPU: (2, 0, 1, 0), MEMORY: (4, 0, 2, 0), GPU: (6, 0, 3, 0)})
    assert reclaimer_fits_deserved_quota(vector(1, 2, 3), reclaimer)


def test_strategies_allow_reclaim_without_verbose_logging() -> None:
    """``TestMaintainFairShareStrategyDoesNotAllocateWhenVerboseLoggingIsDisabled`` and
    ``TestGuaranteeDeservedQuotaStrategyDoesNotAllocateWhenVerboseLoggingIsDisabled`` (their
    results): remaining (2, 0, 0) against shares of 1."""
    unlimited = _queue({r: (1, 1, 0, UNLIMITED) for r in (CPU, MEMORY, GPU)})
    assert fits_maintain_fair_share(unlimited, vector(2, 0, 0))
    deserved_one = _queue({r: (1, 0, 0, 0) for r in (CPU, MEMORY, GPU)})
    assert guarantee_deserved_quota(vector(1, 0, 0), deserved_one, deserved_one, vector(2, 0, 0))


# Context "Maintain Fair Share Strategy": reclaimer GPU (5, 5, 0); reclaimee GPU below.
@pytest.mark.parametrize(
    ("name", "reclaimee_gpu", "expected"),
    [
        ("Reclaimee has less than quota", (3, 4, 1), False),
        ("Reclaimee has less than fair share", (3, 4, 3), False),
        ("Reclaimee has exactly fair share and above quota", (1, 3, 3), False),
        ("Reclaimee has exactly fair share and equal to quota", (3, 3, 3), False),
        ("Reclaimee has more than fair share", (2, 3, 4), True),
    ],
)
def test_maintain_fair_share_strategy(
    name: str, reclaimee_gpu: tuple[float, float, float], expected: bool
) -> None:
    reclaimee = _queue({GPU: (*reclaimee_gpu, UNLIMITED)})
    assert fits_maintain_fair_share(reclaimee, reclaimee.allocated()) is expected, name


# Context "Maintain Fair Share Strategy - Multi Resource": the reclaimee's deserved and fair share
# per resource (memory in MinMemory units), the remaining share (gpu, cpu, memory).
@pytest.mark.parametrize(
    ("name", "deserved", "fair", "remaining", "expected"),
    [
        ("deserved less than fair share. GPU under, CPU over, Memory over", 100, 200, (80, 220, 220), True),
        ("deserved less than fair share. GPU under, CPU under, Memory over", 100, 200, (220, 80, 220), True),
        ("deserved less than fair share. GPU over, CPU over, Memory under", 100, 200, (220, 220, 80), True),
        ("deserved equal to fair share. GPU under, CPU over, Memory over", 200, 200, (80, 220, 220), True),
        ("deserved equal to fair share. GPU over, CPU under, Memory over", 200, 200, (220, 80, 220), True),
        ("deserved equal to fair share. GPU over, CPU over, Memory under", 200, 200, (220, 220, 80), True),
        ("deserved equal to fair share. GPU over, CPU under, Memory under", 200, 200, (220, 120, 120), True),
        ("deserved equal to fair share. GPU under, CPU over, Memory under", 200, 200, (120, 220, 120), True),
        ("deserved equal to fair share. GPU under, CPU under, Memory over", 200, 200, (120, 120, 220), True),
        (
            "deserved equal to fair share. GPU under, CPU under, Memory under",
            200,
            200,
            (120, 120, 120),
            False,
        ),
    ],
)
def test_maintain_fair_share_strategy_multi_resource(
    name: str, deserved: float, fair: float, remaining: tuple[float, float, float], expected: bool
) -> None:
    reclaimee = _queue(
        {
            GPU: (deserved, fair, 0, UNLIMITED),
            CPU: (deserved, fair, 0, UNLIMITED),
            MEMORY: (deserved * MIN_MEMORY, fair * MIN_MEMORY, 0, UNLIMITED),
        }
    )
    gpu, cpu, memory = remaining
    assert fits_maintain_fair_share(reclaimee, vector(cpu, memory * MIN_MEMORY, gpu)) is expected, name


def test_max_allowed_is_lower_than_deserved_fair_share() -> None:
    """Context "Maintain Fair Share Strategy - Multi Resource", "Max Allowed is lower than
    Deserved/FairShare": the allocatable share is capped at MaxAllowed 100, so keeping 120 CPU is
    above it."""
    reclaimee = _queue(
        {
            GPU: (200, 200, 0, 100),
            CPU: (200, 200, 0, 100),
            MEMORY: (200 * MIN_MEMORY, 200 * MIN_MEMORY, 0, 100),
        }
    )
    assert fits_maintain_fair_share(reclaimee, vector(120, 30 * MIN_MEMORY, 50))
    # the counterpart: keeping at most MaxAllowed in every resource is not above it
    assert not fits_maintain_fair_share(reclaimee, vector(100, 100, 50))


# Context "Guarantee Deserved Quota Strategy": the reclaimer asks 2 GPUs; GPU (deserved,
# fairShare, allocated) of both queues; the reclaimee's CPU and memory shares where the case sets them.
@pytest.mark.parametrize(
    ("name", "reclaimer_gpu", "reclaimee_gpu", "reclaimee_other", "expected"),
    [
        (
            "Reclaimer is above deserved quota and reclaimee above deserved quota",
            (1, 5, 3),
            (1, 5, 3),
            None,
            False,
        ),
        (
            "Reclaimer reaches exactly deserved quota and reclaimee above deserved quota",
            (5, 5, 3),
            (1, 5, 4),
            None,
            True,
        ),
        (
            "Reclaimer gets exactly deserved quota and reclaimee remains with exactly deserved quota",
            (5, 5, 3),
            (1, 3, 3),
            None,
            True,
        ),
        (
            "Reclaimer gets exactly deserved quota and reclaimee goes below deserved quota",
            (4, 5, 2),
            (3, 5, 4),
            {CPU: (1, 1, 0, 0), MEMORY: (1, 1, 0, 0)},
            True,
        ),
        (
            "Reclaimer is below deserved quota and reclaimee is above deserved quota in *only one* of the resources",
            (5, 2, 2),
            (1, 3, 3),
            {CPU: (100, 100, 0, 0)},
            True,
        ),
        (
            "Reclaimer is below deserved quota and reclaimee has exactly deserved quota",
            (5, 2, 2),
            (3, 3, 3),
            None,
            False,
        ),
        (
            "Reclaimer is below deserved quota and reclaimee is below deserved quota",
            (5, 2, 2),
            (3, 2, 2),
            None,
            False,
        ),
        (
            "Zero quota queue gives up on all resources in favor of a starved queue",
            (4, 4, 2),
            (0, 2, 2),
            None,
            True,
        ),
    ],
)
def test_guarantee_deserved_quota_strategy(
    name: str,
    reclaimer_gpu: tuple[float, float, float],
    reclaimee_gpu: tuple[float, float, float],
    reclaimee_other: Spec | None,
    expected: bool,
) -> None:
    reclaimer = _queue({GPU: (*reclaimer_gpu, 0)})
    reclaimee = _queue({GPU: (*reclaimee_gpu, 0), **(reclaimee_other or {})})
    requested = vector(0, 0, 2)
    assert guarantee_deserved_quota(requested, reclaimer, reclaimee, reclaimee.allocated()) is expected, name


def test_fits_reclaim_strategy_is_either_strategy() -> None:
    """``FitsReclaimStrategy`` tries MaintainFairShare, then GuaranteeDeservedQuota: a reclaimee
    within its fair share (MaintainFairShare fails) is still reclaimable by a starved reclaimer
    from its over-quota part ("Reclaimer reaches exactly deserved quota and reclaimee above
    deserved quota"), and not by a reclaimer over its deserved quota."""
    reclaimee = _queue({GPU: (1, 5, 4, UNLIMITED)})
    starved, over = _queue({GPU: (5, 5, 3, 0)}), _queue({GPU: (1, 5, 3, 0)})
    assert not fits_maintain_fair_share(reclaimee, reclaimee.allocated())
    assert fits_reclaim_strategy(vector(0, 0, 2), starved, reclaimee, reclaimee.allocated())
    assert not fits_reclaim_strategy(vector(0, 0, 2), over, reclaimee, reclaimee.allocated())
