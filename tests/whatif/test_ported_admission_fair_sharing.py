"""Admission fair sharing, ported from Kueue v0.19.2's own tests (kubernetes-sigs/kueue@v0.19.2).

Each test names its Go file, test and case.  Usage arithmetic: ``pkg/util/admissionfairsharing/
admission_fair_sharing_test.go``; the ledger: ``pkg/cache/queue/afs/*_test.go``; the samples:
``pkg/controller/core/localqueue_controller_test.go`` ``TestLocalQueueReconcile``; the head of a
ClusterQueue: ``pkg/cache/queue/cluster_queue_test.go``; the cycle: ``pkg/scheduler/
scheduler_afs_test.go`` ``TestScheduleForAFS`` / ``TestShouldApplyEntryPenalty``; preemption:
``pkg/scheduler/preemption/preemption_test.go`` ``TestCandidatesOrdering``.  The objects go
through the same path as a stack's (plain manifests -> the pack's model -> ``build_cluster``).
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import pytest
import yaml

from tests.whatif.kueue_cases import build, cluster_queue, flavor, flavor_quotas, group
from whatif.admission_fair_sharing.ledger import Entry, Ledger
from whatif.admission_fair_sharing.model import AdmissionFairSharing
from whatif.admission_fair_sharing.settings import AfsConfig
from whatif.admission_fair_sharing.usage import decayed_consumed, entry_penalty, lq_usage
from whatif.cluster import Cluster
from whatif.errors import WhatIfError
from whatif.queues import QueueManager
from whatif.results import document
from whatif.run import simulate
from whatif.section import rule_options
from whatif.simulator import Simulation
from whatif.trace import parse_trace
from whatif.workload import ADMITTED, Workload

API = "kueue.x-k8s.io/v1beta2"
D = Decimal
LONG_HALF_LIFE = 168 * 3600.0  # admission_fair_sharing_test.go longHalfLifeTime
SAMPLING_ELAPSED = 300.0  # samplingElapsed


# --- builders -----------------------------------------------------------------------------------
def configuration(afs: dict[str, Any] | None, gates: dict[str, bool] | None = None) -> dict[str, Any]:
    """Kueue's Configuration (the chart's ``kueue-manager-config`` ConfigMap)."""
    config: dict[str, Any] = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration"}
    if afs is not None:
        config["admissionFairSharing"] = afs
    if gates is not None:
        config["featureGates"] = gates
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "kueue-manager-config", "namespace": "kueue-system"},
        "data": {"controller_manager_config.yaml": yaml.safe_dump(config)},
    }


def afs_cq(name: str, cpu: str = "8", mode: str | None = "UsageBasedAdmissionFairSharing") -> dict[str, Any]:
    """``MakeClusterQueue(name).ResourceGroup(default: cpu).AdmissionMode(mode)``."""
    cq = cluster_queue(name, group(flavor_quotas("default", ("cpu", cpu))))
    if mode is not None:
        cq["spec"]["admissionScope"] = {"admissionMode": mode}
    return cq


def lq(name: str, cq: str = "cq1", weight: str | None = None, namespace: str = "default") -> dict[str, Any]:
    spec: dict[str, Any] = {"clusterQueue": cq}
    if weight is not None:
        spec["fairSharing"] = {"weight": weight}
    return {
        "apiVersion": API,
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def cpu(value: str) -> dict[str, Decimal]:
    return {"cpu": D(value)}


# scheduler_afs_test.go TestScheduleForAFS: afsConfig (half-life 10s, sampling 1s), cq1 with
# cpu 8 and memory 8Gi, LocalQueues lq-a, lq-b, lq-c (weight 1) and lq-zero (weight 0)
AFS_10S = {"usageHalfLifeTime": "10s", "usageSamplingInterval": "1s"}


def schedule_for_afs(gates: dict[str, bool] | None = None) -> Cluster:
    cq = cluster_queue("cq1", group(flavor_quotas("default", ("cpu", "8"), ("memory", "8Gi"))))
    cq["spec"]["admissionScope"] = {"admissionMode": "UsageBasedAdmissionFairSharing"}
    return build(
        [
            configuration(AFS_10S, gates),
            flavor("default"),
            cq,
            lq("lq-a", weight="1"),
            lq("lq-b", weight="1"),
            lq("lq-c", weight="1"),
            lq("lq-zero", weight="0"),
        ]
    )


def wl(
    name: str, queue: str, cpus: str, submit: float = 0, duration: float = 3600, **extra: Any
) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": "default",
        "queue": queue,
        "submit": submit,
        "duration": duration,
        "podSets": [{"name": "one", "count": 1, "requests": {"cpu": cpus}}],
        **extra,
    }


def run(c: Cluster, workloads: list[dict[str, Any]], usage: dict[str, dict[str, Decimal]]) -> dict[str, Any]:
    """``SetForTest`` the initial usage at the start, then simulate."""
    afs = c.admission_fair_sharing
    for name, resources in usage.items():
        assert afs is not None
        afs.ledger.set(f"default/{name}", resources, 0.0)
    return document(c, Simulation(c, parse_trace({"workloads": workloads})).run())


def admitted_at_start(doc: dict[str, Any]) -> list[str]:
    return [e["workload"].split("/")[1] for e in doc["events"] if e["event"] == "admitted" and e["time"] == 0]


# --- pkg/util/admissionfairsharing/admission_fair_sharing_test.go -------------------------------
@pytest.mark.parametrize(
    ("case", "weight", "want"),
    [("configured weight", "2", 2.0), ("default weight", None, 1.0), ("missing LocalQueue", "absent", 1.0)],
)
def test_resolve_lq_weight(case: str, weight: str | None, want: float) -> None:
    """``TestResolveLQWeight``: the LocalQueue's ``spec.fairSharing.weight``, 1 when absent or missing."""
    queues = [] if weight == "absent" else [lq("lq", cq="cq1", weight=weight, namespace="ns")]
    c = build([configuration({"usageHalfLifeTime": "1h"}), flavor("default"), afs_cq("cq1"), *queues])
    assert c.admission_fair_sharing is not None
    assert c.admission_fair_sharing.weight("ns/lq") == want, case


