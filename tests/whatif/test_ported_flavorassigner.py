"""Cases ported from Kueue v0.19.2 ``pkg/scheduler/flavorassigner/flavorassigner_test.go``
``TestAssignFlavors`` (kubernetes-sigs/kueue@v0.19.2).

As in the Go test, the preemption oracle is a fake that answers ``Preempt`` (borrowing 0) unless
the case sets a result per flavor/resource (``testOracle``); usage is added straight to the
ClusterQueue and to a secondary ClusterQueue in the same cohort.  Each case asserts the Go case's
representative mode, the flavor chosen for every resource of every pod set, and the borrowing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.whatif.kueue_cases import (
    amount,
    build,
    cluster_queue,
    flavor,
    flavor_quotas,
    group,
    pod_set,
    pod_set_of,
)
from whatif.cluster import ClusterQueue
from whatif.flavors import FlavorAssigner
from whatif.preemption import NO_CANDIDATES, PREEMPT
from whatif.tree import FlavorResource, add_all
from whatif.workload import PodSet, Workload

FLAVORS = [flavor(n) for n in ("default", "one", "two", "b_one", "b_two")]
MAY_STOP = {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "MayStopSearch"}
TRY_NEXT = {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor"}
BORROW_LOWER = {"reclaimWithinCohort": "LowerPriority", "borrowWithinCohort": {"policy": "LowerPriority"}}


@dataclass
class FakeOracle:
    """``testOracle``: a fixed answer per (flavor, resource), ``Preempt`` with borrowing 0 otherwise."""

    results: dict[FlavorResource, tuple[str, int]] = field(default_factory=dict)

    def simulate(
        self, preemptor: Workload, cq: ClusterQueue, fr: FlavorResource, quantity: int
    ) -> tuple[str, int]:
        return self.results.get(fr, (PREEMPT, 0))


@dataclass
class Case:
    pods: list[PodSet]
    cq: dict[str, Any]
    want_mode: str
    want: dict[str, dict[str, str]]
    want_borrowing: int = 0
    usage: dict[FlavorResource, str] = field(default_factory=dict)
    secondary: dict[str, Any] | None = None
    secondary_usage: dict[FlavorResource, str] = field(default_factory=dict)
    oracle: dict[FlavorResource, tuple[str, int]] = field(default_factory=dict)


def cq(*groups: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return cluster_queue("test-clusterqueue", *groups, **kw)


def secondary(*groups: dict[str, Any]) -> dict[str, Any]:
    return cluster_queue("test-secondary-clusterqueue", *groups, cohort="test-cohort")


ONE_TWO_PODS = group(
    flavor_quotas("one", ("pods", "10"), ("cpu", "10")), flavor_quotas("two", ("pods", "10"), ("cpu", "10"))
)
MAIN = "main"
CASES: dict[str, Case] = {
    "single flavor, fits": Case(
        [pod_set(cpu="1", memory="1Mi")],
        cq(group(flavor_quotas("default", ("cpu", "1"), ("memory", "2Mi")))),
        "Fit", {MAIN: {"cpu": "default", "memory": "default"}},
    ),
    "single flavor, used resources, doesn't fit": Case(
        [pod_set(cpu="2")],
        cq(group(flavor_quotas("default", ("cpu", "4")))),
        "Preempt", {MAIN: {"cpu": "default"}},
        usage={("default", "cpu"): "3"},
    ),
    "multiple resource groups, fits": Case(
        [pod_set(cpu="3", memory="10Mi")],
        cq(
            group(flavor_quotas("one", ("cpu", "2")), flavor_quotas("two", ("cpu", "4"))),
            group(flavor_quotas("b_one", ("memory", "1Gi")), flavor_quotas("b_two", ("memory", "5Gi"))),
        ),
        "Fit", {MAIN: {"cpu": "two", "memory": "b_one"}},
    ),
    "multiple specs, fits borrowing": Case(
        [pod_set("driver", cpu="4", memory="1Gi"), pod_set("worker", cpu="6", memory="4Gi")],
        cq(group(flavor_quotas("default", ("cpu", "2", "98"), ("memory", "2Gi"))), cohort="test-cohort"),
        "Fit", {"driver": {"cpu": "default", "memory": "default"}, "worker": {"cpu": "default", "memory": "default"}},
        want_borrowing=1,
        secondary=secondary(group(flavor_quotas("default", ("cpu", "198"), ("memory", "198Gi")))),
    ),
    "not enough space to borrow": Case(
        [pod_set(cpu="2")],
        cq(group(flavor_quotas("one", ("cpu", "1"))), cohort="test-cohort"),
        "NoFit", {},
        secondary=secondary(group(flavor_quotas("one", ("cpu", "10", "", "0")))),
        secondary_usage={("one", "cpu"): "9"},
    ),
    "past max, but can preempt in ClusterQueue": Case(
        [pod_set(cpu="2")],
        cq(group(flavor_quotas("one", ("cpu", "2", "8"))), cohort="test-cohort"),
        "Preempt", {MAIN: {"cpu": "one"}}, want_borrowing=1,
        usage={("one", "cpu"): "9"},
        secondary=secondary(group(flavor_quotas("one", ("cpu", "98")))),
        secondary_usage={("one", "cpu"): "9"},
        oracle={("one", "cpu"): (PREEMPT, 1)},
    ),
    "past min, but can preempt in ClusterQueue": Case(
        [pod_set(cpu="2")],
        cq(group(flavor_quotas("one", ("cpu", "2")))),
        "Preempt", {MAIN: {"cpu": "one"}},
        usage={("one", "cpu"): "1"},
    ),
    "preempt before try next flavor": Case(
        [pod_set(cpu="9")],
        cq(ONE_TWO_PODS, fungibility=MAY_STOP),
        "Preempt", {MAIN: {"cpu": "one", "pods": "one"}},
        usage={("one", "cpu"): "2"},
    ),
    "preempt try next flavor": Case(
        [pod_set(cpu="9")],
        cq(ONE_TWO_PODS),
        "Fit", {MAIN: {"cpu": "two", "pods": "two"}},
        usage={("one", "cpu"): "2"},
    ),
    "borrow try next flavor, found the first flavor": Case(
        [pod_set(cpu="9")],
        cq(
            group(flavor_quotas("one", ("pods", "10"), ("cpu", "10", "1")), flavor_quotas("two", ("pods", "10"), ("cpu", "1"))),
            cohort="test-cohort", fungibility=TRY_NEXT,
        ),
        "Fit", {MAIN: {"cpu": "one", "pods": "one"}}, want_borrowing=1,
        usage={("one", "cpu"): "2"},
        secondary=secondary(group(flavor_quotas("one", ("cpu", "1")))),
    ),
    "borrow try next flavor, found the second flavor": Case(
        [pod_set(cpu="9")],
        cq(
            group(flavor_quotas("one", ("pods", "10"), ("cpu", "10", "1")), flavor_quotas("two", ("pods", "10"), ("cpu", "10"))),
            cohort="test-cohort", fungibility=TRY_NEXT,
        ),
        "Fit", {MAIN: {"cpu": "two", "pods": "two"}},
        usage={("one", "cpu"): "2"},
        secondary=secondary(group(flavor_quotas("one", ("cpu", "1")))),
    ),
    "borrow before try next flavor": Case(
        [pod_set(cpu="9")],
        cq(
            group(flavor_quotas("one", ("pods", "10"), ("cpu", "10", "1")), flavor_quotas("two", ("pods", "10"), ("cpu", "10"))),
            cohort="test-cohort",
        ),
        "Fit", {MAIN: {"cpu": "one", "pods": "one"}}, want_borrowing=1,
        usage={("one", "cpu"): "2"},
        secondary=secondary(group(flavor_quotas("one", ("cpu", "1")))),
    ),
    "when borrowing while preemption is needed for flavor one; WhenCanBorrow=MayStopSearch": Case(
        [pod_set(cpu="12")],
        cq(
            group(flavor_quotas("one", ("cpu", "0", "12")), flavor_quotas("two", ("cpu", "12"))),
            cohort="test-cohort", preemption=BORROW_LOWER, fungibility=MAY_STOP,
        ),
        "Preempt", {MAIN: {"cpu": "one"}}, want_borrowing=1,
        secondary=secondary(group(flavor_quotas("one", ("cpu", "12")))),
        secondary_usage={("one", "cpu"): "10"},
        oracle={("one", "cpu"): (PREEMPT, 1)},
    ),
    "when borrowing while preemption is needed for flavor one; WhenCanBorrow=TryNextFlavor": Case(
        [pod_set(cpu="12")],
        cq(
            group(flavor_quotas("one", ("cpu", "0", "12")), flavor_quotas("two", ("cpu", "12"))),
            cohort="test-cohort", preemption=BORROW_LOWER,
            fungibility={"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "MayStopSearch"},
        ),
        "Fit", {MAIN: {"cpu": "two"}},
        secondary=secondary(group(flavor_quotas("one", ("cpu", "12")))),
    ),
    "cannot preempt in cohort (oracle returns None) for the first flavor, tries the second flavor (which fits)": Case(
        [pod_set(cpu="2")],
        cq(
            group(flavor_quotas("one", ("cpu", "0", "2")), flavor_quotas("two", ("cpu", "0", "2"))),
            cohort="test-cohort", preemption=BORROW_LOWER, fungibility=MAY_STOP,
        ),
        "Fit", {MAIN: {"cpu": "two"}}, want_borrowing=1,
        secondary=secondary(group(flavor_quotas("one", ("cpu", "2")), flavor_quotas("two", ("cpu", "2")))),
        secondary_usage={("one", "cpu"): "2"},
        oracle={("one", "cpu"): (NO_CANDIDATES, 0)},
    ),
    "resource not listed in clusterQueue": Case(
        [pod_set_of({"example.com/gpu": "2"})],
        cq(group(flavor_quotas("one", ("cpu", "4")))),
        "NoFit", {},
    ),
    "zero resource request not in clusterQueue should succeed": Case(
        [pod_set_of({"cpu": "1", "example.com/gpu": "0"})],
        cq(group(flavor_quotas("default", ("cpu", "4")))),
        "Fit", {MAIN: {"cpu": "default"}},
    ),
    "zero resource request defined in clusterQueue should get flavor assigned": Case(
        [pod_set_of({"cpu": "1", "example.com/gpu": "0"})],
        cq(group(flavor_quotas("default", ("cpu", "4"), ("example.com/gpu", "4")))),
        "Fit", {MAIN: {"cpu": "default", "example.com/gpu": "default"}},
    ),
    "num pods fit": Case(
        [pod_set(count=3, cpu="1")],
        cq(group(flavor_quotas("default", ("pods", "3"), ("cpu", "10")))),
        "Fit", {MAIN: {"cpu": "default", "pods": "default"}},
    ),
    "num pods don't fit": Case(
        [pod_set(count=3, cpu="1")],
        cq(group(flavor_quotas("default", ("pods", "2"), ("cpu", "10")))),
        "NoFit", {},
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CASES))
def test_assign_flavors_matches_kueue(name: str) -> None:
    case = CASES[name]
    docs = [*FLAVORS, case.cq] + ([case.secondary] if case.secondary else [])
    cluster = build(docs)
    target = cluster.cluster_queues["test-clusterqueue"]
    add_all(target.node, {fr: amount(q) for fr, q in case.usage.items()})
    if case.secondary:
        add_all(
            cluster.cluster_queues["test-secondary-clusterqueue"].node,
            {fr: amount(q) for fr, q in case.secondary_usage.items()},
        )
    wl = Workload("ns", "wl", "q", 0, 0.0, 0.0, 1, tuple(case.pods), cluster_queue=target.name)
    got = FlavorAssigner(cluster, FakeOracle(case.oracle)).assign(wl, target)
    assert got.mode == case.want_mode
    if case.want_mode != "NoFit":
        assert got.flavors() == case.want
        assert got.borrowing == case.want_borrowing
