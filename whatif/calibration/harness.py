"""Kueue v0.19.2's scheduler performance harness, as facts (nothing upstream is copied).

Source: kubernetes-sigs/kueue at tag ``v0.19.2``, ``test/performance/scheduler/``:

- ``configs/<name>/generator.yaml``: per cohort class, ``count`` cohorts; per queue class,
  ``count`` ClusterQueues per cohort with one flavor ``rf`` (``generator.go``
  ``defaultResourceFlavorName``) and one resource, ``cpu``, with ``nominalQuota`` and
  ``borrowingLimit``, and ``preemption`` ``{reclaimWithinCohort, withinClusterQueue}``; per
  workload set, ``count`` workloads of a class created every ``creationIntervalMs``, each
  ``request`` CPUs in one pod, at ``priority``, running ``runtimeMs`` once admitted.
- ``configs/<name>/rangespec.yaml``: what ``checker/checker_test.go`` ``TestScalability``
  asserts -- per ClusterQueue class a minimum usage (``clusterQueueClassesMinUsage``, percent),
  per workload class a maximum mean time to admission (``wlClassesMaxAvgTimeToAdmissionMs``),
  and a maximum wall time of minimalkueue (``cmd.maxWallMs``).  The file's comments give the
  means measured over the trial runs the maxima were set from; they are kept here too.

The ``tas`` configuration is left out: Topology-Aware Scheduling is not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass

TAG = "v0.19.2"
REPO = "kubernetes-sigs/kueue"
HARNESS = "test/performance/scheduler"
FLAVOR = "rf"  # generator.go defaultResourceFlavorName
RESOURCE = "cpu"  # generator.go generateQueue: Resource(corev1.ResourceCPU, nominal, borrowingLimit)


@dataclass(frozen=True)
class WorkloadClass:
    """One ``workloadsSets`` entry with its single workload template."""

    name: str
    count: int  # workloads per ClusterQueue
    interval_ms: int  # creationIntervalMs: the generator waits this long before each creation
    runtime_ms: int
    priority: int
    request: int  # CPUs, one pod


@dataclass(frozen=True)
class QueueClass:
    name: str
    count: int  # ClusterQueues per cohort
    nominal_quota: int  # CPUs
    borrowing_limit: int  # CPUs
    reclaim_within_cohort: str
    within_cluster_queue: str
    workloads: tuple[WorkloadClass, ...]


@dataclass(frozen=True)
class Ranges:
    """``rangespec.yaml``: the checked bounds, and the measured means its comments publish."""

    min_usage_percent: dict[str, float]  # clusterQueueClassesMinUsage
    max_avg_admission_ms: dict[str, int]  # wlClassesMaxAvgTimeToAdmissionMs
    max_wall_ms: int  # cmd.maxWallMs
    mean_usage_percent: dict[str, float]  # the comments' measured means
    mean_admission_ms: dict[str, int]
    mean_wall_ms: int


@dataclass(frozen=True)
class HarnessConfig:
    name: str
    cohort_class: str
    cohorts: int
    queues: QueueClass
    ranges: Ranges

    def source(self) -> str:
        return f"{REPO}@{TAG} {HARNESS}/configs/{self.name}/{{generator,rangespec}}.yaml"


# configs/baseline/generator.yaml and configs/baseline/rangespec.yaml (5 trial runs)
BASELINE = HarnessConfig(
    name="baseline",
    cohort_class="cohort",
    cohorts=5,
    queues=QueueClass(
        name="cq",
        count=6,
        nominal_quota=20,
        borrowing_limit=100,
        reclaim_within_cohort="Any",
        within_cluster_queue="LowerPriority",
        workloads=(
            WorkloadClass("small", count=350, interval_ms=100, runtime_ms=200, priority=50, request=1),
            WorkloadClass("medium", count=100, interval_ms=500, runtime_ms=500, priority=100, request=5),
            WorkloadClass("large", count=50, interval_ms=1200, runtime_ms=1000, priority=200, request=20),
        ),
    ),
    ranges=Ranges(
        min_usage_percent={"cq": 50.0},
        max_avg_admission_ms={"large": 23_000, "medium": 90_000, "small": 260_000},
        max_wall_ms=425_000,
        mean_usage_percent={"cq": 55.9},
        mean_admission_ms={"large": 16_501, "medium": 76_768, "small": 215_468},
        mean_wall_ms=351_116,
    ),
)

# configs/large-scale/generator.yaml and configs/large-scale/rangespec.yaml (19 periodic runs)
LARGE_SCALE = HarnessConfig(
    name="large-scale",
    cohort_class="cohort",
    cohorts=10,
    queues=QueueClass(
        name="cq",
        count=100,
        nominal_quota=20,
        borrowing_limit=100,
        reclaim_within_cohort="Any",
        within_cluster_queue="LowerPriority",
        workloads=(
            WorkloadClass("small", count=35, interval_ms=60, runtime_ms=150, priority=50, request=1),
            WorkloadClass("medium", count=11, interval_ms=300, runtime_ms=350, priority=100, request=5),
            WorkloadClass("large", count=4, interval_ms=700, runtime_ms=700, priority=200, request=20),
        ),
    ),
    ranges=Ranges(
        min_usage_percent={"cq": 31.6},
        max_avg_admission_ms={"large": 128_000, "medium": 308_000, "small": 841_000},
        max_wall_ms=1_416_000,
        mean_usage_percent={"cq": 38.64},
        mean_admission_ms={"large": 105_604, "medium": 256_413, "small": 700_379},
        mean_wall_ms=1_179_411,
    ),
)

CONFIGS = {c.name: c for c in (BASELINE, LARGE_SCALE)}

# minimalkueue/main.go: the scheduler's Kubernetes client is limited to 50 requests/s (burst 100);
# every admission is at least one Workload status write, which bounds the harness's admission rate.
MINIMALKUEUE_QPS = 50
