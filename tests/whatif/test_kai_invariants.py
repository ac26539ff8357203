"""Seeded random scenarios: the KAI what-if's invariants over thousands of traces.

Each scenario is a small random KAI cluster -- a queue tree one to three levels deep with random
GPU and CPU quota (``-1`` unlimited included), limit, over-quota weight and queue priority, one
to four nodes of one to four GPUs -- and a random trace of PodGroups: gangs of one to three pods
asking for whole GPUs, a ``gpu-fraction`` of one or two devices, or CPU only, under the chart's
priority classes (``train`` 50 and ``build-preemptible`` 75 preemptible; ``build`` 100 and
``inference`` 125 not: ``pkg/common/podgroup/preemptible.go`` ``CalculatePreemptibility``),
arriving at random times.  After every settled instant (kai-scheduler/KAI-Scheduler v0.17.0):

- no queue is above its limit (``capacity_policy/max_allowed_check.go`` ``isOverLimit``, on the
  queue and every ancestor), and no queue holds more non-preemptible work than its deserved
  quota (``quota_check.go`` ``isAllocatedNonPreemptibleOverQuota``);
- no node is over-committed: CPU and memory within allocatable, a device held whole by one pod or
  shared by fraction pods whose fractions sum to at most 1 (``docs/gpu-sharing``: the
  reservation pod holds the device), and the node's own bookkeeping agrees;
- gangs are all-or-nothing: a running PodGroup has every pod placed (minMember = every pod),
  any other PodGroup none;

and over the run: no PodGroup is admitted while it is already running, a non-preemptible
PodGroup is never reclaimed or preempted (``reclaim.go`` / ``preempt.go`` victim filters take
preemptible jobs only), and every run terminates: it returns with every PodGroup finished or
never admitted, or stops at a livelock reported in one line.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

import whatif.kai.simulator as kai_simulator
from whatif.errors import NotSettledError
from whatif.kai.cluster import EPSILON, FINISHED, PENDING, RUNNING, Job, Node
from whatif.kai.model import KAI_PRIORITY_CLASSES, KaiCluster
from whatif.kai.proportion import CPU, GPU, MEMORY, RESOURCES, UNLIMITED, QueueAttrs, chain
from whatif.kai.simulator import Outcome, simulate
from whatif.trace import Trace, TraceEntry
from whatif.workload import PodSet

SCENARIOS = 2000
CLASSES = tuple(KAI_PRIORITY_CLASSES)


def _share(q: QueueAttrs, resource: str, rng: random.Random, top: int, unit: float = 1.0) -> None:
    share = q.of(resource)
    quota = rng.choice([UNLIMITED, 0.0, *(float(rng.randint(1, top)) for _ in range(4))])
    limit = rng.choice(
        [UNLIMITED, UNLIMITED, UNLIMITED, max(quota, 0.0) + rng.randint(0, top), float(rng.randint(0, top))]
    )
    share.deserved = quota if quota == UNLIMITED else quota * unit
    share.max_allowed = limit if limit == UNLIMITED else limit * unit
    share.over_quota_weight = float(rng.choice([0, 1, 1, 2, 3]))


def _queues(rng: random.Random) -> dict[str, QueueAttrs]:
    queues: dict[str, QueueAttrs] = {}

    def add(parent: str | None, depth: int) -> None:
        name = f"q{len(queues)}"
        q = QueueAttrs(name, parent, rng.choice([100, 100, 50, 150]), len(queues))
        _share(q, GPU, rng, 6)
        _share(q, CPU, rng, 8, 1000.0)
        q.of(MEMORY).deserved, q.of(MEMORY).max_allowed = UNLIMITED, UNLIMITED
        q.of(MEMORY).over_quota_weight = 1.0
        queues[name] = q
        if parent is not None:
            queues[parent].children.append(name)
        if depth < 3 and (parent is None or rng.random() < 0.3):
            for _ in range(rng.randint(1, 3)):
                add(name, depth + 1)

    for _ in range(rng.randint(1, 2)):
        add(None, 1)
    return queues


def _cluster(rng: random.Random) -> KaiCluster:
    nodes = [
        Node(f"n{i}", float(rng.choice([8000, 16000, 32000])), 64e9, rng.choice([1, 2, 4, 8]))
        for i in range(rng.randint(1, 4))
    ]
    return KaiCluster(_queues(rng), nodes, dict(KAI_PRIORITY_CLASSES))


def _pod_set(rng: random.Random, j: int) -> PodSet:
    kind = rng.random()
    requests = {"cpu": rng.choice([0, 0, 500, 1000])}
    if kind < 0.5:
        requests["nvidia.com/gpu"] = rng.randint(1, 2) * 1000
    elif kind < 0.85:
        requests["gpu-fraction"] = rng.choice([250, 500, 750])
        requests["gpu-fraction-num-devices"] = rng.choice([1000, 1000, 2000])
    return PodSet(f"ps{j}", rng.randint(1, 3), requests)


def _trace(rng: random.Random, leaves: list[str]) -> Trace:
    entries = []
    for i in range(rng.randint(4, 14)):
        entries.append(
            TraceEntry(
                f"w{i}",
                "ns",
                rng.choice(leaves),
                None,
                rng.choice(CLASSES),
                float(rng.randint(0, 6) * 10),
                float(rng.randint(1, 6) * 10),
                tuple(_pod_set(rng, j) for j in range(rng.randint(1, 2))),
            )
        )
    return Trace(tuple(entries))


def check_state(cluster: KaiCluster, jobs: list[Job]) -> None:
    """The invariants of one settled instant (see the module docstring)."""
    running = [j for j in jobs if j.state == RUNNING]
    for job in jobs:
        if job.state == RUNNING:
            assert len(job.placements) == len(job.pods), f"{job.key}: gang partly placed"
        else:
            assert not job.placements, f"{job.key} ({job.state}) still holds pods"
    used = {q: dict.fromkeys(RESOURCES, 0.0) for q in cluster.queues}
    not_preemptible = {q: dict.fromkeys(RESOURCES, 0.0) for q in cluster.queues}
    for job in running:
        for q in chain(cluster.queues, job.queue):
            for r, v in job.demand().items():
                used[q.name][r] += v
                if not job.preemptible:
                    not_preemptible[q.name][r] += v
    for name, q in cluster.queues.items():
        for r in RESOURCES:
            share = q.of(r)
            if share.max_allowed != UNLIMITED:
                assert used[name][r] <= share.max_allowed + EPSILON, f"queue {name} {r} over its limit"
            if share.deserved != UNLIMITED:
                assert not_preemptible[name][r] <= share.deserved + EPSILON, (
                    f"queue {name} {r}: non-preemptible work over deserved quota"
                )
    for node in cluster.nodes:
        cpu = sum(p.spec.cpu for j in running for p in j.placements if p.node is node)
        assert cpu <= node.cpu + EPSILON, f"node {node.name} CPU over-committed"
        assert abs(node.free_cpu - (node.cpu - cpu)) < 1e-6, f"node {node.name} CPU bookkeeping"
        whole = [0] * node.gpus
        shared = [0.0] * node.gpus
        for j in running:
            for p in j.placements:
                if p.node is not node:
                    continue
                for d in p.devices:
                    if p.spec.fraction > 0:
                        shared[d] += p.spec.fraction
                    else:
                        whole[d] += 1
        for d in range(node.gpus):
            assert whole[d] <= 1, f"node {node.name} GPU {d} held whole by {whole[d]} pods"
            assert not (whole[d] and shared[d]), f"node {node.name} GPU {d} both whole and shared"
            assert shared[d] <= 1 + EPSILON, f"node {node.name} GPU {d} fractions sum to {shared[d]:g}"
            assert abs(node.devices[d] - (1.0 - whole[d] - shared[d])) < 1e-6, (
                f"node {node.name} GPU {d} bookkeeping"
            )


@contextmanager
def checked() -> Iterator[None]:
    """Check the invariants after every settled instant of :func:`whatif.kai.simulator.simulate`."""
    original = kai_simulator._settle

    def settle(
        cluster: KaiCluster,
        active: list[Job],
        now: float,
        out: Outcome,
        finishes: list[tuple[float, int, int]],
    ) -> None:
        try:
            original(cluster, active, now, out, finishes)
        finally:
            check_state(cluster, out.jobs)

    kai_simulator._settle = settle
    try:
        yield
    finally:
        kai_simulator._settle = original


def check_run(outcome: Outcome) -> None:
    """The invariants over the run's events (see the module docstring)."""
    jobs = {j.key: j for j in outcome.jobs}
    running: set[str] = set()
    for ev in outcome.events:
        if ev.event == "admitted":
            assert ev.workload not in running, f"{ev.workload} admitted twice"
            running.add(ev.workload)
        elif ev.event in ("reclaimed", "preempted"):
            assert jobs[ev.workload].preemptible, f"non-preemptible {ev.workload} {ev.event}"
            assert ev.workload in running, f"{ev.workload} {ev.event} while not running"
            running.discard(ev.workload)
        elif ev.event == "finished":
            running.discard(ev.workload)
    assert not running, f"{sorted(running)} still running when the run ended"
    for job in outcome.jobs:
        assert job.state in (FINISHED, PENDING), (job.key, job.state)
        assert job.state != FINISHED or job.first_started is not None, job.key


