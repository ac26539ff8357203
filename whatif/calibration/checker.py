"""What the harness's checker asserts, applied to a simulated run.

kubernetes-sigs/kueue@v0.19.2 ``test/performance/scheduler/checker/checker_test.go``
``TestScalability``: subtest ``ClusterQueueClasses`` fails a class whose usage is below
``clusterQueueClassesMinUsage``; subtest ``WorkloadClasses`` fails a class whose mean time to
admission is above ``wlClassesMaxAvgTimeToAdmissionMs``.  ``CommandStats`` (minimalkueue's wall
time) has no simulated counterpart and is not applied.

The ranges also imply an order: the classes' maxima (and the measured means in the file's
comments) rank the classes' times to admission, highest-priority class first.  ``order`` is that
ranking, taken from the ranges, never from a simulated run.
"""

from __future__ import annotations

from itertools import pairwise

from whatif.calibration.harness import Ranges
from whatif.calibration.replay import Summary


def order(ranges: Ranges) -> list[str]:
    """Workload classes from the shortest to the longest time to admission the ranges allow."""
    return sorted(ranges.max_avg_admission_ms, key=lambda c: ranges.max_avg_admission_ms[c])


def failures(summary: Summary, ranges: Ranges, queue_class: str) -> list[str]:
    """One line per failed assertion: the checker's two, then the ranges' order of the classes."""
    out: list[str] = []
    floor = ranges.min_usage_percent[queue_class]
    if summary.usage_percent < floor:
        out.append(
            f"ClusterQueueClasses/{queue_class}: usage {summary.usage_percent:.2f}% is below {floor:.2f}%"
        )
    for name, figures in sorted(summary.workloads.items()):
        ceiling = ranges.max_avg_admission_ms.get(name)
        if ceiling is None:
            out.append(f"WorkloadClasses/{name}: a class the ranges do not name")
        elif figures.mean_admission_ms > ceiling:
            out.append(
                f"WorkloadClasses/{name}: mean time to admission {figures.mean_admission_ms:.0f} ms is above {ceiling} ms"
            )
    ranked = order(ranges)
    means = [summary.workloads[c].mean_admission_ms for c in ranked if c in summary.workloads]
    if any(a >= b for a, b in pairwise(means)):
        got = ", ".join(
            f"{c} {summary.workloads[c].mean_admission_ms:.0f} ms" for c in ranked if c in summary.workloads
        )
        out.append(f"order: expected mean times to admission rising as {' < '.join(ranked)}; got {got}")
    return out
