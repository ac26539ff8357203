"""The calibration table of ``whatif/README.md``: simulated figures beside the harness's ranges."""

from __future__ import annotations

from whatif.calibration.checker import failures
from whatif.calibration.harness import MINIMALKUEUE_QPS, HarnessConfig
from whatif.calibration.replay import Summary


def _s(ms: float) -> str:
    return f"{ms / 1000:.1f} s"


def _error(sim_ms: float, ref_ms: float) -> str:
    diff = sim_ms - ref_ms
    return f"{diff / 1000:+.1f} s ({100 * diff / ref_ms:+.0f}%)"


def table(config: HarnessConfig, summary: Summary) -> list[str]:
    qc, ranges = config.queues, config.ranges
    failed = failures(summary, ranges, qc.name)
    total = config.cohorts * qc.count * sum(w.count for w in qc.workloads)
    lines = [
        f"**{config.name}** ({config.cohorts} cohorts x {qc.count} ClusterQueues, {qc.nominal_quota} CPUs nominal, "
        f"borrowing limit {qc.borrowing_limit}, reclaimWithinCohort {qc.reclaim_within_cohort}, withinClusterQueue "
        f"{qc.within_cluster_queue}; {total:,} workloads; replayed: {summary.cohorts} cohort(s))",
        "",
        "| workload class | priority | CPUs x runtime, every | simulator: mean time to admission | harness: mean "
        "| harness: checked max | error vs harness mean | harness checker |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for wc in sorted(qc.workloads, key=lambda w: -w.priority):
        fig = summary.workloads[wc.name]
        ref = ranges.mean_admission_ms[wc.name]
        verdict = "fail" if any(f.startswith(f"WorkloadClasses/{wc.name}:") for f in failed) else "pass"
        lines.append(
            f"| {wc.name} | {wc.priority} | {wc.request} x {wc.runtime_ms / 1000:g} s, every {wc.interval_ms / 1000:g} s "
            f"| {_s(fig.mean_admission_ms)} | {_s(ref)} | {_s(ranges.max_avg_admission_ms[wc.name])} "
            f"| {_error(fig.mean_admission_ms, ref)} | {verdict} |"
        )
    usage_ref = ranges.mean_usage_percent[qc.name]
    usage_ok = not any(f.startswith("ClusterQueueClasses/") for f in failed)
    lines += [
        "",
        "| ClusterQueue class | simulator: usage | harness: mean | harness: checked min | error vs harness mean "
        "| harness checker |",
        "| --- | --- | --- | --- | --- | --- |",
        f"| {qc.name} | {summary.usage_percent:.1f}% | {usage_ref:g}% | {ranges.min_usage_percent[qc.name]:g}% "
        f"| {summary.usage_percent - usage_ref:+.1f} points | {'pass' if usage_ok else 'fail'} |",
        "",
        f"Simulated span (first to last ClusterQueue event): {summary.span_s:g} s; harness: minimalkueue wall time "
        f"{ranges.mean_wall_ms / 1000:.0f} s on average (at most {ranges.max_wall_ms / 1000:.0f} s), while "
        f"{total:,} admissions at its client's {MINIMALKUEUE_QPS} requests/s take at least "
        f"{total / MINIMALKUEUE_QPS:.0f} s.",
    ]
    order_failed = [f for f in failed if f.startswith("order:")]
    lines.append(
        "Order of the classes' means as the ranges rank them: "
        + ("FAILED, " + order_failed[0] if order_failed else "held.")
    )
    return lines