def test_calculate_entry_penalty_with_long_half_life() -> None:
    """``TestCalculateEntryPenaltyWithLongHalfLife``: a week's half-life still charges every resource."""
    penalty = entry_penalty({"cpu": D(2), "nvidia.com/gpu": D(1)}, 300.0, LONG_HALF_LIFE)
    assert penalty["cpu"] > 0 and penalty["nvidia.com/gpu"] > 0
    # ``TestCalculateEntryPenaltyWithDRAResources``: every requested resource is charged
    dra = entry_penalty({"cpu": D(4), "gpu-logical": D(2)}, 300.0, 600.0)
    assert dra["cpu"] > 0 and dra["gpu-logical"] > 0


def test_calculate_decayed_consumed_accumulates_sub_milli() -> None:
    """``TestCalculateDecayedConsumedAccumulatesSubMilli``: below one milli-unit per sample, still growing."""
    usage = {"cpu": D(2), "nvidia.com/gpu": D(1)}
    consumed: dict[str, Decimal] = {}
    previous = {"cpu": D(0), "nvidia.com/gpu": D(0)}
    for _ in range(3):
        consumed = decayed_consumed(consumed, usage, SAMPLING_ELAPSED, LONG_HALF_LIFE)
        for name in usage:
            assert consumed[name] > previous[name]
        previous = dict(consumed)
    assert consumed["nvidia.com/gpu"] < D("0.001") * 3  # sub-milli steps, not rounded to a milli


def test_calculate_decayed_consumed_converges_to_usage() -> None:
    """``TestCalculateDecayedConsumedConvergesToUsage``: 1 - 0.5^n of the way after n half-lives,
    within a milli-unit, never above the usage."""
    usage = {"cpu": D(2)}
    consumed: dict[str, Decimal] = {}
    for half_lives, want in ((1, D(1)), (2, D("1.5")), (3, D("1.75"))):
        for _ in range(2016):  # 168h / 5m
            consumed = decayed_consumed(consumed, usage, SAMPLING_ELAPSED, LONG_HALF_LIFE)
        assert abs(consumed["cpu"] - want) <= D("0.001"), half_lives
        assert consumed["cpu"] <= usage["cpu"]


@pytest.mark.parametrize("size", [16 * 2**30, 2**40, 64 * 2**40])  # 16Gi, 1Ti, 64Ti
def test_calculate_decayed_consumed_keeps_large_quantities_positive(size: int) -> None:
    """``TestCalculateDecayedConsumedKeepsLargeQuantitiesPositive``."""
    consumed = decayed_consumed({}, {"memory": D(size)}, SAMPLING_ELAPSED, LONG_HALF_LIFE)
    assert consumed["memory"] > 0


