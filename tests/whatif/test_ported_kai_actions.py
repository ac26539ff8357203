"""KAI's allocate, reclaim and preempt actions, ported from KAI Scheduler v0.17.0's own tests.

Each case is a ``TestTopologyBasic`` of kai-scheduler/KAI-Scheduler@v0.17.0, named by its Go
file and ``Name``; the session is built as KAI's test utilities build it (``kai_cases``), one
action runs, and every job's status must be KAI's expected one (``JobExpectedResults``:
Running, Releasing = evicted, Pipelined = started on resources being freed, Pending).  New
allocations by the allocate action are reported Pipelined by the harness and compared with
KAI's Running / Binding / Allocated.
"""

from __future__ import annotations

import pytest

from tests.whatif.kai_cases import BUILD, TRAIN, D, J, Q, outcome, session

RECLAIM = "pkg/scheduler/actions/reclaim/reclaim_test.go"
RECLAIM_DEPARTMENTS = "pkg/scheduler/actions/reclaim/reclaimDepartments_test.go"
PREEMPT = "pkg/scheduler/actions/preempt/preempt_test.go"


def _run(
    action: str, nodes: dict[str, int], queues: list[Q], jobs: list[J], departments: list[D] | None = None
) -> dict[str, str]:
    s = session(nodes, queues, jobs, departments)
    getattr(s, action)()
    return outcome(s)


def test_reclaim_jobs_according_to_queue_fair_share() -> None:
    """reclaim_test.go: "Reclaim jobs according to queue fair share"."""
    jobs = [
        J("q0_running_job0", "queue0", 1, tasks=["node0"]),
        J("q0_running_job1", "queue0", 1, tasks=["node0"]),
        J("q0_running_job2", "queue0", 1, TRAIN - 1, tasks=["node0"]),
        J("q1_running_job0", "queue1", 1, tasks=["node0"]),
        J("q1_running_job1", "queue1", 1, tasks=["node0"]),
        J("q1_running_job2", "queue1", 1, TRAIN - 1, tasks=["node0"]),
        J("reclaimer", "reclaimer_queue", 1, tasks=[None, None]),
    ]
    queues = [
        Q("queue0", 1, weight=1, parent="d1"),
        Q("queue1", 1, weight=1, parent="d1"),
        Q("reclaimer_queue", 2, weight=0, parent="d1"),
    ]
    got = _run("reclaim", {"node0": 6}, queues, jobs, [D("d1", 1)])
    assert got == {
        "q0_running_job0": "Running",
        "q0_running_job1": "Running",
        "q0_running_job2": "Releasing",
        "q1_running_job0": "Running",
        "q1_running_job1": "Running",
        "q1_running_job2": "Releasing",
        "reclaimer": "Pipelined",
    }


def test_reclaim_a_queue_over_deserved_that_will_go_below_quota() -> None:
    """reclaim_test.go: "queue1 is under deserved quota, queue0 is over deserved quota and will
    go below quota - reclaim"."""
    jobs = [
        J("q0_running_job", "queue0", 10, tasks=["node0", "node1"]),
        J("q1_pending_job", "queue1", 10),
    ]
    queues = [Q("queue0", 10, weight=1), Q("queue1", 10, weight=1)]
    got = _run("reclaim", {"node0": 16, "node1": 16}, queues, jobs)
    assert got == {"q0_running_job": "Releasing", "q1_pending_job": "Pipelined"}


def test_reclaim_a_queue_over_deserved_but_under_fair_share() -> None:
    """reclaim_test.go: "queue1 is under deserved quota, queue0 is over deserved quota but under
    fair share - reclaim"."""
    jobs = [J(f"q0_running_job{i}", "queue0", 2, tasks=[f"node{i}"]) for i in range(6)]
    jobs += [J(f"q0_pending_job{i}", "queue0", 2) for i in (6, 7, 8)]
    jobs += [J("q1_pending_job0", "queue1", 2)]
    nodes = {f"node{i}": 3 for i in range(6)}
    got = _run("reclaim", nodes, [Q("queue0", 2, weight=1), Q("queue1", 2, weight=1)], jobs)
    expected = {f"q0_running_job{i}": "Running" for i in range(5)}
    expected |= {"q0_running_job5": "Releasing", "q1_pending_job0": "Pipelined"}
    expected |= {f"q0_pending_job{i}": "Pending" for i in (6, 7, 8)}
    assert got == expected


