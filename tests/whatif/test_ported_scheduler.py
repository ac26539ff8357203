"""Cases ported from Kueue v0.19.2 ``pkg/scheduler/scheduler_test.go`` ``TestSchedule``
(kubernetes-sigs/kueue@v0.19.2).

Like the Go test, each case runs *one* scheduling cycle over the test's ClusterQueues (``sales``
StrictFIFO without a cohort; ``eng-alpha`` / ``eng-beta`` in cohort ``eng``) and asserts the
admissions with their flavors, the preempted workloads with their reasons, and what is left in
the queues.  Namespace selectors are not modelled; every case's namespaces match them.
"""

from __future__ import annotations

from typing import Any

from tests.whatif.kueue_cases import (
    World,
    amount,
    build,
    cluster_queue,
    flavor,
    flavor_quotas,
    group,
    pod_set,
)
from whatif.queues import QueueManager
from whatif.scheduler import Scheduler
from whatif.tree import add_all
from whatif.workload import ADMITTED, PodSet, Workload

ANY_LOWER = {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"}


def _fixture() -> list[dict[str, Any]]:
    return [
        *(flavor(n) for n in ("default", "on-demand", "spot", "model-a")),
        # The Go fixture also sets ``borrowingLimit: 0`` on sales, which has no cohort: Kueue's
        # webhook (and the CRD's CEL) reject that object, and the what-if refuses it
        # (``whatif.refusal``); without a cohort the limit changes nothing, so it is left out.
        cluster_queue("sales", group(flavor_quotas("default", ("cpu", "50"))), strategy="StrictFIFO"),
        cluster_queue(
            "eng-alpha",
            group(
                flavor_quotas("on-demand", ("cpu", "50", "50")), flavor_quotas("spot", ("cpu", "100", "0"))
            ),
            cohort="eng",
            strategy="StrictFIFO",
        ),
        cluster_queue(
            "eng-beta",
            group(
                flavor_quotas("on-demand", ("cpu", "50", "10")), flavor_quotas("spot", ("cpu", "0", "100"))
            ),
            group(flavor_quotas("model-a", ("example.com/gpu", "20", "0"))),
            cohort="eng",
            strategy="StrictFIFO",
            preemption=ANY_LOWER,
        ),
    ]


def _three_in_cohort() -> list[dict[str, Any]]:
    rg = group(flavor_quotas("default", ("r1", "10", "10"), ("r2", "10", "10")))
    return [
        flavor("default"),
        *(cluster_queue(n, rg, cohort="co", preemption=ANY_LOWER) for n in ("cq1", "cq2", "cq3")),
    ]


class Cycle:
    def __init__(self, docs: list[dict[str, Any]]) -> None:
        self.world = World(build(docs))
        self.queues = QueueManager(self.world.cluster)

    def running(self, key: str, cq: str, usage: dict[tuple[str, str], str], priority: int = 0) -> None:
        ns, name = key.split("/")
        self.world.seq += 1
        wl = Workload(ns, name, "", priority, 0.0, 0.0, self.world.seq, (), cluster_queue=cq, state=ADMITTED)
        wl.usage = {fr: amount(q) for fr, q in usage.items()}
        wl.reserved_at = 0.0
        add_all(self.world.cluster.cluster_queues[cq].node, wl.usage)
        self.world.running.setdefault(cq, {})[wl.key] = wl

    def pending(self, key: str, cq: str, *pod_sets: PodSet, priority: int = 0) -> None:
        ns, name = key.split("/")
        self.world.seq += 1
        self.queues.push(
            Workload(ns, name, "", priority, 0.0, 0.0, self.world.seq, pod_sets, cluster_queue=cq)
        )

    def run(
        self,
    ) -> tuple[dict[str, tuple[str, dict[str, dict[str, str]]]], dict[str, str], dict[str, list[str]]]:
        sched = Scheduler(
            self.world.cluster, self.queues, self.world.preemptor(), set(), lambda wl, reason: None
        )
        out = sched.cycle()
        admitted = {e.workload.key: (e.cq.name, e.assignment.flavors()) for e in out.admitted}
        preempted = {v.key: reason for v, _, reason in out.evictions}
        left = {n: sorted(w.key for _, _, w in h) for n, h in self.queues.heaps.items() if h}
        return admitted, preempted, left


def cpu_pods(count: int) -> PodSet:
    return pod_set("one", count, cpu="1")


def test_single_cluster_queue_full() -> None:
    c = Cycle(_fixture())
    c.running("sales/assigned", "sales", {("default", "cpu"): "40"})
    c.pending("sales/new", "sales", cpu_pods(11))
    admitted, preempted, left = c.run()
    assert (admitted, preempted, left) == ({}, {}, {"sales": ["sales/new"]})


def test_admit_in_different_cohorts() -> None:
    c = Cycle(_fixture())
    c.pending("sales/new", "sales", cpu_pods(1))
    c.pending("eng-alpha/new", "eng-alpha", cpu_pods(51))  # will borrow
    admitted, _, left = c.run()
    assert admitted == {
        "sales/new": ("sales", {"one": {"cpu": "default"}}),
        "eng-alpha/new": ("eng-alpha", {"one": {"cpu": "on-demand"}}),
    }
    assert left == {}


def test_admit_in_same_cohort_with_no_borrowing() -> None:
    c = Cycle(_fixture())
    c.pending("eng-alpha/new", "eng-alpha", cpu_pods(40))
    c.pending("eng-beta/new", "eng-beta", cpu_pods(40))
    admitted, _, _ = c.run()
    assert admitted == {
        "eng-alpha/new": ("eng-alpha", {"one": {"cpu": "on-demand"}}),
        "eng-beta/new": ("eng-beta", {"one": {"cpu": "on-demand"}}),
    }


def test_cannot_borrow_if_cohort_was_assigned_and_would_result_in_overadmission() -> None:
    c = Cycle(_fixture())
    c.pending("eng-alpha/new", "eng-alpha", cpu_pods(45))
    c.pending("eng-beta/new", "eng-beta", cpu_pods(56))
    admitted, _, left = c.run()
    assert admitted == {"eng-alpha/new": ("eng-alpha", {"one": {"cpu": "on-demand"}})}
    assert left == {"eng-beta": ["eng-beta/new"]}


def test_can_borrow_if_cohort_was_assigned_and_will_not_result_in_overadmission() -> None:
    c = Cycle(_fixture())
    c.pending("eng-alpha/new", "eng-alpha", cpu_pods(45))
    c.pending("eng-beta/new", "eng-beta", cpu_pods(55))
    admitted, _, _ = c.run()
    assert admitted == {
        "eng-alpha/new": ("eng-alpha", {"one": {"cpu": "on-demand"}}),
        "eng-beta/new": ("eng-beta", {"one": {"cpu": "on-demand"}}),
    }


def test_preempt_workloads_in_cluster_queue_and_cohort() -> None:
    c = Cycle(_fixture())
    c.pending("eng-beta/preemptor", "eng-beta", pod_set(cpu="20"))
    c.running("eng-alpha/use-all-spot", "eng-alpha", {("spot", "cpu"): "100"})
    c.running("eng-beta/low-1", "eng-beta", {("on-demand", "cpu"): "30"}, priority=-1)
    c.running("eng-beta/low-2", "eng-beta", {("on-demand", "cpu"): "10"}, priority=-2)
    c.running("eng-alpha/borrower", "eng-alpha", {("on-demand", "cpu"): "60"})
    admitted, preempted, left = c.run()
    assert admitted == {}
    assert preempted == {"eng-alpha/borrower": "InCohortReclamation", "eng-beta/low-2": "InClusterQueue"}
    assert left == {"eng-beta": ["eng-beta/preemptor"]}  # admitted by a later cycle


def test_two_workloads_can_borrow_the_same_resources_if_fits_in_the_cohort_quota() -> None:
    c = Cycle(_three_in_cohort())
    c.pending("sales/wl1", "cq1", pod_set(r1="16"), priority=-1)
    c.pending("sales/wl2", "cq2", pod_set(r1="14"), priority=-2)
    admitted, _, _ = c.run()
    assert admitted == {
        "sales/wl1": ("cq1", {"main": {"r1": "default"}}),
        "sales/wl2": ("cq2", {"main": {"r1": "default"}}),
    }


def test_only_one_workload_can_borrow_if_cohort_quota_cannot_fit() -> None:
    c = Cycle(_three_in_cohort())
    c.pending("sales/wl1", "cq1", pod_set(r1="16"), priority=-1)
    c.pending("sales/wl2", "cq2", pod_set(r1="16"), priority=-2)
    admitted, _, left = c.run()
    assert admitted == {"sales/wl1": ("cq1", {"main": {"r1": "default"}})}
    assert left == {"cq2": ["sales/wl2"]}  # skipped after nomination: requeued at once
