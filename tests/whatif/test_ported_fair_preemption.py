"""Cases ported from Kueue v0.19.2 ``pkg/scheduler/preemption/preemption_fair_test.go``
``TestFairPreemptions`` (kubernetes-sigs/kueue@v0.19.2).

Each case keeps the Go case's name, ClusterQueues (``baseCQs``: a, b, c with 3 CPU each and
``preemptible`` with 0 in cohort ``all``, or the case's own), cohorts, fair weights, admitted
workloads (UID = name, as the Go test sets it), the incoming workload and the strategies
(default ``[LessThanOrEqualToFinalShare, LessThanInitialShare]``), and asserts the same preempted
workloads with the same reasons (``InClusterQueue``, ``InCohortReclamation``,
``InCohortFairSharing``).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.whatif.kueue_cases import (
    Admitted,
    amount,
    cluster_queue,
    cohort,
    fair_sharing,
    flavor,
    flavor_quotas,
    group,
    world,
)
from whatif.tree import FlavorResource

D = "default"
CQ, RECLAIM, FAIR = "InClusterQueue", "InCohortReclamation", "InCohortFairSharing"
LOWER_ANY = {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"}
ANY = {"reclaimWithinCohort": "Any"}


def _cq(
    name: str, nominal: str | None, cohort: str, preemption: dict[str, Any] | None = None, **kw: Any
) -> dict[str, Any]:
    groups = [group(flavor_quotas(D, ("cpu", nominal)))] if nominal is not None else []
    return cluster_queue(name, *groups, cohort=cohort, preemption=preemption, **kw)


def _base() -> list[dict[str, Any]]:
    """``baseCQs``: borrowWithinCohort LowerPriority/-3 on a, b, c (ignored under fair sharing)."""
    p = {**LOWER_ANY, "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": -3}}
    return [_cq(n, "3", "all", p) for n in "abc"] + [_cq("preemptible", "0", "all")]


def _weighted(weights: dict[str, str], names: str = "abc") -> list[dict[str, Any]]:
    return [_cq(n, "3", "all", LOWER_ANY, weight=weights.get(n)) for n in names]


def unit(name: str, cq: str, priority: int = 0) -> Admitted:
    return Admitted(name, cq, {(D, "cpu"): "1"}, priority)


def wl(name: str, cq: str, q: str, priority: int = 0) -> Admitted:
    return Admitted(name, cq, {(D, "cpu"): q}, priority)


def units(cq: str, n: int, start: int = 1) -> list[Admitted]:
    return [unit(f"{cq}{i}", cq) for i in range(start, start + n)]


# name: (queues and cohorts, admitted, incoming cpu, target ClusterQueue, strategies, want)
Case = tuple[list[dict[str, Any]], list[Admitted], str, str, tuple[str, ...], dict[str, str]]
CASES: dict[str, Case] = {
    "reclaim nominal from user using the most": (
        _base(),
        units("a", 3) + units("b", 5) + units("c", 1),
        "1",
        "c",
        (),
        {"b1": RECLAIM},
    ),
    "can reclaim from queue using less, if taking the latest workload from user using the most isn't enough": (
        _base(),
        [wl("a1", "a", "3"), wl("a2", "a", "1"), wl("b1", "b", "2"), wl("b2", "b", "3")],
        "3",
        "c",
        (),
        {"a1": RECLAIM},
    ),
    "reclaim borrowable quota from user using the most": (
        _base(),
        units("a", 3) + units("b", 5) + units("c", 1),
        "1",
        "a",
        (),
        {"b1": FAIR},
    ),
    "preempt one from each CQ borrowing": (
        _base(),
        [
            wl("a1", "a", "0.5"),
            wl("a2", "a", "0.5"),
            wl("a3", "a", "3"),
            wl("b1", "b", "0.5"),
            wl("b2", "b", "0.5"),
            wl("b3", "b", "3"),
        ],
        "2",
        "c",
        (),
        {"a1": RECLAIM, "b1": RECLAIM},
    ),
    "can't preempt when everyone under nominal": (
        _base(),
        units("a", 3) + units("b", 3) + units("c", 3),
        "1",
        "c",
        (),
        {},
    ),
    "can't preempt when it would switch the imbalance": (
        _base(),
        units("a", 3) + units("b", 5),
        "2",
        "a",
        (),
        {},
    ),
    "can preempt lower priority workloads from same CQ": (
        _base(),
        [unit("a1_low", "a", -1), unit("a2_low", "a", -1), unit("a3", "a"), unit("a4", "a"), *units("b", 5)],
        "2",
        "a",
        (),
        {"a1_low": CQ, "a2_low": CQ},
    ),
    "can preempt a combination of same CQ and highest user": (
        _base(),
        [unit("a_low", "a", -1), unit("a2", "a"), unit("a3", "a"), *units("b", 6)],
        "2",
        "a",
        (),
        {"a_low": CQ, "b1": FAIR},
    ),
    "preempt huge workload if there is no other option, as long as the target CQ gets a lower share": (
        _base(),
        [wl("b1", "b", "9")],
        "2",
        "a",
        (),
        {"b1": RECLAIM},
    ),
    "can't preempt huge workload if the incoming is also huge": (
        _base(),
        [wl("a1", "a", "2"), wl("b1", "b", "7")],
        "5",
        "a",
        (),
        {},
    ),
    "can't preempt 2 smaller workloads if the incoming is huge": (
        _base(),
        [wl("b1", "b", "2"), wl("b2", "b", "2"), wl("b3", "b", "3")],
        "6",
        "a",
        (),
        {},
    ),
    "preempt from target and others even if over nominal": (
        _base(),
        [wl("a1_low", "a", "2", -1), wl("a2_low", "a", "1", -1), wl("b1", "b", "3"), wl("b2", "b", "3")],
        "4",
        "a",
        (),
        {"a1_low": CQ, "b1": FAIR},
    ),
    "prefer to preempt workloads that don't make the target CQ have the biggest share": (
        _base(),
        [wl("b1", "b", "2"), wl("b2", "b", "1"), wl("b3", "b", "2"), wl("c1", "c", "1")],
        "3.5",
        "a",
        (),
        {"b2": FAIR},
    ),
    "preempt from different cluster queues if the end result has a smaller max share": (
        _base(),
        [wl("b1", "b", "2"), wl("b2", "b", "2.5"), wl("c1", "c", "2"), wl("c2", "c", "2.5")],
        "3.5",
        "a",
        (),
        {"b1": FAIR, "c1": FAIR},
    ),
    "scenario above does not flap": (
        _base(),
        [wl("a1", "a", "3.5"), wl("b2", "b", "2.5"), wl("c2", "c", "2.5")],
        "2",
        "b",
        (),
        {},
    ),
    "cannot preempt if it would make the candidate CQ go under nominal after preempting one element": (
        _base(),
        [wl("b1", "b", "3"), wl("b2", "b", "3"), wl("c1", "c", "3")],
        "4",
        "a",
        (),
        {},
    ),
    "workloads under priority threshold not capriciously preempted": (
        _base(),
        units("a", 3) + units("b", 3) + [unit(f"preemptible{i}", "preemptible", -3) for i in (1, 2, 3)],
        "2",
        "a",
        (),
        {},
    ),
    "preempt lower priority first, even if big": (
        _base(),
        [wl("a1", "a", "3"), wl("b_low", "b", "5", 0), wl("b_high", "b", "1", 1)],
        "1",
        "a",
        ("LessThanInitialShare",),
        {"b_low": FAIR},
    ),
    "preempt workload that doesn't transfer the imbalance, even if high priority": (
        _base(),
        [wl("a1", "a", "3"), wl("b_low", "b", "5", 0), wl("b_high", "b", "1", 1)],
        "1",
        "a",
        ("LessThanOrEqualToFinalShare",),
        {"b_high": FAIR},
    ),
    "CQ with higher weight can preempt more": (
        _weighted({"a": "2"}),
        units("a", 3) + units("b", 6),
        "2",
        "a",
        (),
        {"b1": FAIR, "b2": FAIR},
    ),
    "can preempt anything borrowing from CQ with 0 weight": (
        _weighted({"b": "0"}),
        units("a", 3) + units("b", 6),
        "3",
        "a",
        (),
        {"b1": FAIR, "b2": FAIR, "b3": FAIR},
    ),
    "can't preempt nominal from CQ with 0 weight": (
        _weighted({"b": "0"}, "ab"),
        units("a", 3) + units("b", 3),
        "1",
        "a",
        (),
        {},
    ),
    "can't preempt nominal from Cohort with 0 weight": (
        [
            _cq("left-cq", "0", "root", ANY),
            _cq("right-cq", "0", "right-cohort", ANY, weight="0"),
            cohort("right-cohort", "root", group(flavor_quotas(D, ("cpu", "1"))), weight="0"),
        ],
        [unit("right-1", "right-cq")],
        "1",
        "left-cq",
        (),
        {},
    ),
    "can preempt within cluster queue when no cohort": (
        [
            cluster_queue(
                "a", group(flavor_quotas(D, ("cpu", "1"))), preemption={"withinClusterQueue": "LowerPriority"}
            )
        ],
        [unit("a1", "a")],
        "1",
        "a",
        (),
        {"a1": CQ},
    ),
    "hierarchical preemption": (
        [
            _cq("a", "1", "LEFT", ANY, weight="2"),
            _cq("b", "1", "LEFT"),
            _cq("c", "1", "ROOT"),
            _cq("d", "1", "RIGHT"),
            _cq("e", "1", "RIGHT", weight="0.99"),
            cohort("ROOT", None, group(flavor_quotas(D, ("cpu", "5")))),
            cohort("LEFT", "ROOT", group(flavor_quotas(D, ("cpu", "5"))), weight="2"),
            cohort("RIGHT", "ROOT", group(flavor_quotas(D, ("cpu", "5")))),
        ],
        [unit(f"{q}{i}", q, i) for q in "bcde" for i in range(1, 6)],
        "5",
        "a",
        (),
        {"b1": FAIR, "b2": FAIR, "c1": FAIR, "c2": FAIR, "e1": FAIR},
    ),
    "borrowing cq in non-borrowing cohort is protected": (
        [
            _cq(
                "a",
                "5",
                "ROOT",
                {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
                weight="10",
            ),
            _cq("b", None, "RIGHT", weight="0.1"),
            cohort("ROOT"),
            cohort("RIGHT", "ROOT", group(flavor_quotas(D, ("cpu", "1"))), weight="0.1"),
        ],
        [unit("a1", "a", -1), unit("a2", "a", -1), unit("a3", "a", -1), unit("b1", "b", -1)],
        "5",
        "a",
        (),
        {"a1": CQ, "a2": CQ, "a3": CQ},
    ),
    "forced to preempt within clusterqueue because borrowing workload too important": (
        [
            _cq(
                "a",
                "5",
                "ROOT",
                {"reclaimWithinCohort": "LowerPriority", "withinClusterQueue": "LowerPriority"},
                weight="10",
            ),
            _cq("b", None, "RIGHT", weight="0.1"),
            cohort("ROOT"),
            cohort("RIGHT", "ROOT", group(flavor_quotas(D, ("cpu", "3"))), weight="0.1"),
        ],
        [unit("a1", "a", -1), unit("a2", "a", -1), unit("a3", "a", -1), wl("b1", "b", "4", 100)],
        "4",
        "a",
        (),
        {"a1": CQ, "a2": CQ, "a3": CQ},
    ),
    "deep preemption": (
        [
            _cq("a", "0", "AAA", ANY),
            _cq("b", "0", "BBB"),
            cohort("ROOT"),
            cohort("A", "ROOT", weight="1.01"),
            cohort("AA", "A"),
            cohort("AAA", "AA"),
            cohort("B", "ROOT", weight="0.99"),
            cohort("BB", "B"),
            cohort("BBB", "BB"),
            cohort("C", "ROOT"),
            cohort("CC", "C"),
            cohort("CCC", "CC"),
            cohort("CCCC", "CCC", group(flavor_quotas(D, ("cpu", "1")))),
        ],
        [unit("b1", "b")],
        "1",
        "a",
        (),
        {"b1": FAIR},
    ),
    "cq with zero weight can reclaim nominal quota": (
        [_cq("a", "1", "ROOT", ANY, weight="0.0"), _cq("b", "0", "ROOT", weight="1.0")],
        [unit("b1", "b")],
        "1",
        "a",
        (),
        {"b1": RECLAIM},
    ),
    "cohort with zero weight can reclaim nominal quota": (
        [
            _cq("a", "0", "A", ANY, weight="0.0"),
            _cq("b", "0", "ROOT", weight="1.0"),
            cohort("A", "ROOT", group(flavor_quotas(D, ("cpu", "1"))), weight="0.0"),
        ],
        [unit("b1", "b")],
        "1",
        "a",
        (),
        {"b1": FAIR},
    ),
    "zero weight borrowing preemptor cannot preempt from a borrowing CQ with a non-zero weight": (
        [_cq("a", "1", "all", ANY, weight="0"), _cq("b", "1", "all", weight="1")],
        [unit("a1", "a"), unit("b1", "b"), unit("b2", "b")],
        "1",
        "a",
        (),
        {},
    ),
    "zero weight borrowing preemptor can preempt from a borrowing CQ which also has zero weight": (
        [
            cohort("all", None, group(flavor_quotas(D, ("cpu", "3")))),
            _cq("a", "1", "all", ANY, weight="0"),
            _cq("b", "0", "all", weight="0"),
        ],
        units("b", 3),
        "2",
        "a",
        (),
        {"b1": FAIR},
    ),
    "non-zero weight borrowing preemptor preempts from a borrowing CQ": (
        [
            cohort("all", None, group(flavor_quotas(D, ("cpu", "3")))),
            _cq("a", "1", "all", ANY, weight="1"),
            _cq("b", "0", "all", weight="1"),
        ],
        units("b", 3),
        "2",
        "a",
        (),
        {"b1": FAIR},
    ),
    "candidates skipped by the first strategy are still available to the second strategy": (
        [
            cohort("A", "ROOT", group(flavor_quotas(D, ("cpu", "1"))), weight="0"),
            _cq("p", "2", "A", ANY, weight="1"),
            _cq("y", "2", "A", weight="1"),
            _cq("x", "1", "ROOT", weight="1"),
        ],
        [wl("p1", "p", "2"), wl("y1", "y", "2"), wl("y2", "y", "2"), unit("x1", "x"), unit("x2", "x")],
        "1",
        "p",
        (),
        {"y1": FAIR, "x1": FAIR},
    ),
}


INCOMING_PRIORITY = {"can preempt within cluster queue when no cohort": 1000}


def _run(name: str) -> tuple[dict[str, str], bool]:
    queues, admitted, incoming_cpu, target, strategies, _ = CASES[name]
    w = world([flavor(D), fair_sharing(*strategies), *queues], admitted)
    incoming = w.workload("incoming", INCOMING_PRIORITY.get(name, 0))
    incoming.cluster_queue = target
    cq = w.cluster.cluster_queues[target]
    nodes = [c.node for c in w.cluster.cluster_queues.values()] + list(w.cluster.cohorts.values())

    def usage() -> dict[str, dict[FlavorResource, int]]:
        return {n.name: {fr: v for fr, v in n.usage.items() if v} for n in nodes}

    before = usage()
    got = w.preemptor().targets(incoming, cq, {(D, "cpu")}, {(D, "cpu"): amount(incoming_cpu)})
    restored = usage() == before
    return {t.workload.name: t.reason for t in got}, restored


@pytest.mark.parametrize("name", sorted(CASES))
def test_fair_preemption_targets_match_kueue(name: str) -> None:
    got, restored = _run(name)
    assert got == CASES[name][-1]
    assert restored  # "Snapshot was modified": every simulated removal is put back


def test_nominal_first_workload_fitting_within_nominal_can_preempt_despite_high_aggregate_drs() -> None:
    """TestFairPreemptions "nominal first: workload fitting within nominal can preempt despite
    high aggregate DRS" (gate FairSharingPreemptWithinNominal, on by default): a within nominal on
    premium reclaims b's borrowed premium CPU although a's share (cheap borrowing) is higher."""
    mss = {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "MayStopSearch"}
    docs = [
        flavor("premium"),
        flavor("cheap"),
        fair_sharing(),
        cluster_queue(
            "a",
            group(flavor_quotas("premium", ("cpu", "3")), flavor_quotas("cheap", ("cpu", "0"))),
            cohort="all",
            preemption=ANY,
            fungibility=mss,
        ),
        cluster_queue(
            "b",
            group(flavor_quotas("premium", ("cpu", "0")), flavor_quotas("cheap", ("cpu", "6"))),
            cohort="all",
        ),
    ]
    admitted = [Admitted(f"a_prem{i}", "a", {("premium", "cpu"): "1"}) for i in (1, 2)]
    admitted += [Admitted(f"a_cheap{i}", "a", {("cheap", "cpu"): "1"}) for i in range(1, 6)]
    admitted += [Admitted("b_prem1", "b", {("premium", "cpu"): "1"})]
    w = world(docs, admitted)
    incoming = w.workload("a_incoming")
    incoming.cluster_queue = "a"
    cq = w.cluster.cluster_queues["a"]
    got = w.preemptor().targets(incoming, cq, {("premium", "cpu")}, {("premium", "cpu"): amount("1")})
    assert [(t.workload.name, t.reason) for t in got] == [("b_prem1", RECLAIM)]
