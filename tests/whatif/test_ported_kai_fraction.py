"""Fractional-GPU allocation, ported from KAI Scheduler v0.17.0's own tests.

Source: kai-scheduler/KAI-Scheduler@v0.17.0
``pkg/scheduler/actions/allocate/allocateFractionalGpu_test.go``; each case is a
``TestTopologyBasic`` named by its ``Name``, built as KAI's test utilities build it
(``tests/whatif/kai_cases.py``), the allocate action runs, and each job's status (Pending, or
allocated: KAI's Binding, the harness's Pipelined) and placement must be KAI's.  KAI names GPU
groups ("0", "1") rather than device indexes; the cases assert which jobs share a device
(``gpusharingorder``: a shared device with room first, the fullest first, ``gpupack``).
"""

from __future__ import annotations

from tests.whatif.kai_cases import BUILD, TRAIN, D, J, Q, outcome, session
from whatif.kai.session import Session

SOURCE = "pkg/scheduler/actions/allocate/allocateFractionalGpu_test.go"


def _allocate(
    nodes: dict[str, int], queues: list[Q], jobs: list[J], departments: list[D] | None = None
) -> tuple[dict[str, str], Session]:
    s = session(nodes, queues, jobs, departments)
    s.allocate()
    return outcome(s), s


def _where(s: Session, key: str) -> tuple[str, tuple[int, ...]]:
    job = next(j for j in s.jobs if j.key == key)
    (p,) = job.placements
    return p.node.name, p.devices


def test_department_goes_over_allowance() -> None:
    """ "allocate job with multiple pods but does not allow it because department to go over
    allowance": 3 × 0.5 GPU is 1.5 over department-a's MaxAllowed 1."""
    got, _ = _allocate(
        {"node0": 4},
        [Q("queue0", 1, weight=1, parent="department-a")],
        [J("pending_job0", "queue0", 0.5, TRAIN, tasks=[None, None, None])],
        [D("department-a", 1, max_allowed=1)],
    )
    assert got == {"pending_job0": "Pending"}


def test_allocate_to_same_gpu() -> None:
    """ "1 shared gpu job running, 1 pending interactive shared gpu job, allocate to same gpu"."""
    got, s = _allocate(
        {"node0": 2},
        [Q("queue0", 2)],
        [
            J("running_shared_gpu_job0", "queue0", 0.5, BUILD, tasks=["node0"]),
            J("pending_shared_gpu_job1", "queue0", 0.5, BUILD),
        ],
    )
    assert got == {"running_shared_gpu_job0": "Running", "pending_shared_gpu_job1": "Pipelined"}
    assert _where(s, "pending_shared_gpu_job1") == _where(s, "running_shared_gpu_job0")


def test_allocate_to_same_gpu_even_if_multiple_nodes() -> None:
    """ "1 shared gpu job running, 1 pending interactive shared gpu job, allocate to same gpu -
    even if multiple nodes, to check gpusharingorder plugin": the shared device on node1 wins
    over node0's idle ones."""
    got, s = _allocate(
        {"node0": 2, "node1": 2},
        [Q("queue0", 2)],
        [
            J("running_shared_gpu_job0", "queue0", 0.5, BUILD, tasks=["node1"]),
            J("pending_shared_gpu_job1", "queue0", 0.5, BUILD),
        ],
    )
    assert got == {"running_shared_gpu_job0": "Running", "pending_shared_gpu_job1": "Pipelined"}
    assert _where(s, "pending_shared_gpu_job1") == ("node1", _where(s, "running_shared_gpu_job0")[1])


def test_allocate_to_new_gpu() -> None:
    """ "1 shared gpu job running, 1 pending interactive shared gpu job - allocate to new gpu":
    0.5 does not fit beside 0.6, so it reserves the other device."""
    got, s = _allocate(
        {"node0": 2},
        [Q("queue0", 2)],
        [
            J("running_shared_gpu_job0", "queue0", 0.6, BUILD, tasks=["node0"]),
            J("pending_shared_gpu_job1", "queue0", 0.5, BUILD),
        ],
    )
    assert got == {"running_shared_gpu_job0": "Running", "pending_shared_gpu_job1": "Pipelined"}
    node, devices = _where(s, "pending_shared_gpu_job1")
    assert node == "node0" and devices != _where(s, "running_shared_gpu_job0")[1]