@pytest.mark.parametrize(
    ("case", "consumed", "penalty", "lq_weight", "weights", "want"),
    [
        ("DRA resource with default weight", {"gpu-logical": D(2)}, {}, 1.0, {}, 2.0),
        ("DRA resource with explicit weight", {"gpu-logical": D(2)}, {}, 1.0, {"gpu-logical": 3.0}, 6.0),
        (
            "mixed CPU and DRA resources",
            {"cpu": D(4), "gpu-logical": D(2)},
            {},
            1.0,
            {"cpu": 1.0, "gpu-logical": 5.0},
            14.0,
        ),
        (
            "DRA resource with weight zero contributes nothing",
            {"gpu-logical": D(10)},
            {},
            1.0,
            {"gpu-logical": 0.0},
            0.0,
        ),
        ("DRA resource in penalty only", {}, {"gpu-logical": D(3)}, 1.0, {}, 3.0),
        (
            "DRA resource in both consumed and penalty",
            {"gpu-logical": D(2)},
            {"gpu-logical": D(1)},
            2.0,
            {"gpu-logical": 4.0},
            6.0,
        ),
    ],
)
def test_calculate_usage_with_dra(
    case: str,
    consumed: dict[str, Decimal],
    penalty: dict[str, Decimal],
    lq_weight: float,
    weights: dict[str, float],
    want: float,
) -> None:
    """``TestCalculateUsageWithDRA``."""
    assert lq_usage(consumed, penalty, lq_weight, weights) == want, case


@pytest.mark.parametrize(
    ("case", "consumed", "lq_weight"),
    [
        ("zero weight, idle queue (no usage)", {}, 0.0),
        ("zero weight, active queue", {"cpu": D(4)}, 0.0),
        ("negative weight", {"cpu": D(4)}, -1.0),
    ],
)
def test_calculate_usage_with_non_positive_weight(
    case: str, consumed: dict[str, Decimal], lq_weight: float
) -> None:
    """``TestCalculateUsageWithNonPositiveWeight``: +Inf (sorted last), never NaN."""
    got = lq_usage(consumed, {}, lq_weight, {})
    assert not math.isnan(got) and math.isinf(got) and got > 0, case


# --- pkg/cache/queue/afs/entry_penalties_test.go, usage_ledger_test.go --------------------------
PUSH2, PUSH3 = cpu("2"), cpu("3")


@pytest.mark.parametrize(
    ("case", "ops", "want_has", "want"),
    [
        ("pushes for distinct workloads accumulate", [("wl1", PUSH2), ("wl2", PUSH3)], True, cpu("5")),
        (
            "re-pushing the same workload replaces instead of stacking",
            [("wl1", PUSH2), ("wl1", PUSH2)],
            True,
            cpu("2"),
        ),
        (
            "re-pushing with a different amount keeps the latest",
            [("wl1", PUSH2), ("wl1", PUSH3)],
            True,
            cpu("3"),
        ),
        (
            "rollback after replacement subtracts the replacement amount",
            [("wl1", PUSH2), ("wl1", PUSH3), ("wl1", None)],
            False,
            {},
        ),
        (
            "subtracting a workload removes exactly its record",
            [("wl1", PUSH2), ("wl2", PUSH3), ("wl1", None)],
            True,
            cpu("3"),
        ),
        ("subtracting the only workload leaves nothing pending", [("wl1", PUSH2), ("wl1", None)], False, {}),
        (
            "subtracting twice is a no-op the second time",
            [("wl1", PUSH2), ("wl2", PUSH3), ("wl1", None), ("wl1", None)],
            True,
            cpu("3"),
        ),
        ("subtracting a workload that never pushed leaves no negative residue", [("wl1", None)], False, {}),
        (
            "a workload's subtraction cannot drain another workload's resources",
            [("wl1", PUSH2), ("wl2", {"memory": D(4 * 2**30)}), ("wl1", None)],
            True,
            {"memory": D(4 * 2**30)},
        ),
    ],
)
def test_penalty_bookkeeping_is_idempotent_and_exact(
    case: str, ops: list[tuple[str, dict[str, Decimal] | None]], want_has: bool, want: dict[str, Decimal]
) -> None:
    """``TestPenaltyBookkeepingIsIdempotentAndExact``."""
    ledger = Ledger()
    for workload, push in ops:
        if push is not None:
            ledger.push_penalty("ns/lq", f"ns/{workload}", push, 0.0)
        else:
            ledger.sub_penalty("ns/lq", f"ns/{workload}")
    assert ledger.has_pending_penalty("ns/lq") is want_has, case
    assert ledger.peek_penalty("ns/lq") == want, case


def test_push_penalty_seeds_last_update_only_when_creating() -> None:
    """``TestPushPenaltySeedsLastUpdateOnlyWhenCreating``."""
    ledger = Ledger()
    ledger.push_penalty("ns/lq", "ns/wl1", cpu("1"), 10.0)
    entry = ledger.get("ns/lq")
    assert entry is not None and entry.last_update == 10.0
    ledger.push_penalty("ns/lq", "ns/wl2", cpu("1"), 3610.0)
    assert entry.last_update == 10.0 and entry.pending == cpu("2")


