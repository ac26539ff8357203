"""The what-if in time, as Kueue v0.19.2 runs it (issue 46).

Each test cites the upstream code it follows (kubernetes-sigs/kueue@v0.19.2) and, where Kueue
has a test of its own for the rule, the Go test and case it is ported or derived from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.whatif.kueue_cases import (
    build,
    cluster_queue,
    cohort,
    fair_sharing,
    flavor,
    flavor_quotas,
    group,
    local_queue,
)
from tests.whatif.test_ported_flavorassigner import FakeOracle
from tests.whatif.test_simulator import brief, cluster, run, wl
from whatif.cli import main
from whatif.cluster import Cluster
from whatif.errors import NotSettledError, WhatIfError
from whatif.flavors import FlavorAssigner
from whatif.queues import QueueManager
from whatif.requeuer import Requeuer
from whatif.results import document
from whatif.scheduler import Scheduler
from whatif.simulator import REQUEUE_BATCH_SECONDS, Simulation
from whatif.trace import parse_trace
from whatif.tree import add_all
from whatif.workload import PodSet, Workload

GPU = "nvidia.com/gpu"


def _queued(name: str, cq: str, seq: int) -> Workload:
    w = Workload("default", name, "q", 0, 0.0, 60.0, seq, (PodSet("main", 1, {"cpu": 1000}),))
    w.cluster_queue = cq
    return w


def _tree(*cqs: tuple[str, str]) -> Cluster:
    """``TestQueueInadmissibleWorkloads``'s trees: root -> child1, child2; ClusterQueues under them."""
    docs: list[dict[str, Any]] = [
        flavor("default"),
        cohort("root"),
        cohort("child1", "root"),
        cohort("child2", "root"),
    ]
    for name, parent in cqs:
        docs.append(cluster_queue(name, group(flavor_quotas("default", ("cpu", "1"))), cohort=parent))
    docs.append(cluster_queue("lonely", group(flavor_quotas("default", ("cpu", "1")))))
    return build(docs)


@pytest.mark.parametrize(
    "cqs, parked",
    [
        # "deduplication with shared root": cq1 and cq2 under one root, one move for both
        ((("cq1", "child1"), ("cq2", "child2")), {"cq1": ["a"], "cq2": ["b"]}),
        # "cohort subtree aggregates count across multiple cluster queues": 4 workloads moved
        (
            (("cq1", "child1"), ("cq2", "child1"), ("cq3", "child2")),
            {"cq1": ["a"], "cq2": ["b"], "cq3": ["c", "d"]},
        ),
    ],
)
def test_one_batch_per_root_cohort_moves_every_parked_workload_of_the_tree(
    cqs: tuple[tuple[str, str], ...], parked: dict[str, list[str]]
) -> None:
    """Ported from ``pkg/cache/queue/manager_test.go`` ``TestQueueInadmissibleWorkloads`` (cases
    above), in time: ``notifyRetryInadmissibleWithoutLock`` notifies the root Cohort's request,
    ``workqueueRequeuer.notifyCohort`` adds it after ``requeueBatchPeriod`` (1 s) and a second
    notification while it waits keeps the first's ready time; ``requeueWorkloadsCohort`` then
    moves the whole tree's parked workloads.  A ClusterQueue without cohort has its own request."""
    queues = QueueManager(_tree(*cqs))
    seq = 0
    for cq, names in parked.items():
        for name in names:
            seq += 1
            queues.park(_queued(name, cq, seq))
    requeuer = Requeuer(queues, REQUEUE_BATCH_SECONDS)
    requeuer.notify(cqs[0][0], 10.0)
    requeuer.notify(cqs[-1][0], 10.5)  # same root: served by the request already waiting
    requeuer.notify("lonely", 10.5)  # no cohort: a request of its own
    assert requeuer.waiting(10.5) == ((0.5, "root"), (1.0, "lonely"))
    assert requeuer.flush(10.99) == 0 and all(queues.inadmissible[cq] for cq in parked)
    assert requeuer.flush(11.0) == sum(len(names) for names in parked.values())
    assert not any(queues.inadmissible.values())
    heads = sorted(w.name for w in queues.heads(1))
    assert heads == sorted(names[0] for names in parked.values())
    assert requeuer.next_time() == 11.5


