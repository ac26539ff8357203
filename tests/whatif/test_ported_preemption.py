"""Cases ported from Kueue v0.19.2 ``pkg/scheduler/preemption/preemption_test.go`` ``TestPreemption``.

Each case keeps the Go case's name, its ClusterQueues (the test's ``defaultClusterQueues``), its
admitted workloads, the incoming workload and its assignment, and asserts the same preempted
workloads with the same reasons (``InClusterQueue``, ``InCohortReclamation``,
``InCohortReclaimWhileBorrowing``).  Source: kubernetes-sigs/kueue@v0.19.2.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.whatif.kueue_cases import (
    Admitted,
    amount,
    build,
    cluster_queue,
    cohort,
    flavor,
    flavor_quotas,
    group,
    world,
)
from whatif.tree import FlavorResource

LOWER = "LowerPriority"
D = "default"


def _cq(
    name: str, *quotas: tuple[str, ...], cohort: str | None = None, policy: str = "", borrow: bool = False
) -> dict[str, Any]:
    """One ClusterQueue of ``defaultClusterQueues`` with one flavor ``default``.

    ``policy`` is "<withinClusterQueue>/<reclaimWithinCohort>"; ``borrow`` adds borrowWithinCohort
    LowerPriority with maxPriorityThreshold 0, as the ``with_shared_cq`` queues have it.
    """
    within, _, reclaim = policy.partition("/")
    preemption: dict[str, Any] = {}
    if within:
        preemption["withinClusterQueue"] = within
    if reclaim:
        preemption["reclaimWithinCohort"] = reclaim
    if borrow:
        preemption["borrowWithinCohort"] = {"policy": LOWER, "maxPriorityThreshold": 0}
    return cluster_queue(name, group(flavor_quotas(D, *quotas)), cohort=cohort, preemption=preemption or None)


def _defaults() -> list[dict[str, Any]]:
    """``defaultClusterQueues`` of TestPreemption (preemption_test.go)."""
    lower_lower, never_any, never_lower = f"{LOWER}/{LOWER}", "Never/Any", f"Never/{LOWER}"
    return [
        flavor("default"),
        flavor("alpha"),
        flavor("beta"),
        cluster_queue(
            "standalone",
            group(flavor_quotas(D, ("cpu", "6"))),
            group(flavor_quotas("alpha", ("memory", "3Gi")), flavor_quotas("beta", ("memory", "3Gi"))),
            preemption={"withinClusterQueue": LOWER},
        ),
        _cq("c1", ("cpu", "6", "6"), ("memory", "3Gi", "3Gi"), cohort="cohort", policy=lower_lower),
        _cq("c2", ("cpu", "6", "6"), ("memory", "3Gi", "3Gi"), cohort="cohort", policy=never_any),
        _cq("d1", ("cpu", "6"), ("memory", "3Gi"), cohort="cohort-no-limits", policy=lower_lower),
        _cq("d2", ("cpu", "6"), ("memory", "3Gi"), cohort="cohort-no-limits", policy=never_any),
        _cq("l1", ("cpu", "6", "12"), ("memory", "3Gi", "6Gi"), cohort="legion", policy=lower_lower),
        _cq("preventStarvation", ("cpu", "6"), policy="LowerOrNewerEqualPriority"),
        _cq("a_standard", ("cpu", "1", "12"), cohort="with_shared_cq", policy=never_lower, borrow=True),
        _cq("b_standard", ("cpu", "1", "12"), cohort="with_shared_cq", policy=f"{LOWER}/Any", borrow=True),
        _cq("a_best_effort", ("cpu", "1", "12"), cohort="with_shared_cq", policy=never_lower, borrow=True),
        _cq("b_best_effort", ("cpu", "0", "13"), cohort="with_shared_cq", policy=never_lower, borrow=True),
        _cq("shared", ("cpu", "10"), cohort="with_shared_cq"),
        _cq("lend1", ("cpu", "6", "", "4"), cohort="cohort-lend", policy=lower_lower),
        _cq("lend2", ("cpu", "6", "", "2"), cohort="cohort-lend", policy=lower_lower),
        _cq("a", ("cpu", "2"), ("memory", "2"), cohort="cohort-three", policy=f"{LOWER}/Any"),
        _cq("b", ("cpu", "2"), ("memory", "2"), cohort="cohort-three"),
        _cq("c", ("cpu", "2"), ("memory", "2"), cohort="cohort-three"),
    ]


def cpu(q: str) -> dict[FlavorResource, str]:
    return {(D, "cpu"): q}


def ad(name: str, cq: str, q: str, priority: int = 0, **kw: Any) -> Admitted:
    return Admitted(name, cq, cpu(q), priority, **kw)


# name: (admitted, incoming priority, incoming usage {(flavor, resource): q}, resources needing
# preemption, target ClusterQueue, want {victim: reason})
CASES: dict[str, tuple[list[Admitted], int, dict[FlavorResource, str], set[FlavorResource], str, dict[str, str]]] = {
    "preempt lowest priority": (
        [ad("low", "standalone", "2", -1), ad("mid", "standalone", "2"), ad("high", "standalone", "2", 1)],
        1, cpu("2"), {(D, "cpu")}, "standalone", {"low": "InClusterQueue"},
    ),
    "preempt multiple": (
        [ad("low", "standalone", "2", -1), ad("mid", "standalone", "2"), ad("high", "standalone", "2", 1)],
        1, cpu("3"), {(D, "cpu")}, "standalone", {"low": "InClusterQueue", "mid": "InClusterQueue"},
    ),
    "no preemption for low priority": (
        [ad("low", "standalone", "3", -1), ad("mid", "standalone", "3")],
        -1, cpu("1"), {(D, "cpu")}, "standalone", {},
    ),
    "not enough low priority workloads": (
        [ad("low", "standalone", "3", -1), ad("mid", "standalone", "3")],
        0, cpu("4"), {(D, "cpu")}, "standalone", {},
    ),
    "some free quota, preempt low priority": (
        [ad("low", "standalone", "1", -1), ad("mid", "standalone", "1"), ad("high", "standalone", "3", 1)],
        1, cpu("2"), {(D, "cpu")}, "standalone", {"low": "InClusterQueue"},
    ),
    "minimal set excludes low priority": (
        [ad("low", "standalone", "1", -1), ad("mid", "standalone", "2"), ad("high", "standalone", "3", 1)],
        1, cpu("2"), {(D, "cpu")}, "standalone", {"mid": "InClusterQueue"},
    ),
    "only preempt workloads using the chosen flavor": (
        [
            Admitted("low", "standalone", {("alpha", "memory"): "2Gi"}, -1),
            Admitted("mid", "standalone", {("beta", "memory"): "1Gi"}),
            Admitted("high", "standalone", {("beta", "memory"): "1Gi"}, 1),
        ],
        1, {(D, "cpu"): "1", ("beta", "memory"): "2Gi"}, {("beta", "memory")}, "standalone", {"mid": "InClusterQueue"},
    ),
    "reclaim quota from borrower": (
        [ad("c1-low", "c1", "3", -1), ad("c2-mid", "c2", "3"), ad("c2-high", "c2", "6", 1)],
        1, cpu("3"), {(D, "cpu")}, "c1", {"c2-mid": "InCohortReclamation"},
    ),
    "reclaim quota if workload requests 0 resources for a resource at nominal quota": (
        [
            Admitted("c1-low", "c1", {(D, "cpu"): "3", (D, "memory"): "3Gi"}, -1),
            ad("c2-mid", "c2", "3"),
            ad("c2-high", "c2", "6", 1),
        ],
        1, {(D, "cpu"): "3", (D, "memory"): "0"}, {(D, "cpu")}, "c1", {"c2-mid": "InCohortReclamation"},
    ),
    "no workloads borrowing": (
        [ad("c1-high", "c1", "4", 1), ad("c2-low-1", "c2", "4", -1)],
        1, cpu("4"), {(D, "cpu")}, "c1", {},
    ),
    "not enough workloads borrowing": (
        [ad("c1-high", "c1", "4", 1), ad("c2-low-1", "c2", "4", -1), ad("c2-low-2", "c2", "4", -1)],
        1, cpu("4"), {(D, "cpu")}, "c1", {},
    ),
    "preempting locally and borrowing other resources in cohort, without cohort candidates": (
        [ad("c1-low", "c1", "4", -1), ad("c2-low-1", "c2", "4", -1), ad("c2-high-2", "c2", "4", 1)],
        1, {(D, "cpu"): "4", (D, "memory"): "5Gi"}, {(D, "cpu"), (D, "memory")}, "c1", {"c1-low": "InClusterQueue"},
    ),
    "preempting locally and borrowing same resource in cohort": (
        [ad("c1-med", "c1", "4"), ad("c1-low", "c1", "4", -1), ad("c2-low-1", "c2", "4", -1)],
        1, cpu("4"), {(D, "cpu")}, "c1", {"c1-low": "InClusterQueue"},
    ),
    "preempting locally and borrowing same resource in cohort; no borrowing limit in the cohort": (
        [ad("d1-med", "d1", "4"), ad("d1-low", "d1", "4", -1), ad("d2-low-1", "d2", "4", -1)],
        1, cpu("4"), {(D, "cpu")}, "d1", {"d1-low": "InClusterQueue"},
    ),
    "preempting locally and borrowing other resources in cohort, with cohort candidates": (
        [
            ad("c1-med", "c1", "4"),
            ad("c2-low-1", "c2", "5", -1),
            ad("c2-low-2", "c2", "1", -1),
            ad("c2-low-3", "c2", "1", -1),
        ],
        1, {(D, "cpu"): "2", (D, "memory"): "5Gi"}, {(D, "cpu"), (D, "memory")}, "c1", {"c1-med": "InClusterQueue"},
    ),
    "preempting locally and not borrowing same resource in 1-queue cohort": (
        [ad("l1-med", "l1", "4"), ad("l1-low", "l1", "2", -1)],
        1, cpu("4"), {(D, "cpu")}, "l1", {"l1-med": "InClusterQueue"},
    ),
    "do not reclaim borrowed quota from same priority for withinCohort=ReclaimFromLowerPriority": (
        [ad("c1", "c1", "2"), ad("c2-1", "c2", "4"), ad("c2-2", "c2", "4")],
        0, cpu("4"), {(D, "cpu")}, "c1", {},
    ),
    "reclaim borrowed quota from same priority for withinCohort=ReclaimFromAny": (
        [ad("c1-1", "c1", "4"), ad("c1-2", "c1", "4", 1), ad("c2", "c2", "2")],
        0, cpu("4"), {(D, "cpu")}, "c2", {"c1-1": "InCohortReclamation"},
    ),
    "preempt from all ClusterQueues in cohort": (
        [ad("c1-low", "c1", "3", -1), ad("c1-mid", "c1", "2"), ad("c2-low", "c2", "3", -1), ad("c2-mid", "c2", "4")],
        0, cpu("4"), {(D, "cpu")}, "c1", {"c1-low": "InClusterQueue", "c2-low": "InCohortReclamation"},
    ),
    "can't preempt workloads in ClusterQueue for withinClusterQueue=Never": (
        [ad("c2-low", "c2", "3", -1)],
        1, cpu("4"), {(D, "cpu")}, "c2", {},
    ),
    "use BorrowWithinCohort; allow preempting a lower-priority workload from another ClusterQueue while borrowing": (
        [ad("a_best_effort_low", "a_best_effort", "10", -1), ad("b_best_effort_low", "b_best_effort", "1", -1)],
        0, cpu("10"), {(D, "cpu")}, "a_standard", {"a_best_effort_low": "InCohortReclaimWhileBorrowing"},
    ),
    "use BorrowWithinCohort; don't allow preempting a lower-priority workload with priority above MaxPriorityThreshold, if borrowing is required even after the preemption": (
        [ad("b_standard", "b_standard", "10", 1)],
        2, cpu("10"), {(D, "cpu")}, "a_standard", {},
    ),
    "use BorrowWithinCohort; allow preempting a lower-priority workload with priority above MaxPriorityThreshold, if borrowing is not required after the preemption": (
        [ad("b_standard", "b_standard", "13", 1)],
        2, cpu("1"), {(D, "cpu")}, "a_standard", {"b_standard": "InCohortReclamation"},
    ),
    "use BorrowWithinCohort; don't allow for preemption of lower-priority workload from the same ClusterQueue": (
        [ad("a_standard", "a_standard", "13", 1)],
        2, cpu("1"), {(D, "cpu")}, "a_standard", {},
    ),
    "use BorrowWithinCohort; only preempt from CQ if no workloads below threshold and already above nominal": (
        [
            ad("a_standard_1", "a_standard", "10", 1),
            ad("a_standard_2", "a_standard", "1", 1),
            ad("b_standard_1", "b_standard", "1", 1),
            ad("b_standard_2", "b_standard", "1", 2),
        ],
        3, cpu("1"), {(D, "cpu")}, "b_standard", {"b_standard_1": "InClusterQueue"},
    ),
    "use BorrowWithinCohort; preempt from CQ and from other CQs with workloads below threshold": (
        [
            ad("b_standard_high", "b_standard", "10", 2),
            ad("b_standard_mid", "b_standard", "1", 1),
            ad("a_best_effort_low", "a_best_effort", "1", -1),
            ad("a_best_effort_lower", "a_best_effort", "1", -2),
        ],
        2, cpu("2"), {(D, "cpu")}, "b_standard",
        {"a_best_effort_lower": "InCohortReclaimWhileBorrowing", "b_standard_mid": "InClusterQueue"},
    ),
    "reclaim quota from lender": (
        [ad("lend1-low", "lend1", "3", -1), ad("lend2-mid", "lend2", "3"), ad("lend2-high", "lend2", "4", 1)],
        1, cpu("3"), {(D, "cpu")}, "lend1", {"lend2-mid": "InCohortReclamation"},
    ),
    "preempt from all ClusterQueues in cohort-lend": (
        [ad("lend1-low", "lend1", "3", -1), ad("lend1-mid", "lend1", "2"), ad("lend2-low", "lend2", "3", -1), ad("lend2-mid", "lend2", "4")],
        0, cpu("4"), {(D, "cpu")}, "lend1", {"lend1-low": "InClusterQueue", "lend2-low": "InCohortReclamation"},
    ),
    "cannot preempt from other ClusterQueues if exceeds requestable quota including lending limit": (
        [ad("lend2-low", "lend2", "10", -1)],
        0, cpu("9"), {(D, "cpu")}, "lend1", {},
    ),
    "preemptions from cq when target queue is exhausted for the single requested resource": (
        [
            ad("a1", "a", "1", -2), ad("a2", "a", "1", -2), ad("a3", "a", "1", -1),
            ad("b1", "b", "1"), ad("b2", "b", "1"), ad("b3", "b", "1"),
        ],
        0, cpu("2"), {(D, "cpu")}, "a", {"a1": "InClusterQueue", "a2": "InClusterQueue"},
    ),
    "allow preemption from other cluster queues if target cq is not exhausted for the requested resource": (
        [
            ad("a1", "a", "1", -1),
            ad("b1", "b", "1"), ad("b2", "b", "1"), ad("b3", "b", "1"), ad("b4", "b", "1"), ad("b5", "b", "1", -1),
        ],
        0, cpu("2"), {(D, "cpu")}, "a", {"a1": "InClusterQueue", "b5": "InCohortReclamation"},
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CASES))
def test_preemption_targets_match_kueue(name: str) -> None:
    admitted, priority, usage, need, target, want = CASES[name]
    w = world(_defaults(), admitted)
    incoming = w.workload("in", priority)
    incoming.cluster_queue = target
    requests = {fr: amount(q) for fr, q in usage.items()}
    cq = w.cluster.cluster_queues[target]
    before = {n.name: dict(n.usage) for n in [cq.node, *cq.node.ancestors()]}
    got = w.preemptor().targets(incoming, cq, need, requests)
    assert {t.workload.name: t.reason for t in got} == want
    # the search restores the quota tree it explored
    assert {n.name: dict(n.usage) for n in [cq.node, *cq.node.ancestors()]} == before


def test_preempt_newer_workloads_with_the_same_priority() -> None:
    """TestPreemption "preempt newer workloads with the same priority": LowerOrNewerEqualPriority
    preempts the most recently admitted of the newer equal-priority workloads."""
    w = world(_defaults(), [])
    incoming = w.workload("in", 1)  # created first (now - 15s): older than wl2 and wl3
    incoming.cluster_queue = "preventStarvation"
    w.admit(ad("wl1", "preventStarvation", "2", 2))
    w.admit(ad("wl2", "preventStarvation", "2", 1, reserved_at=1.0))
    w.admit(ad("wl3", "preventStarvation", "2", 1, reserved_at=0.0))
    cq = w.cluster.cluster_queues["preventStarvation"]
    got = w.preemptor().targets(incoming, cq, {(D, "cpu")}, {(D, "cpu"): amount("2")})
    assert [(t.workload.name, t.reason) for t in got] == [("wl2", "InClusterQueue")]


def test_long_range_preemption() -> None:
    """TestPreemption "long range preemption": reclaim across sibling cohorts under one root."""
    docs = [
        flavor("default"),
        cluster_queue(
            "cq-left",
            group(flavor_quotas(D, ("cpu", "10"))),
            cohort="cohort-left",
            preemption={"reclaimWithinCohort": "Any"},
        ),
        cluster_queue("cq-right", group(flavor_quotas(D, ("cpu", "0"))), cohort="cohort-right"),
        cohort("cohort-left", "root"),
        cohort("cohort-right", "root"),
    ]
    w = world(docs, [ad("to-be-preempted", "cq-right", "5")])
    incoming = w.workload("in", 0)
    incoming.cluster_queue = "cq-left"
    cq = w.cluster.cluster_queues["cq-left"]
    got = w.preemptor().targets(incoming, cq, {(D, "cpu")}, {(D, "cpu"): amount("8")})
    assert [(t.workload.name, t.reason) for t in got] == [("to-be-preempted", "InCohortReclamation")]


def test_build_rejects_nothing_for_the_default_queues() -> None:
    assert sorted(build(_defaults()).cluster_queues)[:3] == ["a", "a_best_effort", "a_standard"]