def test_classic_reclaim_for_train_jobs_between_departments() -> None:
    """reclaimDepartments_test.go: "Classic reclaim for train jobs between departments"."""
    jobs = [
        J("running_job0", "queue0", 1, TRAIN, tasks=["node0"]),
        J("running_job1", "queue0", 1, BUILD, tasks=["node0"]),
        J("pending_job0", "queue1", 1, TRAIN),
    ]
    queues = [Q("queue0", 1, parent="d1"), Q("queue1", 1, parent="d2")]
    got = _run("reclaim", {"node0": 2}, queues, jobs, [D("d1", 1), D("d2", 1)])
    assert got == {"running_job0": "Releasing", "running_job1": "Running", "pending_job0": "Pipelined"}


def test_dont_reclaim_if_department_will_be_over_quota() -> None:
    """reclaimDepartments_test.go: "Don't reclaim if department will be overquota"."""
    jobs = [
        J("running_job0", "queue0", 3, TRAIN, tasks=["node0"]),
        J("running_job1", "queue1", 1, BUILD, tasks=["node0"]),
        J("pending_job0", "queue1", 2, TRAIN),
    ]
    queues = [
        Q("queue0", 1, weight=1, parent="d1"),
        Q("queue1", 1, weight=1, parent="d2"),
        Q("queue2", 1, weight=1, parent="d2"),
    ]
    got = _run("reclaim", {"node0": 4}, queues, jobs, [D("d1", 2), D("d2", 2)])
    assert got == {"running_job0": "Running", "running_job1": "Running", "pending_job0": "Pending"}


@pytest.mark.parametrize(
    ("name", "nodes", "queues", "jobs", "expected"),
    [
        (
            "3 train job running, 1 build job pending for the same queue - no need to preempt both",
            {"node0": 2},
            [Q("queue0", 2)],
            [
                J("running_job0", "queue0", 0.5, tasks=["node0"]),
                J("running_job1", "queue0", 1, tasks=["node0"]),
                J("running_job2", "queue0", 0.5, tasks=["node0"]),
                J("pending_job0", "queue0", 1, BUILD),
            ],
            {
                "running_job0": "Running",
                "running_job1": "Releasing",
                "running_job2": "Running",
                "pending_job0": "Pipelined",
            },
        ),
        (
            "1 train job running, 1 build job pending for the same queue - preempt",
            {"node0": 1},
            [Q("queue0", 1)],
            [J("running_job0", "queue0", 1, tasks=["node0"]), J("pending_job0", "queue0", 1, BUILD)],
            {"running_job0": "Releasing", "pending_job0": "Pipelined"},
        ),
        (
            "1 train job running, 1 train job pending for the same queue - don't preempt",
            {"node0": 1},
            [Q("queue0", 1)],
            [J("running_job0", "queue0", 1, tasks=["node0"]), J("pending_job0", "queue0", 1, TRAIN)],
            {"running_job0": "Running", "pending_job0": "Pending"},
        ),
        (
            "1 train job running, 1 build job pending for the different queue - don't preempt",
            {"node0": 1},
            [Q("queue0", 1), Q("queue1", 1)],
            [J("running_job0", "queue0", 1, tasks=["node0"]), J("pending_job0", "queue1", 1, BUILD)],
            {"running_job0": "Running", "pending_job0": "Pending"},
        ),
        (
            "2 train jobs running, 1 build job with 2 GPUs pending for the same queue - preempt",
            {"node0": 2},
            [Q("queue0", 2)],
            [
                J("running_job0", "queue0", 1, tasks=["node0"]),
                J("running_job1", "queue0", 1, tasks=["node0"]),
                J("pending_job0", "queue0", 2, BUILD),
            ],
            {"running_job0": "Releasing", "running_job1": "Releasing", "pending_job0": "Pipelined"},
        ),
        (
            "2 train jobs running require 2 GPUs, 1 build job with 2 GPUs pending - preempt",
            {"node0": 4},
            [Q("queue0", 2), Q("queue1", 2)],
            [
                J("running_job0", "queue0", 2, tasks=["node0"]),
                J("running_job1", "queue1", 2, tasks=["node0"]),
                J("pending_job0", "queue0", 2, BUILD),
            ],
            {"running_job0": "Releasing", "running_job1": "Running", "pending_job0": "Pipelined"},
        ),
    ],
)
def test_preempt(
    name: str, nodes: dict[str, int], queues: list[Q], jobs: list[J], expected: dict[str, str]
) -> None:
    """preempt_test.go: each case by its Name."""
    assert _run("preempt", nodes, queues, jobs) == expected, name


