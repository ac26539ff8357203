"""Fair-share division, ported from KAI Scheduler v0.17.0's own tests.

Source: kai-scheduler/KAI-Scheduler@v0.17.0
``pkg/scheduler/plugins/proportion/resource_division/resource_division_test.go``
(Describe "Proportion" / "setResourceShare - GPU"); each test names its Context and It / Entry.
The functions under test port ``setResourceShare`` and ``divideOverQuotaResource``
(``resource_division.go``).  The Go tests pass kValue 0; usage is 0 here, so any kValue gives
the same weights.
"""

from __future__ import annotations

import pytest

from whatif.kai.proportion import GPU, UNLIMITED, QueueAttrs, divide_over_quota, set_resource_share


def _queue(
    name: str,
    *,
    deserved: float,
    fair: float = 0.0,
    weight: float = 0.0,
    request: float = 0.0,
    max_allowed: float = UNLIMITED,
    priority: int = 0,
    created: int = 0,
) -> QueueAttrs:
    return _with(
        QueueAttrs(name, None, priority, created),
        {
            "deserved": deserved,
            "fair": fair,
            "weight": weight,
            "request": request,
            "max_allowed": max_allowed,
        },
    )


def _with(q: QueueAttrs, values: dict[str, float]) -> QueueAttrs:
    deserved, fair, weight = values["deserved"], values.get("fair", 0.0), values.get("weight", 0.0)
    request, max_allowed = values.get("request", 0.0), values.get("max_allowed", UNLIMITED)
    share = q.of(GPU)
    share.deserved, share.fair_share, share.over_quota_weight = deserved, fair, weight
    share.request, share.max_allowed = request, max_allowed
    return q


# Context "single queue within quota (sanity)": Deserved 3, Request 2, weight 0.
@pytest.mark.parametrize(
    ("case", "total", "changes", "remaining", "fair"),
    [
        ("gives requested GPUs - no remaining", 2, {}, 0, 2),
        ("gives requested GPUs with remaining", 3, {}, 1, 2),
        ("doesn't give more GPUs than allowed", 3, {"max_allowed": 2}, 1, 2),
        ("gives up to deserved when over subscribed", 1, {}, 0, 2),
        ("gives up to full quota", 7, {"request": 5}, 4, 3),
        ("gives with fraction, if stated in deserved", 2, {"deserved": 1.5}, 0.5, 1.5),
        ("gives with fraction, if stated in request", 2, {"request": 1.5}, 0.5, 1.5),
        ("doesn't give if deserved is zero", 2, {"deserved": 0}, 2, 0),
    ],
)
def test_single_queue_within_quota(
    case: str, total: float, changes: dict[str, float], remaining: float, fair: float
) -> None:
    args = {"deserved": 3.0, "request": 2.0, **changes}
    q = _with(QueueAttrs("queue-1", None, 0, 0), args)
    assert set_resource_share(total, 0, GPU, [q]) == remaining, case
    assert q.of(GPU).fair_share == fair, case


# Context "single queue over quota (sanity)": Deserved 3, FairShare 3, weight 1, Request 5.
@pytest.mark.parametrize(
    ("case", "total", "changes", "remaining", "fair"),
    [
        ("gives requested GPUs no remaining", 2, {}, 0, 5),
        ("gives requested GPUs with remaining", 3, {}, 1, 5),
        ("doesn't give more GPUs than allowed", 2, {"max_allowed": 4}, 1, 4),
        ("doesn't give when over quota weight is zero", 2, {"weight": 0}, 2, 3),
        ("gives with fraction if requested", 2, {"request": 4.5}, 0.5, 4.5),
        ("gives remainder fraction", 0.5, {}, 0, 3.5),
        ("gives when deserved is zero", 6, {"deserved": 0, "fair": 0}, 1, 5),
        ("doesn't break when there are zero resources to divide", 0, {}, 0, 3),
    ],
)
def test_single_queue_over_quota(
    case: str, total: float, changes: dict[str, float], remaining: float, fair: float
) -> None:
    args = {"deserved": 3.0, "fair": 3.0, "weight": 1.0, "request": 5.0, **changes}
    q = _with(QueueAttrs("queue-1", None, 0, 0), args)
    assert divide_over_quota(total, 0, [q], GPU) == remaining, case
    assert q.of(GPU).fair_share == fair, case


# DescribeTable "two queues": both Deserved 2, weight 2, Request 6; queue-1 created first.
@pytest.mark.parametrize(
    ("entry", "total", "overrides", "remaining", "shares"),
    [
        ("allocates many available gpus", 15, {}, 3, (6, 6)),
        ("allocates exact requested amount gpus", 12, {}, 0, (6, 6)),
        ("allocates GPUs proportionally", 8, {"weight": (1, 3)}, 0, (3, 5)),
        ("doesn't allocate more than allowed", 12, {"max_allowed": (5, UNLIMITED)}, 1, (5, 6)),
        (
            "distributes remainder between queues based on largest remaining",
            11,
            {"weight": (1, 4), "request": (10, 10)},
            0,
            (3, 8),
        ),
        ("distributes remainder between queues based on creation time", 11, {}, 0, (6, 5)),
        ("priority doesn't affect deserved", 4, {"priority": (1, 2)}, 0, (2, 2)),
        ("priority does affect over-quota", 6, {"priority": (1, 2)}, 0, (2, 4)),
        (
            "priority does affect over-quota, even when overQuotaWeight is set",
            6,
            {"weight": (100, 1), "priority": (1, 2)},
            0,
            (2, 4),
        ),
    ],
)
def test_two_queues(
    entry: str,
    total: float,
    overrides: dict[str, tuple[float, float]],
    remaining: float,
    shares: tuple[float, float],
) -> None:
    queues = []
    for i in range(2):
        args: dict[str, float] = {"deserved": 2, "weight": 2, "request": 6}
        args.update({k: v[i] for k, v in overrides.items()})
        priority = int(args.pop("priority", 0))
        queues.append(_queue(f"queue-{i + 1}", priority=priority, created=i, **args))
    assert set_resource_share(total, 0, GPU, queues) == remaining, entry
    assert (queues[0].of(GPU).fair_share, queues[1].of(GPU).fair_share) == shares, entry
