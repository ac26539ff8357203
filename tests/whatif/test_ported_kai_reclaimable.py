"""KAI's reclaim rules, ported from KAI Scheduler v0.17.0's own tests.

Source: kai-scheduler/KAI-Scheduler@v0.17.0
``pkg/scheduler/plugins/proportion/reclaimable/reclaimable_test.go``; each test names its
Describe / Context and It.  The functions under test port ``reclaimable.go``
(``CanReclaimResources``, ``Reclaimable`` with ``reclaimingQueuesRemainWithinBoundaries`` and
``isFairShareSaturationLowerPerResource``, saturation multiplier 1 as ``New(1.0)``) and
``filter_victims.go`` ``FilterVictim``: :mod:`whatif.kai.proportion`.

Queues are built as the Go tests build them: a ``rs.ResourceShare{}`` left empty is all zeros
(MaxAllowed 0 included); ``buildQueues`` gives GPU MaxAllowed unlimited and CPU and memory zero
shares; ``NewResource(milliCPU, memory, gpus)``.
"""

from __future__ import annotations

import pytest

from whatif.kai.proportion import (
    CPU,
    GPU,
    MEMORY,
    UNLIMITED,
    QueueAttrs,
    Vector,
    can_reclaim,
    reclaimable,
    vector,
    victim_filter,
)

SOURCE = "pkg/scheduler/plugins/proportion/reclaimable/reclaimable_test.go"

# (deserved, fairShare, allocated, allocatedNotPreemptible) per resource
Shares = dict[str, tuple[float, float, float, float]]


def _queue(name: str, parent: str | None, shares: Shares, *, gpu_unlimited: bool = False) -> QueueAttrs:
    q = QueueAttrs(name, parent, 100, 0)
    for r in (CPU, MEMORY, GPU):
        share = q.of(r)
        share.deserved, share.fair_share, share.allocated, share.allocated_not_preemptible = shares.get(
            r, (0.0, 0.0, 0.0, 0.0)
        )
        share.max_allowed = UNLIMITED if (gpu_unlimited and r == GPU) else 0.0
    return q


def build_queues(data: dict[str, tuple[str | None, float, float, float]]) -> dict[str, QueueAttrs]:
    """``buildQueues``: (parentQueue, deserved, fairShare, allocated) of GPU per queue."""
    return {
        name: _queue(name, parent, {GPU: (deserved, fair, allocated, 0.0)}, gpu_unlimited=True)
        for name, (parent, deserved, fair, allocated) in data.items()
    }


def _res(cpu: float, memory: float, gpu: float) -> Vector:
    """``resource_info.NewResource(milliCPU, memory, gpus)``."""
    return vector(cpu, memory, gpu)


# Describe "Can Reclaim Resources", Context "Preemptible job": (fairShare, allocated) per resource
@pytest.mark.parametrize(
    ("name", "requested", "gpu", "cpu", "memory", "expected"),
    [
        ("No allocated resources, below fair share", (1000, 1000, 1), (2, 0), (2000, 0), (2000, 0), True),
        (
            "Some resources allocated, below fair share",
            (1000, 1000, 1),
            (3, 1),
            (3000, 1000),
            (3000, 1000),
            True,
        ),
        (
            "Some resources at fair share with job, other stay below",
            (500, 1000, 0),
            (2, 1),
            (2000, 1000),
            (2000, 1000),
            True,
        ),
        ("Exactly at fair share with job", (1000, 1000, 1), (2, 1), (2000, 1000), (2000, 1000), True),
        ("Partially above fair share", (1, 1000, 1000), (1, 1), (1500, 1000), (3000, 1000), False),
        ("Fully above fair share", (1, 1000, 1000), (1, 1), (1500, 1000), (1500, 1000), False),
        (
            "Queue partially above fair share without job resources",
            (1, 1000, 1000),
            (0, 1),
            (3000, 2000),
            (3000, 1000),
            False,
        ),
    ],
)
def test_can_reclaim_resources_preemptible_job(
    name: str,
    requested: tuple[float, float, float],
    gpu: tuple[float, float],
    cpu: tuple[float, float],
    memory: tuple[float, float],
    expected: bool,
) -> None:
    shares = {r: (0.0, fair, alloc, 0.0) for r, (fair, alloc) in ((GPU, gpu), (CPU, cpu), (MEMORY, memory))}
    q = _queue("queue1", None, shares)
    assert can_reclaim(q, _res(*requested), preemptible=True) is expected, name