def test_sub_penalty_does_not_create_entry() -> None:
    """``TestSubPenaltyDoesNotCreateEntry``."""
    ledger = Ledger()
    assert ledger.sub_penalty("ns/lq", "ns/wl1") is None
    assert ledger.get("ns/lq") is None
    ledger.push_penalty("ns/lq", "ns/other", cpu("2"), 0.0)
    ledger.sub_penalty("ns/lq", "ns/wl1")
    assert ledger.peek_penalty("ns/lq") == cpu("2")


def test_entry_penalty_aggregate_matches_records() -> None:
    """``TestEntryPenaltyAggregateMatchesRecords`` (usage_ledger_test.go)."""
    entry = Entry()
    entry.with_penalty("ns/wl1", cpu("2"))
    entry.with_penalty("ns/wl2", cpu("3"))
    entry.with_penalty("ns/wl1", cpu("4"))
    assert entry.without_penalty("ns/wl2") == cpu("3")
    assert entry.pending == cpu("4") == {"cpu": sum((r["cpu"] for r in entry.records.values()), D(0))}


# --- pkg/controller/core/localqueue_controller_test.go TestLocalQueueReconcile -------------------
def sampled(
    half_life: float, initial: dict[str, Decimal], admitted: dict[str, Decimal], since: float = 300.0
) -> Entry:
    """One LocalQueue whose entry was last updated ``since`` seconds ago, sampled now (t=0)."""
    afs = AdmissionFairSharing(AfsConfig(half_life, 300.0), ["cq"], {"default/lq": "cq"}, {}, {})
    afs.ledger.set("default/lq", initial, -since)
    afs.admitted["default/lq"] = admitted
    afs.advance(0.0)
    entry = afs.ledger.get("default/lq")
    assert entry is not None
    return entry


@pytest.mark.parametrize(
    ("case", "half_life", "initial", "admitted", "want"),
    [
        ("local queue decaying usage decays if there is no running workloads", 300.0, cpu("8"), {}, cpu("4")),
        (
            "local queue decaying usage sums the previous state and running workloads",
            300.0,
            cpu("8"),
            cpu("4"),
            cpu("6"),
        ),
        (
            "local queue decaying usage sums the usage from different flavors and resources",
            300.0,
            {"cpu": D(8), "GPU": D(16)},
            {"cpu": D(4), "GPU": D(4)},  # wl-1 and wl-2 (2 cpu each, two flavors) and wl-3 (4 GPU)
            {"cpu": D(6), "GPU": D(10)},
        ),
        (
            "local queue decaying usage sums the previous state and running workloads half time twice larger than sampling",
            600.0,
            cpu("8"),
            cpu("4"),
            cpu("6.828427124"),
        ),
        (
            "local queue decaying usage sums the previous state and running workloads with long half time",
            86400.0,
            cpu("8"),
            {},
            cpu("7.980769063"),
        ),
        (
            "local queue decaying usage sums the previous state and running GPU workloads half time twice larger than sampling",
            600.0,
            {"GPU": D(8)},
            {"GPU": D(4)},
            {"GPU": D("6.828427124")},
        ),
        ("local queue decaying usage resets to 0 when half life is 0", 0.0, {"GPU": D(8)}, {"GPU": D(4)}, {}),
    ],
)
def test_local_queue_reconcile_decay(
    case: str,
    half_life: float,
    initial: dict[str, Decimal],
    admitted: dict[str, Decimal],
    want: dict[str, Decimal],
) -> None:
    """``TestLocalQueueReconcile``: a sample five minutes after the last update (exact to the nano-unit)."""
    entry = sampled(half_life, initial, admitted)
    assert {k: v for k, v in entry.resources.items() if v != 0} == want, case
    assert entry.last_update == 0.0


def test_local_queue_decaying_usage_is_not_reconciled_if_not_enough_time_has_passed() -> None:
    """``TestLocalQueueReconcile`` "... is not reconciled if not enough time has passed": last
    updated 4 minutes ago with a 5-minute interval, the usage is left as it is."""
    entry = sampled(300.0, cpu("8"), {}, since=240.0)
    assert entry.resources == cpu("8") and entry.last_update == -240.0