@pytest.mark.parametrize(
    ("source", "name", "nodes", "queues", "departments", "jobs", "expected"),
    [
        (
            "allocateGang_test.go",
            "Don't allocate gang job if not all tasks are allocatable",
            {"node0": 2},
            [Q("queue0", 2)],
            None,
            [J("pending_job0", "queue0", 2, BUILD, tasks=[None, None])],
            {"pending_job0": "Pending"},
        ),
        (
            "allocateGang_test.go",
            "Don't allocate gang interactive job if it will go over quota",
            {"node0": 10},
            [Q("queue0", 3)],
            None,
            [J("pending_job0", "queue0", 2, BUILD, tasks=[None, None])],
            {"pending_job0": "Pending"},
        ),
        (
            "allocateFractionalGpu_test.go",
            "allocate job with multiple pods but does not allow it because project goes over allowance",
            {"node0": 4},
            [Q("queue0", 1, weight=1, max_allowed=1, parent="department-a")],
            [D("department-a", 1, max_allowed=1)],
            [J("pending_job0", "queue0", 0.5, TRAIN, tasks=[None, None, None])],
            {"pending_job0": "Pending"},
        ),
    ],
)
def test_allocate_refuses(
    source: str,
    name: str,
    nodes: dict[str, int],
    queues: list[Q],
    departments: list[D] | None,
    jobs: list[J],
    expected: dict[str, str],
) -> None:
    """pkg/scheduler/actions/allocate/<source>: each case by its Name."""
    assert _run("allocate", nodes, queues, jobs, departments) == expected, name


def test_allocate_the_same_gangs_when_they_fit() -> None:
    """The counterpart of the refusals above (allocateGang_test.go "Allocate build gang job on 2
    nodes": a build gang of 2 × 1 GPU within quota, one GPU per node, is allocated whole)."""
    got = _run(
        "allocate",
        {"node0": 1, "node1": 1},
        [Q("queue0", 2)],
        [J("pending_job0", "queue0", 1, BUILD, tasks=[None, None])],
    )
    assert got == {"pending_job0": "Pipelined"}


BUILD_PREEMPTIBLE = 75  # constants.PriorityInteractivePreemptibleNumber
TWO_QUEUES = [Q("queue0", 1, weight=1), Q("queue1", 1, weight=1)]


@pytest.mark.parametrize(
    ("name", "jobs", "expected"),
    [
        (
            "2 jobs from queue0 running on node0 - 2 pending jobs from queue1 - reclaim",
            [
                J("running_job0", "queue0", 1, tasks=["node0"]),
                J("running_job1", "queue0", 1, tasks=["node0"]),
                J("pending_job0", "queue1", 1),
                J("pending_job1", "queue1", 1),
            ],
            {
                "running_job0": "Running",
                "running_job1": "Releasing",
                "pending_job0": "Pipelined",
                "pending_job1": "Pending",
            },
        ),
        (
            "1 job from queue0 and 1 job from queue1 running on node0 - don't reclaim",
            [
                J("running_job0", "queue0", 1, tasks=["node0"]),
                J("running_job1", "queue1", 1, tasks=["node0"]),
                J("pending_job0", "queue0", 1),
                J("pending_job1", "queue1", 1),
            ],
            {
                "running_job0": "Running",
                "running_job1": "Running",
                "pending_job0": "Pending",
                "pending_job1": "Pending",
            },
        ),
        (
            "2 train job of 1 GPUs from queue0 running on node0 with deserved of 1, 1 pending build job of 2 GPUs "
            "from queue1 with deserved of 1 - don't reclaim",
            [J("running_job0", "queue0", 2, tasks=["node0"]), J("pending_job0", "queue1", 2, BUILD)],
            {"running_job0": "Running", "pending_job0": "Pending"},
        ),
        (
            "1 train and 1 preemptible interactive are over quota - reclaim train",
            [
                J("running_job0", "queue0", 1, TRAIN, tasks=["node0"]),
                J("running_job1", "queue0", 1, BUILD_PREEMPTIBLE, tasks=["node0"]),
                J("pending_job0", "queue1", 1, TRAIN),
            ],
            {"running_job0": "Releasing", "running_job1": "Running", "pending_job0": "Pipelined"},
        ),
        (
            "2 preemptible interactive are over quota - reclaim",
            [
                J("running_job0", "queue0", 1, BUILD_PREEMPTIBLE, tasks=["node0"]),
                J("running_job1", "queue0", 1, BUILD_PREEMPTIBLE, tasks=["node0"]),
                J("pending_job0", "queue1", 1, TRAIN),
            ],
            {"running_job0": "Running", "running_job1": "Releasing", "pending_job0": "Pipelined"},
        ),
    ],
)
def test_reclaim_between_two_queues_on_one_node(name: str, jobs: list[J], expected: dict[str, str]) -> None:
    """reclaim_test.go: each case by its Name (node0 with 2 GPUs; queue0 and queue1 deserve 1 GPU
    each, over-quota weight 1)."""
    assert _run("reclaim", {"node0": 2}, TWO_QUEUES, jobs) == expected, name
