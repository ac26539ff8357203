"""The simulator against Kueue's scheduler performance harness (issue 22, item 4).

Upstream: kubernetes-sigs/kueue@v0.19.2 ``test/performance/scheduler``: the generator
(``runner/generator/generator.go`` ``generateQueue``/``generateWlSet``), the runner's controller
(``runner/controller/controller.go`` ``Reconcile``), the recorder (``runner/recorder/recorder.go``
``recordWLEvent``/``recordCQEvent``/``WriteSummary``) and the checker
(``checker/checker_test.go`` ``TestScalability``) with ``configs/{baseline,large-scale}``.

The replay test runs one cohort of the ``large-scale`` configuration (every cohort of it runs the
same way: cohorts share no quota); the ``baseline`` replay takes about 10 s of CPU and is printed
by ``python -m whatif.calibration`` instead.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from whatif.calibration.checker import failures, order
from whatif.calibration.harness import BASELINE, FLAVOR, LARGE_SCALE, RESOURCE, HarnessConfig
from whatif.calibration.replay import ClassFigures, Summary, objects, queue_name, replay, summarise, trace
from whatif.calibration.report import table
from whatif.cluster import build_cluster
from whatif.pack import StackModel


# --- what the generator creates --------------------------------------------------------------
@pytest.mark.parametrize("config", [BASELINE, LARGE_SCALE], ids=lambda c: c.name)
def test_trace_creates_each_class_at_its_interval(config: HarnessConfig) -> None:
    """``generateWlSet``: ``<-time.After(delay)`` before each creation, so the k-th workload of a
    set is created at (k+1) intervals; one pod of ``request`` CPUs at ``priority``."""
    tr = trace(config, 2)
    queues = config.queues
    assert len(tr.entries) == 2 * queues.count * sum(w.count for w in queues.workloads)
    for s, wc in enumerate(queues.workloads):
        ns = queue_name(config, 1, queues.count - 1)
        mine = [e for e in tr.entries if e.namespace == ns and e.name.startswith(f"{wc.name}-{s}-")]
        assert len(mine) == wc.count
        assert [e.submit for e in mine] == [(k + 1) * wc.interval_ms / 1000 for k in range(wc.count)]
        assert {(e.priority, e.duration, e.queue) for e in mine} == {(wc.priority, wc.runtime_ms / 1000, ns)}
        assert {(p.count, p.requests[RESOURCE]) for e in mine for p in e.pod_sets} == {(1, wc.request * 1000)}
    submits = [e.submit for e in tr.entries]
    assert submits == sorted(submits)


def test_objects_are_the_generated_queues() -> None:
    """``generateQueue``: one flavor ``rf``, cpu nominal quota and borrowing limit, the cohort, the
    preemption policies, BestEffortFIFO by default; a LocalQueue per ClusterQueue."""
    cluster = build_cluster(StackModel.from_plain(objects(BASELINE, 2)))
    assert len(cluster.cluster_queues) == 2 * BASELINE.queues.count
    assert sorted(cluster.cohorts) == ["cohort-0", "cohort-1"]
    cq = cluster.cluster_queues[queue_name(BASELINE, 1, 0)]
    assert cq.node.parent is cluster.cohorts["cohort-1"]
    quota = cq.node.quotas[(FLAVOR, RESOURCE)]
    assert (quota.nominal, quota.borrowing_limit, quota.lending_limit) == (20_000, 100_000, None)
    assert (cq.preemption.reclaim_within_cohort, cq.preemption.within_cluster_queue) == (
        "Any",
        "LowerPriority",
    )
    assert cq.strategy == "BestEffortFIFO"
    assert cluster.fair_sharing is None
    assert cluster.local_queues[(cq.name, cq.name)] == cq.name


# --- what the recorder measures --------------------------------------------------------------
def _ev(t: float, wl: str, event: str) -> dict[str, Any]:
    return {"time": t, "workload": wl, "event": event}


def test_summary_counts_the_last_admission_and_integrates_usage() -> None:
    """``recordWLEvent`` sets ``TimeToAdmitMs`` on every transition to Admitted (so the last one
    counts); ``WriteSummary`` counts a never-admitted workload as 0; ``recordCQEvent`` integrates
    usage, and the checker divides by nominal quota times the first-to-last event span."""
    config = replace(
        BASELINE,
        queues=replace(BASELINE.queues, workloads=(replace(BASELINE.queues.workloads[2], count=2),), count=1),
    )
    tr = trace(config, 1)
    first, _ = (f"{e.namespace}/{e.name}" for e in tr.entries)  # submitted at 1.2 s and 2.4 s
    events = [
        _ev(1.2, first, "admitted"),
        _ev(2.0, first, "preempted"),
        _ev(3.0, first, "admitted"),
        _ev(4.0, first, "finished"),
    ]
    s = summarise(config, 1, tr, events)
    large = s.workloads["large"]
    assert large.count == 2 and large.never_admitted == 1 and large.evictions == 1
    assert large.mean_admission_ms == pytest.approx(((3.0 - 1.2) * 1000 + 0) / 2)
    # 20 CPUs for 0.8 s + 1 s, over a nominal 20 CPUs for 4 s
    assert s.usage_percent == pytest.approx(100 * 20 * 1.8 / (20 * 4.0))
    assert s.span_s == 4.0


# --- what the checker asserts ----------------------------------------------------------------
def _summary(usage: float, means: dict[str, float]) -> Summary:
    return Summary("x", 1, {c: ClassFigures(1, m, 0, 0) for c, m in means.items()}, usage, 1.0)


def test_order_comes_from_the_ranges() -> None:
    """Both configurations' maxima, and the means their comments publish, rank the classes the
    same way; that ranking is what the replay must reproduce."""
    for config in (BASELINE, LARGE_SCALE):
        ranges = config.ranges
        assert order(ranges) == sorted(ranges.mean_admission_ms, key=lambda c: ranges.mean_admission_ms[c])
        assert set(order(ranges)) == {w.name for w in config.queues.workloads}


def test_checker_catches_each_broken_figure() -> None:
    ranges = BASELINE.ranges
    ranked = order(ranges)
    good = {c: ranges.max_avg_admission_ms[c] * 0.5 for c in ranked}
    assert failures(_summary(ranges.min_usage_percent["cq"], good), ranges, "cq") == []
    low = failures(_summary(ranges.min_usage_percent["cq"] - 0.1, good), ranges, "cq")
    assert len(low) == 1 and low[0].startswith("ClusterQueueClasses/cq:")
    slow = failures(
        _summary(90.0, {**good, ranked[0]: ranges.max_avg_admission_ms[ranked[0]] + 1}), ranges, "cq"
    )
    assert any(f.startswith(f"WorkloadClasses/{ranked[0]}:") for f in slow)
    swapped = {**good, ranked[0]: good[ranked[1]], ranked[1]: good[ranked[0]]}
    assert any(f.startswith("order:") for f in failures(_summary(90.0, swapped), ranges, "cq"))
    tied = {**good, ranked[1]: good[ranked[2]]}
    assert any(f.startswith("order:") for f in failures(_summary(90.0, tied), ranges, "cq"))


def test_table_marks_what_the_checker_fails() -> None:
    """The README table's verdict column is the checker's, class by class."""
    ranges = BASELINE.ranges
    means = {c: ranges.max_avg_admission_ms[c] * 0.5 for c in order(ranges)}
    means["small"] = ranges.max_avg_admission_ms["small"] + 1000
    rows = {line.split(" | ")[0].strip("| "): line for line in table(BASELINE, _summary(20.0, means))}
    assert rows["small"].endswith("| fail |") and rows["large"].endswith("| pass |")
    assert rows["cq"].endswith("| fail |")


# --- the replay ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def large_scale() -> Summary:
    return replay(LARGE_SCALE, cohorts=1)


def test_replay_passes_the_harness_checker_and_keeps_the_order(large_scale: Summary) -> None:
    """Usage at or above ``clusterQueueClassesMinUsage``, each class's mean time to admission at or
    below its maximum, and the classes' means in the order the ranges rank them."""
    assert failures(large_scale, LARGE_SCALE.ranges, "cq") == []


def test_replay_admits_every_workload_within_quota(large_scale: Summary) -> None:
    queues = LARGE_SCALE.queues
    for wc in queues.workloads:
        figures = large_scale.workloads[wc.name]
        assert figures.count == queues.count * wc.count
        assert figures.never_admitted == 0
    # a cohort's usage cannot exceed the sum of its ClusterQueues' nominal quotas
    assert 0 < large_scale.usage_percent <= 100