# --- pkg/cache/queue/cluster_queue_test.go ------------------------------------------------------
def head_of(
    docs: list[dict[str, Any]], usage: dict[str, dict[str, Decimal]], pending: list[tuple[str, str, int]]
) -> str:
    """``newClusterQueue`` with ``SetForTest`` usage, ``PushOrUpdate`` each workload, ``Pop``."""
    c = build([flavor("default"), *docs])
    afs = c.admission_fair_sharing
    for key, resources in usage.items():
        assert afs is not None
        afs.ledger.set(key, resources, 0.0)
    queues = QueueManager(c)
    for seq, (name, queue, priority) in enumerate(pending):
        w = Workload("default", name, queue, priority, 0.0, 1.0, seq, ())
        w.cluster_queue = "cq"
        queues.push(w)
    return queues.heads()[0].name


@pytest.mark.parametrize(
    ("case", "mode", "afs", "weights", "usage", "pending", "want"),
    [
        (
            "workloads are ordered by LQ usage, instead of priorities",
            "UsageBasedAdmissionFairSharing",
            {},
            {"lqA": "1", "lqB": "1"},
            {"default/lqA": cpu("2"), "default/lqB": cpu("1")},
            [("wlA-high", "lqA", 2), ("wlB-low", "lqB", 1)],
            "wlB-low",
        ),
        (
            "workloads are ordered by LQ usage with respect to resource weights",
            "UsageBasedAdmissionFairSharing",
            {"resourceWeights": {"cpu": 0, "nvidia.com/gpu": 1}},
            {"lqA": "1", "lqB": "1"},
            {
                "default/lqA": {"cpu": D(1), "nvidia.com/gpu": D(10)},
                "default/lqB": {"cpu": D(1000), "nvidia.com/gpu": D(1)},
            },
            [("wlA-high", "lqA", 2), ("wlB-low", "lqB", 1)],
            "wlB-low",
        ),
        (
            "workloads are ordered by LQ usage with respect to LQs' fair sharing weights",
            "UsageBasedAdmissionFairSharing",
            {},
            {"lqA": "1", "lqB": "2"},
            {"default/lqA": cpu("10"), "default/lqB": cpu("6")},
            [("wlA-high", "lqA", 2), ("wlB-low", "lqB", 1)],
            "wlB-low",
        ),
        (
            "workloads with the same LQ usage are ordered by priority",
            "UsageBasedAdmissionFairSharing",
            {},
            {"lqA": "1"},
            {"default/lqA": cpu("10")},
            [("wlA-low", "lqA", 1), ("wlA-high", "lqA", 2)],
            "wlA-high",
        ),
        (
            "workloads with NoFairSharing CQ are ordered by priority",
            "NoAdmissionFairSharing",
            {},
            {"lqA": None},
            {},
            [("wlA-low", "lqA", 1), ("wlA-high", "lqA", 2)],
            "wlA-high",
        ),
        (
            "workloads with no FS config are ordered by priority",
            "NoAdmissionFairSharing",
            None,
            {"lqA": None},
            {},
            [("wlA-low", "lqA", 1), ("wlA-high", "lqA", 2)],
            "wlA-high",
        ),
    ],
)
def test_fs_admission(
    case: str,
    mode: str,
    afs: dict[str, Any] | None,
    weights: dict[str, str | None],
    usage: dict[str, dict[str, Decimal]],
    pending: list[tuple[str, str, int]],
    want: str,
) -> None:
    """``TestFsAdmission``: the head of the ClusterQueue."""
    docs = [
        configuration(afs),
        afs_cq("cq", mode=mode),
        *(lq(n, cq="cq", weight=w) for n, w in weights.items()),
    ]
    assert head_of(docs, usage, pending) == want, case


def test_usage_based_order_also_holds_without_those_seeds() -> None:
    """The same heads without the seeded usage fall back to priority: the order above is the usage's."""
    docs = [configuration({}), afs_cq("cq"), lq("lqA", cq="cq"), lq("lqB", cq="cq")]
    assert head_of(docs, {}, [("wlA-high", "lqA", 2), ("wlB-low", "lqB", 1)]) == "wlA-high"


def test_snapshot_uses_default_weight_for_missing_local_queue() -> None:
    """``TestSnapshotUsesDefaultWeightForMissingLocalQueue``: a LocalQueue that does not exist
    weighs 1, so usage 10 (existing) goes before 15 (missing) despite the lower priority."""
    docs = [
        configuration({"resourceWeights": {"nvidia.com/gpu": 1}}),
        afs_cq("cq"),
        lq("existing", cq="cq"),
    ]
    usage = {"default/existing": {"nvidia.com/gpu": D(10)}, "default/missing": {"nvidia.com/gpu": D(15)}}
    pending = [("existing-low-priority", "existing", 1), ("missing-high-priority", "missing", 2)]
    assert head_of(docs, usage, pending) == "existing-low-priority"