# Context "Non-Preemptible job": (deserved, fairShare, allocated, allocatedNotPreemptible)
@pytest.mark.parametrize(
    ("name", "requested", "gpu", "cpu", "memory", "expected"),
    [
        (
            "No allocated resources, below quota",
            (1000, 1000, 1),
            (2, 2, 0, 0),
            (2000, 2000, 0, 0),
            (2000, 2000, 0, 0),
            True,
        ),
        (
            "No allocated resources, exactly at quota",
            (1000, 1000, 1),
            (1, 2, 0, 0),
            (1000, 2000, 0, 0),
            (1000, 2000, 0, 0),
            True,
        ),
        (
            "No allocated resources, partially above quota",
            (1, 1000, 1000),
            (0, 2, 0, 0),
            (1000, 2000, 0, 0),
            (500, 2000, 0, 0),
            False,
        ),
        (
            "Some resources allocated, below quota",
            (1000, 1000, 1),
            (3, 3, 1, 1),
            (3000, 3000, 1000, 1000),
            (3000, 3000, 1000, 1000),
            True,
        ),
        (
            "Some preemptible resources allocated, zero quota",
            (1, 1000, 1000),
            (0, 3, 1, 0),
            (0, 3000, 1000, 0),
            (0, 3000, 1000, 0),
            False,
        ),
        (
            "Partially above quota",
            (1, 1000, 1000),
            (0, 3, 1, 1),
            (1500, 3000, 1000, 1000),
            (3000, 3000, 1000, 1000),
            False,
        ),
        (
            "Fully above quota",
            (1, 1000, 1000),
            (1, 3, 1, 1),
            (1500, 3000, 1000, 1000),
            (1500, 3000, 1000, 1000),
            False,
        ),
        (
            "Queue partially over quota without job resources",
            (1, 1000, 1000),
            (0, 3, 1, 1),
            (1500, 3000, 1000, 1000),
            (3000, 3000, 1000, 1000),
            False,
        ),
    ],
)
def test_can_reclaim_resources_non_preemptible_job(
    name: str,
    requested: tuple[float, float, float],
    gpu: tuple[float, float, float, float],
    cpu: tuple[float, float, float, float],
    memory: tuple[float, float, float, float],
    expected: bool,
) -> None:
    q = _queue("queue1", None, {GPU: gpu, CPU: cpu, MEMORY: memory})
    assert can_reclaim(q, _res(*requested), preemptible=False) is expected, name


def _reclaim(
    queues: dict[str, QueueAttrs],
    reclaimer: str,
    victims: dict[str, list[float]],
    *,
    preemptible: bool = True,
    gpus: float = 1,
) -> bool:
    """``Reclaimable(queues, reclaimerInfo, reclaimeeResourcesByQueue(reclaimees))``."""
    by_queue = {q: [_res(0, 0, g) for g in gs] for q, gs in victims.items()}
    return reclaimable(queues, reclaimer, _res(0, 0, gpus), preemptible=preemptible, victims=by_queue)


def _single_department() -> dict[str, QueueAttrs]:
    """Describe "Reclaimable - Single department" BeforeEach: p1 and p2 under ``default``."""
    return {
        "p1": _queue("p1", "default", {GPU: (3, 3, 2, 0)}, gpu_unlimited=True),
        "p2": _queue("p2", "default", {GPU: (2, 2, 3, 0)}, gpu_unlimited=True),
        "default": _queue("default", None, {GPU: (5, 5, 5, 0)}, gpu_unlimited=True),
    }


def _set(queues: dict[str, QueueAttrs], name: str, **values: float) -> None:
    for key, value in values.items():
        setattr(queues[name].of(GPU), key, value)


