"""Kueue v0.19.2's scheduling cycle across cycles: flavor-scan resumption and sticky preemptors.

Upstream (kubernetes-sigs/kueue@v0.19.2):
- ``pkg/scheduler/scheduler_test.go`` ``TestLastAssignmentOutdated`` (gate
  ``FlavorFungibilityPreserveScanProgress``, on by default in v0.19.2: ``pkg/features/
  kube_features.go``) -- ported case by case below;
- ``pkg/scheduler/flavorassigner/flavorassigner.go`` ``findFlavorForPodSets`` (the scan starts
  at ``NextFlavorToTryForPodSetResource``; ``TriedFlavorIdx`` is the last flavor examined, -1
  after the group's last) and ``pkg/scheduler/scheduler.go`` ``markSkipped`` (with the gate the
  progress survives a skip);
- ``pkg/cache/queue/cluster_queue.go`` ``requeueIfNotPresent`` (``RequeueReasonPendingPreemption``
  makes the workload the sticky preemptor of a BestEffortFIFO queue) and ``baseCompareFunc``
  (the sticky workload sorts first, before higher priorities).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.whatif.kueue_cases import World, build, cluster_queue, flavor, flavor_quotas, group, pod_set
from tests.whatif.test_ported_scheduler import Cycle
from whatif.flavors import FlavorAssigner
from whatif.queues import QueueManager
from whatif.scheduler import Scheduler
from whatif.tree import remove_all
from whatif.workload import Workload

# name: (current cycle, recorded cycle, current generation, recorded generation, outdated)
OUTDATED = {
    "AllocatableResourceGeneration increased": (5, 1, 1, 0, True),
    "AllocatableResourceGeneration not increased": (5, 1, 0, 0, False),
    "assignment from the immediately preceding cycle survives a generation bump": (5, 4, 1, 0, False),
    "assignment from the current cycle survives a generation bump": (5, 5, 1, 0, False),
    "assignment older than one cycle falls back to the generation check": (5, 3, 1, 0, True),
}


@pytest.mark.parametrize("name", sorted(OUTDATED))
def test_last_assignment_outdated(name: str) -> None:
    current, recorded, generation, recorded_generation, want = OUTDATED[name]
    c = build([flavor("f1"), cluster_queue("cq", group(flavor_quotas("f1", ("cpu", "1"))))])
    cq = c.cluster_queues["cq"]
    sched = Scheduler(c, QueueManager(c), World(c).preemptor(), set(), lambda wl, reason: None)
    sched.cycles = current
    cq.node.allocatable_generation = generation  # the ClusterQueue's own counter (snapshot.go)
    wl = Workload("ns", "w", "", 0, 0.0, 0.0, 1, (), cluster_queue="cq")
    wl.last_scan, wl.last_scan_cycle, wl.last_scan_generation = {(0, "cpu"): 0}, recorded, recorded_generation
    assert sched._scan_outdated(wl, cq) is want


def _two_flavors(*queues: dict[str, Any]) -> list[dict[str, Any]]:
    return [flavor("f1"), flavor("f2"), *queues]


def test_the_scan_resumes_after_the_last_tried_flavor() -> None:
    """findFlavorForPodSets: a fresh scan stops at f1 (Fit) and records index 0 (flavors left);
    resumed, it starts at f2 and records -1 (the group's last flavor: start over next time)."""
    rg = group(flavor_quotas("f1", ("cpu", "4")), flavor_quotas("f2", ("cpu", "4")))
    c = build(_two_flavors(cluster_queue("cq", rg)))
    cq = c.cluster_queues["cq"]
    wl = Workload("ns", "w", "", 0, 0.0, 0.0, 1, (pod_set("main", cpu="1"),), cluster_queue="cq")
    assigner = FlavorAssigner(c, World(c).preemptor())
    fresh = assigner.assign(wl, cq)
    assert fresh.flavors() == {"main": {"cpu": "f1"}} and fresh.tried == {(0, "cpu"): 0}
    assert fresh.pending_flavors()
    resumed = assigner.assign(wl, cq, fresh.tried)
    assert resumed.flavors() == {"main": {"cpu": "f2"}} and resumed.tried == {(0, "cpu"): -1}
    assert not resumed.pending_flavors()


def test_a_skipped_workload_resumes_its_scan_in_the_next_cycle() -> None:
    """Cycle 1: a (older) and b both fit f1 only by borrowing from the lender; a takes it and b
    is skipped ("no longer fits"), keeping its progress (markSkipped with the gate).  a's quota
    is released before cycle 2 (the generation moves, but the scan is from the preceding cycle),
    so b resumes at f2 although f1 is free again: the placement a rescan would not choose."""
    rg0 = group(flavor_quotas("f1", ("cpu", "0")), flavor_quotas("f2", ("cpu", "0")))
    lender = group(flavor_quotas("f1", ("cpu", "10")), flavor_quotas("f2", ("cpu", "10")))
    c = Cycle(
        _two_flavors(
            cluster_queue("cq1", rg0, cohort="co"),
            cluster_queue("cq2", rg0, cohort="co"),
            cluster_queue("lender", lender, cohort="co"),
        )
    )
    c.pending("ns/a", "cq1", pod_set("main", cpu="10"))
    c.pending("ns/b", "cq2", pod_set("main", cpu="10"))
    sched = Scheduler(c.world.cluster, c.queues, c.world.preemptor(), set(), lambda wl, reason: None)
    first = sched.cycle()
    assert [e.workload.name for e in first.admitted] == ["a"]
    a = first.admitted[0]
    remove_all(a.cq.node, a.assignment.usage)  # a finishes: f1 is free again
    a.cq.node.root().generation += 1
    second = sched.cycle()
    assert [(e.workload.name, e.assignment.flavors()) for e in second.admitted] == [
        ("b", {"main": {"cpu": "f2"}})
    ]


def test_a_preemptor_stays_the_head_of_its_best_effort_fifo_queue() -> None:
    """Cycle 1: p (priority 10) preempts low.  Before cycle 2 a higher-priority x (20) arrives;
    p is the sticky head, so p -- not x -- is admitted into the freed quota.  Under StrictFIFO
    the preemptor is not sticky and x, first by priority, takes it."""
    for strategy, want in (("BestEffortFIFO", "p"), ("StrictFIFO", "x")):
        c = Cycle(
            [
                flavor("f1"),
                cluster_queue(
                    "cq",
                    group(flavor_quotas("f1", ("cpu", "4"))),
                    preemption={"withinClusterQueue": "LowerPriority"},
                    strategy=strategy,
                ),
            ]
        )
        c.running("ns/low", "cq", {("f1", "cpu"): "4"})
        c.pending("ns/p", "cq", pod_set("main", cpu="4"), priority=10)
        sched = Scheduler(c.world.cluster, c.queues, c.world.preemptor(), set(), lambda wl, reason: None)
        first = sched.cycle()
        assert [(v.name, by.name) for v, by, _ in first.evictions] == [("low", "p")]
        low = c.world.running["cq"].pop("ns/low")
        c.world.preemptor().remove_workload(low)  # the victim's quota is released
        c.pending("ns/x", "cq", pod_set("main", cpu="4"), priority=20)
        second = sched.cycle()
        assert [e.workload.name for e in second.admitted] == [want], strategy