# --- pkg/scheduler/scheduler_afs_test.go TestScheduleForAFS --------------------------------------
def test_admits_workload_from_less_active_localqueue() -> None:
    """ "admits workload from less active localqueue": lq-a used 8, lq-b 2; wl-b1 (newer) wins."""
    doc = run(
        schedule_for_afs(),
        [wl("wl-a1", "lq-a", "8"), wl("wl-b1", "lq-b", "8")],
        {"lq-a": cpu("8"), "lq-b": cpu("2")},
    )
    assert admitted_at_start(doc) == ["wl-b1"]


def test_does_not_prioritize_a_zero_weight_localqueue() -> None:
    """ "does not prioritize a zero-weight localqueue": weight 0 sorts last even when idle and older."""
    doc = run(
        schedule_for_afs(),
        [wl("wl-z1", "lq-zero", "8"), wl("wl-a1", "lq-a", "8")],
        {"lq-a": cpu("0"), "lq-zero": cpu("0")},
    )
    assert admitted_at_start(doc) == ["wl-a1"]


def test_without_afs_classic_admission_decision_ignores_queue_usage() -> None:
    """ "without AFS: classic admission decision ignores queue usage": the gate off in the
    Configuration's featureGates, so the older wl-a1 is admitted."""
    c = schedule_for_afs(gates={"AdmissionFairSharing": False})
    assert c.admission_fair_sharing is None
    doc = run(c, [wl("wl-a1", "lq-a", "8"), wl("wl-b1", "lq-b", "8")], {})
    assert admitted_at_start(doc) == ["wl-a1"]


def test_admits_one_workload_from_each_localqueue_when_quota_is_limited() -> None:
    """ "admits one workload from each localqueue when quota is limited": equal usage 4/4; wl-a1
    first (older), then its entry penalty puts lq-a above lq-b, so wl-b1, not wl-a2."""
    workloads = [
        wl("wl-a1", "lq-a", "4"),
        wl("wl-a2", "lq-a", "4"),
        wl("wl-b1", "lq-b", "4"),
        wl("wl-b2", "lq-b", "4"),
    ]
    doc = run(schedule_for_afs(), workloads, {"lq-a": cpu("4"), "lq-b": cpu("4")})
    assert admitted_at_start(doc) == ["wl-a1", "wl-b1"]


def test_schedules_normally_when_queues_have_equal_usage() -> None:
    """ "schedules normally when queues have equal usage": 4 + 3 + 1 cpu fit in 8."""
    workloads = [wl("wl-a1", "lq-a", "4"), wl("wl-b1", "lq-b", "3"), wl("wl-c1", "lq-c", "1")]
    doc = run(schedule_for_afs(), workloads, {"lq-a": cpu("2"), "lq-b": cpu("2"), "lq-c": cpu("2")})
    assert sorted(admitted_at_start(doc)) == ["wl-a1", "wl-b1", "wl-c1"]


def test_admits_workload_from_lq_b_with_uninitialized_cache() -> None:
    """ "admits workload from lq-b with uninitialized cache": lq-b has no entry (usage 0)."""
    doc = run(schedule_for_afs(), [wl("wl-a1", "lq-a", "8"), wl("wl-b1", "lq-b", "8")], {"lq-a": cpu("8")})
    assert admitted_at_start(doc) == ["wl-b1"]


# --- TestShouldApplyEntryPenalty, and the penalty's settlement ----------------------------------
def reserve(c: Cluster, name: str) -> tuple[AdmissionFairSharing | None, Workload]:
    w = Workload("ns", name, "lq", 0, 0.0, 1.0, 0, ())
    w.cluster_queue = "cq"
    from tests.whatif.kueue_cases import pod_set

    w.pod_sets = (pod_set("one", 1, cpu="4"),)
    afs = c.admission_fair_sharing
    if afs is not None:
        afs.advance(0.0)
        afs.reserved(w, 0.0)
    return afs, w


def test_should_apply_entry_penalty() -> None:
    """``TestShouldApplyEntryPenalty``: "pushes for a first-pass workload on a usage-based
    ClusterQueue" (alpha(1s, 10s) * 4 cpu); "skips when no AdmissionFairSharing config is set";
    "skips for a ClusterQueue without usage-based admission mode"."""
    usage_based = build(
        [configuration(AFS_10S), flavor("default"), afs_cq("cq"), lq("lq", cq="cq", namespace="ns")]
    )
    afs, _ = reserve(usage_based, "wl")
    assert afs is not None
    want = entry_penalty(cpu("4"), 1.0, 10.0)
    assert afs.ledger.peek_penalty("ns/lq") == want and abs(float(want["cpu"]) - 4 * (1 - 0.5**0.1)) < 1e-9
    no_config = build(
        [configuration(None), flavor("default"), afs_cq("cq"), lq("lq", cq="cq", namespace="ns")]
    )
    assert reserve(no_config, "wl")[0] is None
    assert "admissionScope UsageBasedAdmissionFairSharing is ignored" in no_config.notes[0]
    plain = build(
        [
            configuration(AFS_10S),
            flavor("default"),
            afs_cq("cq", mode=None),
            lq("lq", cq="cq", namespace="ns"),
        ]
    )
    assert plain.admission_fair_sharing is None