@pytest.mark.parametrize(
    ("name", "changes", "preemptible", "expected"),
    [
        ("Reclaimer is below fair share, reclaimee above fair share", {}, True, True),
        (
            "Reclaimer is below fair share, reclaimer exactly at fair share",
            {"p2": {"allocated": 2}, "default": {"allocated": 4}},
            True,
            False,
        ),
        (
            "Reclaimer and reclaimee are below fair share",
            {"p2": {"allocated": 1}, "default": {"allocated": 3}},
            True,
            False,
        ),
        (
            "Reclaimer below deserved and reclaimee above deserved (within fair share)",
            {"p2": {"fair_share": 3}},
            True,
            True,
        ),
        (
            "Reclaimer at fair share, reclaimee above fair share, department below fair share",
            {"p1": {"allocated": 3}, "default": {"allocated": 6, "deserved": 7, "fair_share": 5 + 7 - 2}},
            True,
            False,
        ),
        (
            "Reclaimer at fair share, reclaimee above fair share, department above fair share",
            {"p1": {"allocated": 3}, "default": {"allocated": 6}},
            True,
            False,
        ),
        (
            "Reclaimer above deserved, attempting to reclaim for non preemptible job",
            {"p1": {"deserved": 2}},
            False,
            True,
        ),
        (
            "Reclaimer department only preemptible above deserved, attempting to reclaim for non preemptible job",
            {"p1": {"deserved": 2}, "default": {"deserved": 3}},
            False,
            True,
        ),
        (
            "Reclaimer department nonpreemtible equal to deserved, attempting to reclaim for non preemptible job",
            {"p1": {"deserved": 2}, "default": {"deserved": 3, "allocated_not_preemptible": 3}},
            False,
            False,
        ),
        (
            "Reclaimer department allocated above fair share, attempting to reclaim for job",
            {"p1": {"deserved": 2}, "default": {"deserved": 1, "fair_share": 1, "allocated": 3}},
            True,
            True,
        ),
    ],
)
def test_reclaimable_single_department(
    name: str, changes: dict[str, dict[str, float]], preemptible: bool, expected: bool
) -> None:
    """Describe "Reclaimable - Single department": reclaimer in p1 asks 1 GPU, the reclaimee is
    p2's 1-GPU job.  ``AddResourceShare(GPU, x)`` adds x to the fair share."""
    queues = _single_department()
    for queue, values in changes.items():
        _set(queues, queue, **values)
    assert _reclaim(queues, "p1", {"p2": [1]}, preemptible=preemptible) is expected, name


@pytest.mark.parametrize(
    ("name", "changes", "expected"),
    [
        ("Reclaimer is below fair share, reclaimee above fair share - sanity", {}, True),
        (
            "Reclaimee department goes below fair share",
            {"p2": {"allocated": 2}, "d2": {"allocated": 2}},
            False,
        ),
        (
            "Reclaimer department is below deserved and reclaimee department is above deserved but within fair share",
            {
                "p1": {"allocated": 1},
                "d1": {"allocated": 1},
                "p2": {"fair_share": 4},
                "d2": {"fair_share": 4},
            },
            True,
        ),
    ],
)
def test_reclaimable_multiple_departments(
    name: str, changes: dict[str, dict[str, float]], expected: bool
) -> None:
    """Describe "Reclaimable - Multiple departments": p1 under d1, p2 under d2."""
    queues = build_queues(
        {"p1": ("d1", 3, 3, 2), "p2": ("d2", 2, 2, 3), "d1": (None, 3, 3, 2), "d2": (None, 2, 2, 3)}
    )
    for queue, values in changes.items():
        _set(queues, queue, **values)
    assert _reclaim(queues, "p1", {"p2": [1]}) is expected, name


SAME_BRANCH = {
    "top": (None, 2, 2, 2),
    "mid1": ("top", 1, 1, 0.5),
    "mid2": ("top", 1, 1, 1.5),
    "left-leaf1": ("mid1", 1, 1, 0),
    "left-leaf2": ("mid1", 0, 0, 0.5),
    "right-leaf": ("mid2", 1, 1, 1.5),
}