def run_seed(seed: int) -> bool:
    """True when the run settled; False when it stopped at a reported livelock."""
    rng = random.Random(seed)
    cluster = _cluster(rng)
    trace = _trace(rng, cluster.leaves())
    try:
        with checked():
            outcome = simulate(cluster, trace)
    except NotSettledError as error:
        message = str(error)
        assert "\n" not in message and "livelock" in message and ", session " in message, message
        return False
    check_run(outcome)
    return True


@pytest.mark.parametrize("block", range(4))
def test_random_kai_scenarios_keep_the_invariants(block: int) -> None:
    livelocks = []
    for seed in range(block * SCENARIOS // 4, (block + 1) * SCENARIOS // 4):
        try:
            if not run_seed(seed):
                livelocks.append(seed)
        except AssertionError as error:
            raise AssertionError(f"seed {seed}: {error}") from None
    assert not livelocks, livelocks


def test_a_solved_preemption_starts_the_preemptor_where_the_trial_placed_it() -> None:
    """Regression (seed 79 above livelocked: a victim evicted every session for a preemptor that
    never started).  ``by_pod_solver.go`` ``solve`` / ``handleScenarioSolution`` commit the
    statement of the solved scenario: the preemptor where the simulation allocated it, the
    victims that fitted again pipelined where they were re-allocated (with
    ``allowConsolidatingReclaim``, true by default).  Here the 2-GPU build job needs node0 whole:
    running_job1 moves to node1, running_job0 is evicted, and the preemptor runs on node0."""
    from tests.whatif.kai_cases import BUILD, J, Q, session

    jobs = [
        J("running_job0", "queue0", 1, tasks=["node0"]),
        J("running_job1", "queue0", 1, tasks=["node0"]),
        J("pending_job0", "queue0", 2, BUILD),
    ]
    s = session({"node0": 2, "node1": 1}, [Q("queue0", 10)], jobs)
    s.preempt()
    by_key = {j.key: j for j in s.jobs}
    assert [(a, j.key) for a, j, _ in s.log] == [("preempt", "running_job0"), ("admitted", "pending_job0")]
    assert [p.node.name for p in by_key["pending_job0"].placements] == ["node0"]
    assert [p.node.name for p in by_key["running_job1"].placements] == ["node1"]
    check_state_of_session(s.nodes, s.jobs)


def check_state_of_session(nodes: list[Node], jobs: list[Job]) -> None:
    check_state(KaiCluster({}, nodes, {}), jobs)