def test_penalty_settles_into_consumed_on_admission_and_drops_when_rejected() -> None:
    """``workload_controller.go`` ``updateAfsConsumedUsage`` (settle exactly the recorded penalty
    on Admitted) and ``reconcileAfsPenaltiesOnUpdate`` (``SubPenalty`` when the workload can no
    longer settle), as ``TestPenaltyBookkeepingIsIdempotentAndExact`` asserts the records."""
    c = build([configuration(AFS_10S), flavor("default"), afs_cq("cq"), lq("lq", cq="cq", namespace="ns")])
    afs, w = reserve(c, "wl")
    assert afs is not None
    w.usage = {("default", "cpu"): 4000}
    w.state = ADMITTED
    afs.admitted_(w, 0.0)
    entry = afs.ledger.get("ns/lq")
    # consumed: decay over 0 s keeps nothing of the 4 admitted cpu, plus exactly the penalty
    assert entry is not None and entry.pending == {} and entry.resources == entry_penalty(cpu("4"), 1.0, 10.0)
    _, other = reserve(c, "other")
    afs.dropped(other)
    assert afs.ledger.peek_penalty("ns/lq") == {}


# --- pkg/scheduler/preemption/preemption_test.go TestCandidatesOrdering -------------------------
def test_candidates_ordering_by_local_queue_usage() -> None:
    """``TestCandidatesOrdering`` "workloads with higher LQ usage first" (mid 0.5 before low 0.1
    despite priority 10 > 1) and "workloads from different CQ are sorted based on priority and
    timestamp" (usage is not compared across ClusterQueues)."""
    from whatif.preemption import Preemptor

    c = build(
        [
            configuration({}),
            flavor("default"),
            afs_cq("preemptor"),
            afs_cq("different_cq"),
            lq("low_usage_lq", cq="preemptor"),
            lq("mid_usage_lq", cq="preemptor"),
            lq("high_usage_lq_different_cq", cq="different_cq"),
        ]
    )
    afs = c.admission_fair_sharing
    assert afs is not None
    for name, value in (
        ("low_usage_lq", "0.1"),
        ("mid_usage_lq", "0.5"),
        ("high_usage_lq_different_cq", "1.0"),
    ):
        afs.ledger.set(f"default/{name}", cpu(value), 0.0)

    def admitted(name: str, queue: str, cq: str, priority: int) -> Workload:
        w = Workload("default", name, queue, priority, 0.0, 1.0, 0, ())
        w.cluster_queue, w.reserved_at = cq, 0.0
        return w

    low = admitted("low_lq_usage", "low_usage_lq", "preemptor", 1)
    mid = admitted("mid_lq_usage", "mid_usage_lq", "preemptor", 10)
    high = admitted("high_lq_usage_different_cq", "high_usage_lq_different_cq", "different_cq", 1)
    key = Preemptor(c, {}).candidate_key(c.cluster_queues["preemptor"])
    assert [w.name for w in sorted([low, mid], key=key)] == ["mid_lq_usage", "low_lq_usage"]
    assert [w.name for w in sorted([mid, high], key=key)] == ["high_lq_usage_different_cq", "mid_lq_usage"]


# --- configuration ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("afs", "message"),
    [
        ({"usageHalfLifeTime": "-1h"}, r"usageHalfLifeTime: got '-1h', expected >= 0"),
        ({"usageSamplingInterval": "-5m"}, r"usageSamplingInterval: got '-5m', expected > 0"),
        ({"usageHalfLifeTime": "a week"}, r"usageHalfLifeTime: got 'a week', expected a Go duration"),
        ({"resourceWeights": {"cpu": -1}}, r"resourceWeights.cpu: got -1, expected a non-negative number"),
    ],
)
def test_invalid_configuration_is_one_line(afs: dict[str, Any], message: str) -> None:
    """``validateAdmissionFairSharing`` (pkg/config/validation.go): Kueue refuses to start."""
    with pytest.raises(WhatIfError, match=message):
        build([configuration(afs), flavor("default"), afs_cq("cq"), lq("lq", cq="cq")])


