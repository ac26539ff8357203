"""KAI's queue order, ported from KAI Scheduler v0.17.0's own tests.

Source: kai-scheduler/KAI-Scheduler@v0.17.0
``pkg/scheduler/plugins/proportion/queue_order/queue_order_test.go``: ``TestGetQueueOrderResult``
(each case by its ``Name``), ``TestPrioritizeUnderUtilizedDoesNotAllocate`` and
``TestPrioritizeUnderQuotaWithJobDoesNotAllocate`` (their results; allocation counts are Go's).
Under test: :func:`whatif.kai.proportion.queue_order`, the port of ``queue_order.go``
``GetQueueOrderResult`` (-1: the left queue goes first, ``lQueuePrioritized``; 1:
``rQueuePrioritized``).  A share the Go test leaves empty is all zeros; an empty PodGroup asks
nothing.  The two GPU-memory cases ask ``gpu-memory`` of a node whose GPUs have 10000 MiB
(``minNodeGPUMemory``): their queue charge is the fraction memory / 10000 of each device
(``GpuMemoryAsGpuFraction``), which is what the job vectors below carry.
"""

from __future__ import annotations

import pytest

from whatif.kai.proportion import CPU, GPU, MEMORY, QueueAttrs, Vector, queue_order, vector

L_FIRST, R_FIRST = -1, 1


def _queue(name: str, priority: int, gpu: dict[str, float], created: int) -> QueueAttrs:
    q = QueueAttrs(name, None, priority, created)
    for r in (CPU, MEMORY):
        q.of(r).max_allowed = 0.0
    for key, value in gpu.items():
        setattr(q.of(GPU), key, value)
    return q


def _gpu(deserved: float, fair: float, allocated: float, request: float) -> dict[str, float]:
    return {
        "deserved": deserved,
        "fair_share": fair,
        "max_allowed": -1,
        "over_quota_weight": 1,
        "allocated": allocated,
        "allocated_not_preemptible": 0,
        "request": request,
    }


@pytest.mark.parametrize(
    ("name", "left", "right", "jobs", "total", "expected"),
    [
        (
            "test prioritization based on fair share starvation",
            (0, _gpu(2, 99, 20, 99)),
            (0, _gpu(2, 2, 0, 2)),
            (vector(), vector()),
            vector(),
            R_FIRST,
        ),
        (
            "test prioritization based on quota starvation, even if priority is different",
            (1, _gpu(2, 99, 20, 99)),
            (0, _gpu(2, 2, 0, 2)),
            (vector(), vector()),
            vector(),
            R_FIRST,
        ),
        (
            "prioritize queue priority if queues are satisfied",
            (1, _gpu(2, 99, 20, 99)),
            (0, _gpu(2, 2, 3, 99)),
            (vector(), vector()),
            vector(),
            L_FIRST,
        ),
        (
            "prioritize queue priority if queues are satisfied, quota < rQueue < fairshare",
            (1, _gpu(2, 99, 20, 99)),
            (0, _gpu(2, 80, 3, 99)),
            (vector(), vector()),
            vector(),
            L_FIRST,
        ),
        (
            "GPU memory affects queue order - lower memory request prioritized",
            (0, _gpu(50, 50, 40, 50)),
            (0, _gpu(50, 50, 40, 50)),
            (vector(gpu=2 * 5000 / 10000), vector(gpu=2 * 10000 / 10000)),
            vector(gpu=100),
            L_FIRST,
        ),
        (
            "GPU memory affects queue order - higher memory request deprioritized",
            (0, _gpu(50, 50, 40, 50)),
            (0, _gpu(50, 50, 40, 50)),
            (vector(gpu=4 * 8000 / 10000), vector(gpu=4 * 2000 / 10000)),
            vector(gpu=100),
            R_FIRST,
        ),
    ],
)
def test_get_queue_order_result(
    name: str,
    left: tuple[int, dict[str, float]],
    right: tuple[int, dict[str, float]],
    jobs: tuple[Vector, Vector],
    total: Vector,
    expected: int,
) -> None:
    lq, rq = _queue("lQueue", *left, created=0), _queue("rQueue", *right, created=1)
    assert queue_order(lq, rq, jobs[0], jobs[1], total) == expected, name
    # the order is a comparison: swapping the sides swaps the answer (the cases are decided
    # before the creation-time tie-break)
    lq2, rq2 = _queue("lQueue", *right, created=0), _queue("rQueue", *left, created=1)
    assert queue_order(lq2, rq2, jobs[1], jobs[0], total) == -expected, name


def test_prioritize_under_utilized() -> None:
    """``TestPrioritizeUnderUtilizedDoesNotAllocate``: fair share 1 everywhere, left allocated 1
    (not over), right 2 (over in every resource): the left queue first."""
    lq, rq = QueueAttrs("l", None, 0, 1), QueueAttrs("r", None, 0, 0)
    for r in (CPU, MEMORY, GPU):
        lq.of(r).fair_share, lq.of(r).allocated = 1, 1
        rq.of(r).fair_share, rq.of(r).allocated = 1, 2
    assert queue_order(lq, rq, vector(), vector(), vector(3, 3, 3)) == L_FIRST


def test_prioritize_under_quota_with_job() -> None:
    """``TestPrioritizeUnderQuotaWithJobDoesNotAllocate``: deserved 1 everywhere, left allocated
    nothing (within quota), right 2 (over it), empty jobs: the left queue first, though the right
    is older."""
    lq, rq = QueueAttrs("l", None, 0, 1), QueueAttrs("r", None, 0, 0)
    for r in (CPU, MEMORY, GPU):
        lq.of(r).deserved = 1
        rq.of(r).deserved, rq.of(r).allocated = 1, 2
        # fair share as allocated on both sides: the under-utilised rule (before) does not decide
        rq.of(r).fair_share = 2
    assert queue_order(lq, rq, vector(), vector(), vector(3, 3, 3)) == L_FIRST
