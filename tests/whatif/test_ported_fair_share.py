"""Cases ported from Kueue v0.19.2 ``pkg/cache/scheduler/fair_sharing_test.go``
``TestDominantResourceShare``, ``TestIsBorrowingOn`` and ``TestPreciseWeightedShareSerialized``
(kubernetes-sigs/kueue@v0.19.2).

Each DRS case keeps the Go case's ClusterQueue ``cq`` (and ``lending-cq`` / cohorts), the usage
admitted to ``cq``, and asserts the same ``roundedWeightedShare`` (value and dominant resource)
and borrowing state for every ClusterQueue and Cohort.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from tests.whatif.kueue_cases import (
    Admitted,
    cluster_queue,
    cohort,
    fair_sharing,
    flavor,
    flavor_quotas,
    group,
    world,
)
from whatif.fairsharing.share import DRS, compare, share

D = "default"
GPU = "example.com/gpu"
MAX = 2**63 - 1


def _pair(
    cq_weight: str = "1", cpu: str = "2", gpu: str = "5", lend_cpu: str = "8", lend_gpu: str = "5"
) -> list[dict[str, Any]]:
    """``cq`` and ``lending-cq`` in ``test-cohort``, as most Go cases have them."""
    return [
        cluster_queue(
            "cq", group(flavor_quotas(D, ("cpu", cpu), (GPU, gpu))), cohort="test-cohort", weight=cq_weight
        ),
        cluster_queue(
            "lending-cq",
            group(flavor_quotas(D, ("cpu", lend_cpu), (GPU, lend_gpu))),
            cohort="test-cohort",
            weight="1",
        ),
    ]


def _gpu_cq(nominal: str, cohort_name: str, weight: str | None = "1") -> dict[str, Any]:
    return cluster_queue("cq", group(flavor_quotas(D, (GPU, nominal))), cohort=cohort_name, weight=weight)


ZERO = (0, "", False)
# name: (objects, usage of cq {resource: quantity}, want {node: (value, dominant, borrowing)})
CASES: dict[str, tuple[list[dict[str, Any]], dict[str, str], dict[str, tuple[int, str, bool]]]] = {
    "no cohort": (
        [cluster_queue("cq", group(flavor_quotas(D, ("cpu", "2000"), (GPU, "5"))))],
        {"cpu": "1", GPU: "2"},
        {"cq": ZERO},
    ),
    "usage below nominal": (
        _pair(),
        {"cpu": "1", GPU: "2"},
        {"cq": ZERO, "lending-cq": ZERO, "test-cohort": ZERO},
    ),
    "usage above nominal": (
        _pair(),
        {"cpu": "3", GPU: "7"},
        {"cq": (200, GPU, True), "lending-cq": ZERO, "test-cohort": ZERO},
    ),
    "usage way above nominal in a cohort with large quotas and weights": (
        [
            _gpu_cq("500", "test-cohort", "300"),
            cluster_queue(
                "lending-cq", group(flavor_quotas(D, (GPU, "1000"))), cohort="test-cohort", weight="300"
            ),
        ],
        {GPU: "800"},
        {"cq": (1, GPU, True), "lending-cq": ZERO, "test-cohort": ZERO},
    ),
    "one resource above nominal": (
        _pair(),
        {"cpu": "3", GPU: "3"},
        {"cq": (100, "cpu", True), "lending-cq": ZERO, "test-cohort": ZERO},
    ),
    "above nominal with integer weight": (
        _pair("2"),
        {GPU: "7"},
        {"cq": (100, GPU, True), "lending-cq": ZERO, "test-cohort": ZERO},
    ),
    "above nominal with decimal weight": (
        _pair("0.5"),
        {GPU: "7"},
        {"cq": (400, GPU, True), "lending-cq": ZERO, "test-cohort": ZERO},
    ),
    "above nominal with zero weight": (
        _pair("0"),
        {GPU: "7"},
        {"cq": (MAX, GPU, True), "lending-cq": ZERO, "test-cohort": ZERO},
    ),
    "cohort has resource share": (
        [
            _gpu_cq("5", "child-cohort"),
            cohort("child-cohort", "root", weight="2"),
            cohort("root", None, group(flavor_quotas(D, (GPU, "45")))),
        ],
        {GPU: "10"},
        {"cq": (100, GPU, True), "child-cohort": (50, GPU, True), "root": ZERO},
    ),
    "resource share defined for resources only available at the root cohort": (
        [
            _gpu_cq("0", "child-cohort"),
            cohort("child-cohort", "root", weight="2"),
            cohort("root", None, group(flavor_quotas(D, (GPU, "50")))),
        ],
        {GPU: "10"},
        {"cq": (200, GPU, True), "child-cohort": (100, GPU, True), "root": ZERO},
    ),
    "resource share affected by borrowing limit": (
        [
            _gpu_cq("0", "child-cohort", None),
            cohort("child-cohort", "root", group(flavor_quotas(D, (GPU, "0", "10")))),
            cohort("root", None, group(flavor_quotas(D, (GPU, "50")))),
        ],
        {GPU: "10"},
        {"cq": (1000, GPU, True), "child-cohort": (200, GPU, True), "root": ZERO},
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_dominant_resource_share_matches_kueue(name: str) -> None:
    docs, usage, want = CASES[name]
    w = world(
        [flavor(D), fair_sharing(), *docs],
        [Admitted("workload-0", "cq", {(D, r): q for r, q in usage.items()})],
    )
    nodes = {
        n.name: n for n in [*(c.node for c in w.cluster.cluster_queues.values()), *w.cluster.cohorts.values()]
    }
    got = {}
    for name_, node in nodes.items():
        drs = share(node)
        value, dominant = drs.rounded()
        got[name_] = (value, dominant, drs.borrowing)
    assert got == want


def test_is_borrowing_on_only_the_requested_flavor_resources() -> None:
    """TestIsBorrowingOn: "borrows on requested flavor", "borrows on unrequested flavor only",
    "no borrowing", "nil requestedFRs"."""
    cpu, gpu = (D, "cpu"), (D, GPU)
    borrowing_cpu = DRS(1.0, 10.0, "cpu", True, (cpu,))
    assert borrowing_cpu.borrowing_on({cpu: 1000})
    assert not borrowing_cpu.borrowing_on({gpu: 1000})
    assert not DRS(1.0, 0.0).borrowing_on({cpu: 1000})
    assert not borrowing_cpu.borrowing_on({})


def test_precise_weighted_share() -> None:
    """TestPreciseWeightedShareSerialized: zero weight -> +Inf, zero ratio -> 0, ratio / weight;
    and CompareDRS: a zero-weight borrower is above everything but another one."""
    assert DRS(0.0, 5.0).precise() == math.inf
    assert DRS(0.0, 0.0).precise() == 0.0
    assert DRS(2.0, 500.0).precise() == 250.0
    assert DRS(0.4, 1.0).precise() == 2.5
    assert compare(DRS(0.0, 1.0), DRS(1.0, 10_000.0)) == 1
    assert compare(DRS(0.0, 1.0), DRS(0.0, 2.0)) == -1
    assert compare(DRS(1.0, 0.0), DRS(0.0, 0.0)) == 0