def test_configuration_defaults_and_gate_from_the_chart() -> None:
    """``SetDefaults_Configuration``: sampling 5m; the chart's ``--feature-gates`` can turn it off."""
    c = build(
        [configuration({"usageHalfLifeTime": "168h"}), flavor("default"), afs_cq("cq"), lq("lq", cq="cq")]
    )
    assert c.admission_fair_sharing is not None
    assert c.admission_fair_sharing.config == AfsConfig(168 * 3600.0, 300.0, {})
    release = {
        "chart": "kueue",
        "version": "0.19.2",
        "values": {
            "controllerManager": {"featureGates": [{"name": "AdmissionFairSharing", "enabled": False}]},
            "managerConfig": {
                "controllerManagerConfigYaml": "admissionFairSharing: {usageHalfLifeTime: 1h}\n"
            },
        },
    }
    from whatif.cluster import build_cluster
    from whatif.pack import StackModel

    items = [("kubernetes:helm.sh/v3:Release", release, "urn:test:kueue", "kueue")]
    docs = [flavor("default"), afs_cq("cq"), lq("lq", cq="cq")]
    for doc in docs:
        group_name, _, version = doc["apiVersion"].rpartition("/")
        items.append(
            (
                f"kubernetes:{group_name}/{version}:{doc['kind']}",
                doc,
                f"test:{doc['metadata']['name']}",
                doc["metadata"]["name"],
            )
        )
    assert build_cluster(StackModel.from_plain(items)).admission_fair_sharing is None


# --- end to end ---------------------------------------------------------------------------------
def test_two_local_queues_of_one_cluster_queue_alternate_by_usage() -> None:
    """simulate(): one 8-cpu ClusterQueue, team-a submits six 8-cpu jobs at 0 and team-b six at
    1 s.  By creation order all of team-a's would go first; by usage, each admission charges its
    LocalQueue, so the queues take turns: a, b, a, b, ...  Without admission fair sharing
    (admissionMode absent) team-a's six run first."""

    def objects(mode: str | None) -> list[tuple[str, Any, str, str]]:
        docs = [
            configuration({"usageHalfLifeTime": "1h", "usageSamplingInterval": "1m"}),
            flavor("default"),
            afs_cq("cq", mode=mode),
            lq("team-a", cq="cq"),
            lq("team-b", cq="cq"),
        ]
        out = []
        for doc in docs:
            group_name, _, version = doc["apiVersion"].rpartition("/")
            kind = doc["kind"]
            out.append(
                (
                    f"kubernetes:{group_name or 'core'}/{version}:{kind}",
                    doc,
                    f"test:{kind}/{doc['metadata']['name']}",
                    doc["metadata"]["name"],
                )
            )
        return out

    workloads = [wl(f"a{i}", "team-a", "8", submit=0, duration=600) for i in range(6)]
    workloads += [wl(f"b{i}", "team-b", "8", submit=1, duration=600) for i in range(6)]
    from whatif.pack import StackModel

    trace = parse_trace({"workloads": workloads})
    fair = simulate(StackModel.from_plain(objects("UsageBasedAdmissionFairSharing")), trace)
    order = [e["workload"].split("/")[1][0] for e in fair["events"] if e["event"] == "admitted"]
    assert order == ["a", "b", "a", "b", "a", "b", "a", "b", "a", "b", "a", "b"]
    classic = simulate(StackModel.from_plain(objects(None)), trace)
    order = [e["workload"].split("/")[1][0] for e in classic["events"] if e["event"] == "admitted"]
    assert order == ["a"] * 6 + ["b"] * 6


def test_the_document_and_the_report_say_what_admission_fair_sharing_was_simulated() -> None:
    """A run under admission fair sharing says so, with the usage-based ClusterQueues and the
    Configuration's half-life and sampling interval; a run without it says nothing of it."""
    doc = run(schedule_for_afs(), [wl("a", "lq-a", "1")], {})
    assert doc["admissionFairSharing"] == {
        "clusterQueues": ["cq1"],
        "usageHalfLifeTimeSeconds": 10.0,
        "usageSamplingIntervalSeconds": 1.0,
    }
    said = rule_options(doc)
    assert said == " with admission fair sharing on cq1 (usage half-life 10 s, sampled every 1 s)"
    plain = build([configuration(None), flavor("default"), afs_cq("cq1", mode=None), lq("lq-a")])
    doc = document(plain, Simulation(plain, parse_trace({"workloads": [wl("a", "lq-a", "1")]})).run())
    assert doc["admissionFairSharing"] is None
    assert rule_options(doc) == ""
