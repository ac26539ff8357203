"""Replay a harness configuration through the simulator, and summarise it as the harness does.

What the harness creates (kubernetes-sigs/kueue@v0.19.2 ``test/performance/scheduler/runner``):

- ``generator/generator.go`` ``generateQueue``: per ClusterQueue ``<class>-<set>-<i>-<cohort>``
  (cohort ``<class>-<i>``) one resource group, flavor ``rf``, ``cpu`` with the nominal quota and
  borrowing limit, ``preemption`` {reclaimWithinCohort, withinClusterQueue}, no queueing strategy
  (the CRD default, BestEffortFIFO); a namespace of the same name with a LocalQueue of that name.
- ``generateWlSet``: each workload set runs on its own goroutine from the start; before each
  workload it waits ``creationIntervalMs``, so the k-th (from 0) is created at (k+1) intervals.
  A workload has one pod set ``main`` of one pod requesting ``request`` CPUs and
  ``spec.priority`` = ``priority`` (``utiltestingapi.MakeWorkload(...).Priority(...)``).
- ``controller/controller.go`` ``Reconcile``: an admitted workload is marked Finished once it
  has been admitted for ``runtimeMs`` (its admission time is forgotten on eviction, so a
  re-admitted workload runs its whole runtime again, as the simulator does); an evicted one has
  its quota reservation removed at once (``UnsetQuotaReservationWithCondition``): eviction
  delay 0.
- ``minimalkueue/main.go``: Kueue's core controllers and scheduler with an empty Configuration
  (no fair sharing, no admission checks).

What it measures (``recorder/recorder.go``):

- ``recordWLEvent``: ``TimeToAdmitMs`` is set on every transition to Admitted, from the
  workload's first event (its creation), so a re-admitted workload counts its *last*
  admission; ``WriteSummary``: the class mean is the sum over the class's workloads over their
  count (a never-admitted workload counts 0).
- ``recordCQEvent``: ``CPUUsed`` integrates the ClusterQueue's ``flavorsUsage`` (borrowed usage
  included) over time; ``checker_test.go``: a class's usage is the sum of ``CPUUsed`` over the
  sum of nominal quotas times the time from the class's first ClusterQueue event (creation, time
  0 here) to its last (the last usage change: the last finish).

Cohorts share no quota and, without fair sharing, one cohort's admissions never change another's
(Kueue's cycle admits per cohort tree), so every cohort of a configuration runs the same way and
``cohorts=1`` gives the same class figures as the whole configuration (``python -m
whatif.calibration --cohorts 0`` runs them all and shows it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from whatif.calibration.harness import FLAVOR, RESOURCE, HarnessConfig
from whatif.pack import StackModel
from whatif.run import simulate
from whatif.trace import Trace, parse_trace

API = "kubernetes:kueue.x-k8s.io/v1beta2:"
Plain = tuple[str, Any, str, str]


def cohort_name(config: HarnessConfig, c: int) -> str:
    return f"{config.cohort_class}-{c}"


def queue_name(config: HarnessConfig, c: int, q: int) -> str:
    """``generateQueue``: ``<class>-<queueSetIdx>-<queueIndex>-<cohort>`` (one queue set)."""
    return f"{config.queues.name}-0-{q}-{cohort_name(config, c)}"


def objects(config: HarnessConfig, cohorts: int) -> list[Plain]:
    """The ResourceFlavor, ClusterQueues and LocalQueues of the first ``cohorts`` cohorts."""
    qc = config.queues
    items: list[Plain] = [(API + "ResourceFlavor", {"metadata": {"name": FLAVOR}, "spec": {}}, "rf", FLAVOR)]
    for c in range(cohorts):
        for q in range(qc.count):
            name = queue_name(config, c, q)
            quota = {
                "name": RESOURCE,
                "nominalQuota": str(qc.nominal_quota),
                "borrowingLimit": str(qc.borrowing_limit),
            }
            spec = {
                "cohortName": cohort_name(config, c),
                "namespaceSelector": {},
                "resourceGroups": [
                    {"coveredResources": [RESOURCE], "flavors": [{"name": FLAVOR, "resources": [quota]}]}
                ],
                "preemption": {
                    "reclaimWithinCohort": qc.reclaim_within_cohort,
                    "withinClusterQueue": qc.within_cluster_queue,
                },
            }
            lq = {"metadata": {"name": name, "namespace": name}, "spec": {"clusterQueue": name}}
            items.append(
                (API + "ClusterQueue", {"metadata": {"name": name}, "spec": spec}, f"cq/{name}", name)
            )
            items.append((API + "LocalQueue", lq, f"lq/{name}", name))
    return items


def trace(config: HarnessConfig, cohorts: int) -> Trace:
    """Every workload the generator creates in the first ``cohorts`` cohorts, in seconds.

    Creation order at one instant (the generator's goroutines race): cohort, queue, then set.
    """
    rows: list[tuple[int, int, int, int, dict[str, Any]]] = []
    for c in range(cohorts):
        for q in range(config.queues.count):
            ns = queue_name(config, c, q)
            for s, wc in enumerate(config.queues.workloads):
                for k in range(wc.count):
                    created_ms = (k + 1) * wc.interval_ms
                    wl = {
                        "name": f"{wc.name}-{s}-{k}-0",  # generateWlSet: <class>-<set>-<si>-<i>
                        "namespace": ns,
                        "queue": ns,
                        "priority": wc.priority,
                        "submit": created_ms / 1000,
                        "duration": wc.runtime_ms / 1000,
                        "podSets": [{"name": "main", "count": 1, "requests": {RESOURCE: str(wc.request)}}],
                    }
                    rows.append((created_ms, c, q, s, wl))
    rows.sort(key=lambda r: r[:4])
    return parse_trace({"workloads": [r[4] for r in rows]})


@dataclass(frozen=True)
class ClassFigures:
    count: int
    mean_admission_ms: float  # recorder: mean of (last admission - creation)
    never_admitted: int
    evictions: int


@dataclass(frozen=True)
class Summary:
    config: str
    cohorts: int
    workloads: dict[str, ClassFigures]
    usage_percent: float  # the ClusterQueue class's usage, as checker_test.go computes it
    span_s: float  # first to last ClusterQueue event


def _class_of(config: HarnessConfig) -> dict[str, str]:
    return {f"{wc.name}-{s}": wc.name for s, wc in enumerate(config.queues.workloads)}


def summarise(config: HarnessConfig, cohorts: int, tr: Trace, events: list[dict[str, Any]]) -> Summary:
    class_prefix = _class_of(config)
    entries = {f"{e.namespace}/{e.name}": e for e in tr.entries}
    cls = {key: class_prefix[e.name.rsplit("-", 2)[0]] for key, e in entries.items()}
    last_admitted: dict[str, float] = {}
    evictions: dict[str, int] = dict.fromkeys(class_prefix.values(), 0)
    running: dict[str, float] = {}
    cpu_seconds = 0.0
    end = 0.0
    for ev in events:
        key, kind, t = ev["workload"], ev["event"], float(ev["time"])
        if kind == "admitted":
            last_admitted[key] = t
            running[key] = t
        elif kind in ("preempted", "finished") and key in running:
            cpu = sum(ps.total()[RESOURCE] for ps in entries[key].pod_sets) / 1000
            cpu_seconds += cpu * (t - running.pop(key))
            end = max(end, t)
            if kind == "preempted":
                evictions[cls[key]] += 1
    per_class: dict[str, list[float]] = {name: [] for name in class_prefix.values()}
    never = dict.fromkeys(per_class, 0)
    for key, e in entries.items():
        if key in last_admitted:
            per_class[cls[key]].append((last_admitted[key] - e.submit) * 1000)
        else:
            per_class[cls[key]].append(0.0)  # WriteSummary: TimeToAdmitMs stays 0
            never[cls[key]] += 1
    nominal = config.queues.nominal_quota * config.queues.count * cohorts
    return Summary(
        config=config.name,
        cohorts=cohorts,
        workloads={
            name: ClassFigures(len(v), sum(v) / len(v), never[name], evictions[name])
            for name, v in per_class.items()
        },
        usage_percent=100 * cpu_seconds / (nominal * end) if end > 0 else 0.0,
        span_s=end,
    )


def replay(config: HarnessConfig, cohorts: int = 1) -> Summary:
    """Simulate the first ``cohorts`` cohorts of ``config`` (0: all of them) and summarise."""
    n = cohorts or config.cohorts
    tr = trace(config, n)
    doc = simulate(StackModel.from_plain(objects(config, n)), tr)
    return summarise(config, n, tr, doc["events"])
