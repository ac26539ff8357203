"""Cases ported from Kueue v0.19.2 ``pkg/scheduler/scheduler_fs_test.go``
``TestScheduleForFairSharing`` (kubernetes-sigs/kueue@v0.19.2), fair sharing enabled.

Like the Go test, each case runs *one* scheduling cycle and asserts the admissions with their
flavors, the preempted workloads with their reasons, and what is left in the queues.  The
entries of a cycle come from the fair-sharing tournament (``fair_sharing_iterator.go``).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.whatif.kueue_cases import (
    cluster_queue,
    cohort,
    fair_sharing,
    flavor,
    flavor_quotas,
    group,
    pod_set,
)
from tests.whatif.test_ported_scheduler import Cycle, _fixture, cpu_pods

OD = "on-demand"


def _a_with(weight: str | None = None, cohort_cpu: str = "100") -> list[dict[str, Any]]:
    """Cohort ``A`` with the quota, ClusterQueues ``b`` and ``c`` with 0 CPU (flavor on-demand)."""
    return [
        flavor(OD),
        fair_sharing(),
        cohort("A", None, group(flavor_quotas(OD, ("cpu", cohort_cpu)))),
        *(cluster_queue(n, group(flavor_quotas(OD, ("cpu", "0"))), cohort="A", weight=weight) for n in "bc"),
    ]


def test_schedule_workload_with_lowest_share_first() -> None:
    """ "with fair sharing: schedule workload with lowest share first": eng-beta borrows, so the
    newer eng-alpha workload wins the tournament and the older eng-beta one no longer fits."""
    shared = cluster_queue("eng-shared", group(flavor_quotas(OD, ("cpu", "10", "0"))), cohort="eng")
    c = Cycle([*_fixture(), fair_sharing(), shared])
    c.running("eng-alpha/all_nominal", "eng-alpha", {(OD, "cpu"): "50"})
    c.running("eng-beta/borrowing", "eng-beta", {(OD, "cpu"): "55"})
    c.pending("eng-beta/older_new", "eng-beta", cpu_pods(1))
    c.pending("eng-alpha/new", "eng-alpha", cpu_pods(5))
    admitted, preempted, left = c.run()
    assert admitted == {"eng-alpha/new": ("eng-alpha", {"one": {"cpu": OD}})}
    assert preempted == {}
    assert left == {"eng-beta": ["eng-beta/older_new"]}


def test_schedule_workload_with_lowest_drf_after_admission() -> None:
    """ "fair sharing schedule workload with lowest drf after admission": b (10 used) + 50 -> 600
    per mille; c + 75 -> 750: b1 first, then c1 does not fit."""
    c = Cycle(_a_with())
    c.running("eng-alpha/b0", "b", {(OD, "cpu"): "10"})
    c.pending("eng-alpha/b1", "b", pod_set("one", cpu="50"))
    c.pending("eng-alpha/c1", "c", pod_set("one", cpu="75"))
    admitted, _, left = c.run()
    assert admitted == {"eng-alpha/b1": ("b", {"one": {"cpu": OD}})}
    assert left == {"c": ["eng-alpha/c1"]}


@pytest.mark.parametrize("weight", ["0", "123456789"])
def test_two_queues_with_equal_weight_schedule_the_workload_which_borrows_less(weight: str) -> None:
    """ "fair sharing two queues with weight 0 schedules workload which borrows less" (both shares
    +Inf: CompareDRS falls back to the unweighted ratio) and "... with high weight ...": priority
    9001 does not help b1, whose queue already borrows 4."""
    c = Cycle(_a_with(weight, "8"))
    c.running("eng-alpha/b0", "b", {(OD, "cpu"): "4"})
    c.pending("eng-alpha/b1", "b", pod_set("one", cpu="4"), priority=9001)
    c.pending("eng-alpha/c1", "c", pod_set("one", cpu="4"))
    admitted, _, left = c.run()
    assert admitted == {"eng-alpha/c1": ("c", {"one": {"cpu": OD}})}
    assert left == {"b": ["eng-alpha/b1"]}


def test_schedule_highest_priority_first() -> None:
    """ "fair sharing schedule highest priority first": equal shares, priority 101 beats 99."""
    c = Cycle(_a_with(cohort_cpu="10"))
    c.pending("eng-alpha/b1", "b", pod_set("one", cpu="10"), priority=99)
    c.pending("eng-alpha/c1", "c", pod_set("one", cpu="10"), priority=101)
    admitted, _, left = c.run()
    assert admitted == {"eng-alpha/c1": ("c", {"one": {"cpu": OD}})}
    assert left == {"b": ["eng-alpha/b1"]}


def test_schedule_earliest_timestamp_first() -> None:
    """ "fair sharing schedule earliest timestamp first": equal shares and priorities, c1 older."""
    c = Cycle(_a_with(cohort_cpu="10"))
    c.pending("eng-alpha/c1", "c", pod_set("one", cpu="10"), priority=101)  # created first
    c.pending("eng-alpha/b1", "b", pod_set("one", cpu="10"), priority=101)
    admitted, _, left = c.run()
    assert admitted == {"eng-alpha/c1": ("c", {"one": {"cpu": OD}})}
    assert left == {"b": ["eng-alpha/b1"]}


def test_preempt_workload_from_cluster_queue_with_the_highest_share() -> None:
    """ "with fair sharing: preempt workload from CQ with the highest share": eng-beta is within
    nominal, so it reclaims (FairSharingPreemptWithinNominal): first from eng-alpha (borrowing
    30), then from eng-gamma (borrowing 20 > alpha's 10 left); fill-back keeps both."""
    gamma = cluster_queue("eng-gamma", group(flavor_quotas(OD, ("cpu", "50", "0"))), cohort="eng")
    c = Cycle([*_fixture(), fair_sharing(), gamma])
    c.running("eng-alpha/all_spot", "eng-alpha", {("spot", "cpu"): "100"})
    for i in range(1, 5):
        c.running(f"eng-alpha/alpha{i}", "eng-alpha", {(OD, "cpu"): "20"})
    for i, q in enumerate(("10", "20", "20", "20"), start=1):
        c.running(f"eng-gamma/gamma{i}", "eng-gamma", {(OD, "cpu"): q})
    c.pending("eng-beta/preemptor", "eng-beta", pod_set("one", cpu="30"))
    admitted, preempted, left = c.run()
    assert admitted == {}
    assert preempted == {"eng-alpha/alpha1": "InCohortReclamation", "eng-gamma/gamma1": "InCohortReclamation"}
    assert left == {"eng-beta": ["eng-beta/preemptor"]}