def _two_queues(strategy: str | None = None) -> Cluster:
    """Cohort ``c``: ``x`` (2 GPUs) and ``y`` (2 GPUs, reclaims what ``x`` borrows)."""
    return build(
        [
            flavor("l4"),
            cluster_queue("x", group(flavor_quotas("l4", (GPU, "2"))), cohort="c", strategy=strategy),
            cluster_queue(
                "y",
                group(flavor_quotas("l4", (GPU, "2"))),
                cohort="c",
                preemption={"reclaimWithinCohort": "Any"},
            ),
            local_queue("team-a", "user-queue", "x"),
            local_queue("team-b", "user-queue", "y"),
        ]
    )


def _run(c: Cluster, workloads: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    return document(c, Simulation(c, parse_trace({"workloads": workloads}), **kw).run())


def _times(doc: dict[str, Any], name: str, event: str = "admitted") -> list[float]:
    return [t for t, n, e, _ in brief(doc) if n == name and e == event]


def test_a_parked_workload_comes_back_one_batch_after_the_release() -> None:
    """``workload_controller.go`` ``Update`` (a finished workload) ->
    ``QueueAssociatedInadmissibleWorkloadsAfter`` -> ``workqueueRequeuer.notifyClusterQueue``:
    ``AddAfter(requeueBatchPeriod)``.  ``big`` (parked at 1) is back in its heap at 101, one
    second after ``first`` finished; ``late``, arriving at 100.5, is not parked, is nominated at
    once and takes half the freed quota, so ``big`` is parked again and admitted one batch after
    ``late`` finishes.  The instant view (``requeue_batch=0``, or the trace's
    ``requeueBatchSeconds: 0``) moved ``big`` back at 100, before ``late`` arrived."""
    workloads = [wl("first", 0, 100, gpus="2"), wl("big", 1, 10, gpus="2"), wl("late", 100.5, 10)]
    kueue = run(cluster("2"), workloads)
    assert _times(kueue, "late") == [100.5]
    assert _times(kueue, "big") == [111.5]
    instant = run(cluster("2"), workloads, requeue_batch=0)
    assert _times(instant, "big") == [100]
    assert _times(instant, "late") == [110]
    by_trace_key = cluster("2")
    trace = parse_trace({"requeueBatchSeconds": 0, "workloads": workloads})
    assert document(by_trace_key, Simulation(by_trace_key, trace).run())["events"] == instant["events"]


def test_one_batch_serves_every_release_of_its_second() -> None:
    """The delaying queue keeps one entry per item at its earliest ready time: releases at 100
    and 100.5 are both served by the batch due at 101 (not a timer restarted to 101.5)."""
    workloads = [wl("a", 0, 100), wl("b", 0, 100.5), wl("pair", 1, 10, gpus="2")]
    assert _times(run(cluster("2"), workloads), "pair") == [101]


def test_a_victim_is_requeued_at_once_behind_nothing_but_the_sticky_preemptor() -> None:
    """``workload_controller.go`` ``Update``, case ``FromQuotaReservedOrAdmittedToPending``: the
    released victim goes straight back to its heap (``AddOrUpdateWorkloadWithoutLock``), ordered
    by ``cluster_queue.go`` ``baseCompareFunc`` (priority before age).  ``v`` (priority 10,
    3 GPUs) is reclaimed by ``p`` at 1 with no eviction delay; back at once in StrictFIFO ``x``
    it heads ``w`` (priority 0) and, not fitting while ``p`` runs, blocks it: ``w`` waits for
    ``v`` to run and finish.  The instant view requeued the victim only once the instant had
    settled, so ``w`` took the freed quota at 1."""
    workloads = [
        wl("v", 0, 1000, gpus="3", priority=10),
        wl("w", 0.5, 50, gpus="2"),
        wl("p", 1, 100, gpus="2", namespace="team-b"),
    ]
    kueue = _run(_two_queues("StrictFIFO"), workloads)
    assert [e for e in brief(kueue) if e[1] == "v"][:2] == [
        (0, "v", "admitted", ""),
        (1, "v", "preempted", "p"),
    ]
    assert _times(kueue, "p") == [1]
    assert _times(kueue, "v") == [0, 101]
    assert _times(kueue, "w") == [1101]
    instant = _run(_two_queues("StrictFIFO"), workloads, requeue_batch=0)
    assert _times(instant, "w") == [1]
    assert _times(instant, "v") == [0, 101]


def _loop_docs() -> list[dict[str, Any]]:
    """Scenario 362 of ``test_invariants``' generator: two StrictFIFO ClusterQueues of one cohort
    under fair sharing (default strategies), ``cq0`` of weight 0, two flavors of ``cpu`` and
    ``gpu`` with borrowing and lending limits, ``MayStopSearch`` on both."""
    within = "LowerOrNewerEqualPriority"
    stop = {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "MayStopSearch"}
    return [
        flavor("f1"),
        flavor("f2"),
        cluster_queue(
            "cq0",
            group(
                flavor_quotas("f1", ("cpu", "4", "2", "4"), ("gpu", "5")),
                flavor_quotas("f2", ("cpu", "2", "4"), ("gpu", "3", "1")),
            ),
            cohort="co",
            preemption={"withinClusterQueue": within, "reclaimWithinCohort": "Any"},
            fungibility=stop,
            strategy="StrictFIFO",
            weight="0",
        ),
        cluster_queue(
            "cq1",
            group(
                flavor_quotas("f1", ("cpu", "1"), ("gpu", "6", "0", "0")),
                flavor_quotas("f2", ("cpu", "1", "4", "1"), ("gpu", "4", "0", "1")),
            ),
            cohort="co",
            preemption={"withinClusterQueue": within, "reclaimWithinCohort": "LowerPriority"},
            fungibility=stop,
            strategy="StrictFIFO",
        ),
        local_queue("ns", "cq0", "cq0"),
        local_queue("ns", "cq1", "cq1"),
        fair_sharing(),
    ]


def _w(name: str, queue: str, priority: int, submit: float, *pod_sets: Any) -> dict[str, Any]:
    sets = [{"name": f"ps{i}", "count": n, "requests": r} for i, (n, r) in enumerate(pod_sets)]
    return {"name": name, "namespace": "ns", "queue": queue, "priority": priority, "submit": submit,
            "duration": 100_000, "podSets": sets}  # fmt: skip


# ``b`` evicts ``a`` at 1; at ``a``'s release (11) ``b`` is admitted and ``a``, still its
# StrictFIFO queue's head, evicts ``b``; at each release of ``b`` (21, 31, ...) ``b`` is admitted
# again first and ``a`` evicts it again: every 10 s, for ever
LOOP = [
    _w("a", "cq0", 0, 0, (2, {"cpu": "2", "gpu": "1"}), (1, {"cpu": "1", "gpu": "0"})),
    _w("b", "cq1", 5, 1, (3, {"cpu": "0", "gpu": "0"}), (2, {"cpu": "1", "gpu": "2"})),
]


def test_a_livelock_over_time_ends_with_the_workloads_named() -> None:
    """Issue 46: with ``evictionDelaySeconds: 10`` two workloads that displace each other every
    10 s made the what-if run for ever; the settled state repeating across instants (times
    relative to now) is reported as a livelock (``whatif.recurrence``) one period after it
    starts, naming the preemptions of the period."""
    c = build(_loop_docs())
    with pytest.raises(NotSettledError) as raised:
        Simulation(c, parse_trace({"workloads": LOOP}), eviction_delay=10).run()
    message = str(raised.value)
    assert message.startswith("time 21, scheduling cycle ")
    assert "livelock over time: the state repeats the state at time 11 every 10 s" in message
    assert "(ns/a preempted ns/b)" in message
    sim = Simulation(build(_loop_docs()), parse_trace({"workloads": LOOP}), eviction_delay=10)
    with pytest.raises(NotSettledError):
        sim.run()
    assert [(e.time, e.workload, e.event, e.by) for e in sim.events if e.event == "preempted"] == [
        (1, "ns/a", "preempted", "ns/b"),
        (11, "ns/b", "preempted", "ns/a"),
        (21, "ns/b", "preempted", "ns/a"),
    ]


def test_the_two_workload_input_exits_3_naming_the_workloads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI on that two-workload input: exit 3 and one line naming the workloads."""
    manifests = tmp_path / "objects.yaml"
    manifests.write_text(yaml.safe_dump_all(_loop_docs()))
    trace = tmp_path / "trace.yaml"
    trace.write_text(yaml.safe_dump({"evictionDelaySeconds": 10, "workloads": LOOP}))
    code = main(["--manifests", str(manifests), "--trace", str(trace)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 3
    assert len(err) == 1 and "livelock over time" in err[0] and "(ns/a preempted ns/b)" in err[0]


def test_no_cycle_number_is_spent_while_every_heap_is_empty() -> None:
    """``scheduler.go`` ``schedule``: ``schedulingCycle++`` then ``Heads``, which blocks while the
    heaps are empty, so the next cycle that finds a head has the next number."""
    c = _two_queues()
    queues = QueueManager(c)
    scheduler = Scheduler(
        c, queues, Simulation(c, parse_trace({"workloads": []})).preemptor, set(), lambda w, r: None
    )
    assert not scheduler.cycle().admitted and scheduler.cycles == 0
    scheduler.idle_until_next_instant()  # nothing in a heap: Kueue blocked, no cycles ran
    assert scheduler.cycles == 0


def _pob_docs(preference: str) -> list[dict[str, Any]]:
    """``test-clusterqueue``: flavor ``one`` with 4 CPUs and no GPUs of its own, borrowing GPUs
    from ``secondary`` in its cohort; ``preference`` is its flavorFungibility preference."""
    return [
        flavor("one"),
        cluster_queue(
            "test-clusterqueue",
            group(flavor_quotas("one", ("cpu", "4"), (GPU, "0"))),
            cohort="test-cohort",
            preemption={"withinClusterQueue": "LowerPriority"},
            fungibility={
                "whenCanBorrow": "TryNextFlavor",
                "whenCanPreempt": "TryNextFlavor",
                "preference": preference,
            },
        ),
        cluster_queue(
            "secondary", group(flavor_quotas("one", ("cpu", "0"), (GPU, "4"))), cohort="test-cohort"
        ),
        local_queue("team-a", "user-queue", "test-clusterqueue"),
    ]


@pytest.mark.parametrize(
    "preference, mode", [("PreemptionOverBorrowing", "Fit"), ("BorrowingOverPreemption", "Preempt")]
)
def test_preemption_over_borrowing_ranks_a_preempting_flavor_fit_when_another_resource_borrows(
    preference: str, mode: str
) -> None:
    """Derived from ``flavorassigner_test.go`` ``TestAssignFlavors`` (its fake oracle: Preempt,
    borrowing 0).  In one flavor ``cpu`` needs preemption within nominal quota (borrowing level
    0) and the GPU fits by borrowing (level 1).  ``findFlavorForPodSets`` keeps the worst mode by
    ``isPreferred``: under ``PreemptionOverBorrowing`` the borrowing level decides first, so the
    flavor's representative mode is (fit, 1), the status is nil and
    ``PodSetAssignment.RepresentativeMode`` says Fit -- with ``cpu`` still assigned in Preempt
    mode.  Under ``BorrowingOverPreemption`` (the default) it is Preempt."""
    c = build(_pob_docs(preference))
    cq = c.cluster_queues["test-clusterqueue"]
    add_all(cq.node, {("one", "cpu"): 4000})
    w = Workload("ns", "p", "", 0, 0.0, 0.0, 1, (PodSet("main", 1, {"cpu": 2000, GPU: 1000}),))
    got = FlavorAssigner(c, FakeOracle()).assign(w, cq)
    assert got.mode == mode
    assert got.flavors() == {"main": {"cpu": "one", GPU: "one"}}
    assert got.pod_sets["main"]["cpu"].mode == "Preempt" and got.pod_sets["main"][GPU].mode == "Fit"
    assert got.borrowing == 1


def test_preemption_over_borrowing_never_preempts_for_such_a_pod_set() -> None:
    """``scheduler.go`` ``processEntry`` on that Fit entry: ``fits`` fails (the CPUs are in use),
    so it is skipped ("no longer fits") and requeued at once, never preempting: ``p`` waits for
    ``v`` to finish.  With the default preference ``p`` preempts ``v`` at 10."""

    def trace() -> Any:
        return parse_trace(
            {
                "workloads": [
                    {**wl("v", 0, 100), "podSets": [{"name": "main", "count": 1, "requests": {"cpu": "4"}}]},
                    {
                        **wl("p", 10, 10, priority=10),
                        "podSets": [{"name": "main", "count": 1, "requests": {"cpu": "2", GPU: "1"}}],
                    },
                ]
            }
        )

    c = build(_pob_docs("PreemptionOverBorrowing"))
    doc = document(c, Simulation(c, trace()).run())
    assert not any(e["event"] == "preempted" for e in doc["events"])
    assert _times(doc, "p") == [100]
    c = build(_pob_docs("BorrowingOverPreemption"))
    doc = document(c, Simulation(c, trace()).run())
    assert (10, "v", "preempted", "p") in brief(doc)
    assert _times(doc, "p") == [10]


def test_a_parked_shape_parks_its_equivalents_until_the_next_batch() -> None:
    """``SchedulingEquivalenceHashing`` (on by default in v0.19.2): ``cluster_queue.go``
    ``requeueIfNotPresent`` -> ``handleInadmissibleHash`` records the shape of a head parked for
    NoFit and ``PushOrUpdate`` parks an arriving workload of that shape at once (BestEffortFIFO)
    until ``queueInadmissibleWorkloads`` clears the shapes.  ``twin`` (the shape of ``big``,
    parked at 1) arrives at 100.5, after ``first`` freed the quota at 100 but before the batch
    at 101: it waits for the batch and, younger than ``big``, loses to it.  ``other`` (another
    priority: another shape) arriving then is nominated at once."""
    base = [wl("first", 0, 100, gpus="2"), wl("big", 1, 10, gpus="2")]
    doc = run(cluster("2"), [*base, wl("twin", 100.5, 10, gpus="2")])
    assert _times(doc, "big") == [101]
    assert _times(doc, "twin") == [112]  # parked again at 101; big ends at 111, batch at 112
    doc = run(cluster("2"), [*base, wl("other", 100.5, 10, gpus="2", priority=1)])
    assert _times(doc, "other") == [100.5]
    assert _times(doc, "big") == [111.5]


def test_a_bad_batch_period_is_one_line_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``requeueBatchSeconds`` / ``--requeue-batch``: a number of seconds >= 0, else one line."""
    with pytest.raises(WhatIfError, match=r"requeueBatchSeconds: got -1, expected a number >= 0"):
        parse_trace({"requeueBatchSeconds": -1, "workloads": []})
    manifests = tmp_path / "objects.yaml"
    manifests.write_text(yaml.safe_dump_all(_loop_docs()))
    trace = tmp_path / "trace.yaml"
    trace.write_text(yaml.safe_dump({"workloads": LOOP[:1]}))
    assert main(["--manifests", str(manifests), "--trace", str(trace), "--requeue-batch", "-1"]) == 2
    assert (
        capsys.readouterr().err.strip()
        == "whatif: --requeue-batch: got -1, expected a number of seconds >= 0"
    )