def test_queue_will_be_overused_dont_allocate() -> None:
    """ "1 shared gpu job running, 1 pending interactive shared gpu job - queue will be overused,
    don't allocate": a non-preemptible (build) 0.5 beside 0.6 passes the deserved 1 GPU
    (``isAllocatedNonPreemptibleOverQuota``), though the node has room."""
    got, _ = _allocate(
        {"node0": 2},
        [Q("queue0", 1)],
        [
            J("running_shared_gpu_job0", "queue0", 0.6, BUILD, tasks=["node0"]),
            J("pending_shared_gpu_job1", "queue0", 0.5, BUILD),
        ],
    )
    assert got == {"running_shared_gpu_job0": "Running", "pending_shared_gpu_job1": "Pending"}


def test_whole_and_shared_gpu_jobs_side_by_side() -> None:
    """ "1 whole gpu job running, 1 pending interactive shared gpu job - allocate" and "1 shared
    gpu interactive job running, 1 pending whole gpu job - allocate": each takes the other
    device of node0."""
    got, s = _allocate(
        {"node0": 2},
        [Q("queue0", 2)],
        [
            J("running_job0", "queue0", 1, TRAIN, tasks=["node0"]),
            J("pending_shared_gpu_job1", "queue0", 0.5, BUILD),
        ],
    )
    assert got == {"running_job0": "Running", "pending_shared_gpu_job1": "Pipelined"}
    assert _where(s, "pending_shared_gpu_job1")[1] != _where(s, "running_job0")[1]
    got, s = _allocate(
        {"node0": 2},
        [Q("queue0", 2)],
        [
            J("running_shared_gpu_job0", "queue0", 0.5, BUILD, tasks=["node0"]),
            J("pending_whole_gpu_job1", "queue0", 1, TRAIN),
        ],
    )
    assert got == {"running_shared_gpu_job0": "Running", "pending_whole_gpu_job1": "Pipelined"}
    assert _where(s, "pending_whole_gpu_job1")[1] != _where(s, "running_shared_gpu_job0")[1]


def test_allocate_3_of_4_shared_gpu_jobs() -> None:
    """ "1 interactive shared gpu job running, 4 pending interactive shared gpus pending -
    allocate 3 of the shared GPUs jobs": 0.6 reserves the second device, 0.5 fills the first,
    the next 0.5 fits nowhere, 0.3 joins the 0.6."""
    got, s = _allocate(
        {"node0": 2},
        [Q("queue0", 2)],
        [
            J("running_shared_gpu_job0", "queue0", 0.5, BUILD, tasks=["node0"]),
            J("pending_shared_gpu_job0", "queue0", 0.6, BUILD),
            J("pending_shared_gpu_job1", "queue0", 0.5, BUILD),
            J("pending_shared_gpu_job2", "queue0", 0.5, BUILD),
            J("pending_shared_gpu_job3", "queue0", 0.3, BUILD),
        ],
    )
    assert got == {
        "running_shared_gpu_job0": "Running",
        "pending_shared_gpu_job0": "Pipelined",
        "pending_shared_gpu_job1": "Pipelined",
        "pending_shared_gpu_job2": "Pending",
        "pending_shared_gpu_job3": "Pipelined",
    }
    first, second = _where(s, "running_shared_gpu_job0")[1], _where(s, "pending_shared_gpu_job0")[1]
    assert first != second
    assert _where(s, "pending_shared_gpu_job1")[1] == first
    assert _where(s, "pending_shared_gpu_job3")[1] == second


def test_pack_jobs_on_gpus() -> None:
    """ "Pack jobs on GPUs" (``gpupack``): 0.2 joins the fuller device (0.7), not the 0.5 one."""
    got, s = _allocate(
        {"node0": 2},
        [Q("queue0", 2)],
        [
            J("running_job0", "queue0", 0.5, tasks=["node0"]),
            J("running_job1", "queue0", 0.7, tasks=["node0"]),
            J("pending_job0", "queue0", 0.2),
        ],
    )
    assert got == {"running_job0": "Running", "running_job1": "Running", "pending_job0": "Pipelined"}
    assert _where(s, "pending_job0") == _where(s, "running_job1")
    assert _where(s, "running_job0")[1] != _where(s, "running_job1")[1]