@pytest.mark.parametrize(
    ("name", "data", "reclaimer", "victims", "expected"),
    [
        (
            "Reclaimer is below fair share, reclaimee above fair share - sanity",
            {
                "left-top": (None, 1, 1, 0),
                "left-mid": ("left-top", 1, 1, 0),
                "left-leaf": ("left-mid", 1, 1, 0),
                "right-top": (None, 1, 1, 2),
                "right-mid": ("right-top", 1, 1, 2),
                "right-leaf": ("right-mid", 1, 1, 2),
            },
            "left-leaf",
            {"right-leaf": [2]},
            True,
        ),
        (
            "Reclaimer top queue will go over quota - don't reclaim",
            {
                "left-top": (None, 1, 1, 1),
                "left-top-oq-leaf": ("left-top", 0, 0, 1),
                "left-mid": ("left-top", 1, 1, 0),
                "left-leaf": ("left-mid", 1, 1, 0),
                "right-top": (None, 1, 1, 2),
                "right-mid": ("right-top", 1, 1, 2),
                "right-leaf": ("right-mid", 1, 1, 2),
            },
            "left-leaf",
            {"right-leaf": [2]},
            False,
        ),
        (
            "Reclaimer in the same tree branch and will go over fair share - don't reclaim",
            SAME_BRANCH,
            "left-leaf1",
            {"right-leaf": [1.5]},
            False,
        ),
        (
            "Reclaimer in the same tree branch - reclaim",
            SAME_BRANCH,
            "left-leaf1",
            {"right-leaf": [1.5], "left-leaf2": [0.5]},
            True,
        ),
        (
            "Reclaimer has lower utilization ratio than reclaimee but over 1",
            {
                "d1": (None, 4, 4, 4),
                "d1-project-1": ("d1", 3, 1, 0),
                "d1-project-2": ("d1", 1, 3, 4),
                "d2": (None, 3, 3, 7),
                "d2-project-1": ("d2", 3, 3, 7),
            },
            "d1-project-1",
            {"d2-project-1": [1]},
            True,
        ),
    ],
)
def test_reclaimable_multiple_hierarchy_levels(
    name: str,
    data: dict[str, tuple[str | None, float, float, float]],
    reclaimer: str,
    victims: dict[str, list[float]],
    expected: bool,
) -> None:
    """Describe "Reclaimable - Multiple hierarchy levels".  The "don't reclaim" cases are refused
    only by the saturation rule between siblings (``reclaimingQueuesRemainWithinBoundaries``):
    every victim's removal fits ``MaintainFairShareStrategy``."""
    assert _reclaim(build_queues(data), reclaimer, victims) is expected, name


def test_reclamation_with_uninvolved_resources() -> None:
    """Describe "Reclaimable - Multiple hierarchy levels", It "Reclamation with uninvolved
    resources": d1 is at 3× its CPU fair share, d2 at 1×, but neither the reclaimer nor the
    victim asks for CPU, so CPU saturation is not compared."""
    queues = build_queues(
        {
            "d1": (None, 4, 4, 4),
            "d1-project-1": ("d1", 1, 1, 1),
            "d2": (None, 3, 3, 7),
            "d2-project-1": ("d2", 3, 3, 7),
        }
    )
    queues["d1"].of(CPU).allocated, queues["d1"].of(CPU).fair_share = 3000, 1000
    queues["d2"].of(CPU).allocated, queues["d2"].of(CPU).fair_share = 1000, 1000
    assert _reclaim(queues, "d1-project-1", {"d2-project-1": [1]}) is True
    # the counterpart: once the reclaimer asks for CPU too, d1's CPU saturation (3 + more) is
    # compared with d2's (1) and the reclaim is refused
    by_queue = {"d2-project-1": [_res(0, 0, 1)]}
    assert not reclaimable(queues, "d1-project-1", _res(1000, 0, 1), preemptible=True, victims=by_queue)


@pytest.mark.parametrize(
    ("name", "reclaimer", "victim", "expected"),
    [
        ("filters victims whose leveled queue is strictly under deserved quota", (4, 4, 0), (4, 4, 2), False),
        ("keeps victims whose leveled queue is over deserved quota", (4, 4, 0), (0, 4, 4), True),
        ("keeps victims exactly at deserved quota for consolidation", (4, 4, 0), (2, 4, 2), True),
        (
            "filters victims under allocatable share when the reclaimer cannot use deserved quota",
            (1, 4, 0),
            (2, 4, 3),
            False,
        ),
        (
            "keeps victims over allocatable share when the reclaimer cannot use deserved quota",
            (1, 4, 0),
            (2, 4, 5),
            True,
        ),
    ],
)
def test_filter_victim(
    name: str, reclaimer: tuple[float, float, float], victim: tuple[float, float, float], expected: bool
) -> None:
    """Describe "FilterVictim": the reclaimer asks 2 GPUs."""
    queues = build_queues({"reclaimer": (None, *reclaimer), "victim": (None, *victim)})
    assert victim_filter(queues, "reclaimer", _res(0, 0, 2), "victim") is expected, name
