"""``python -m benchmarks.whatif_bench``: the what-if simulator at scale (issue 14).

1,000 ClusterQueues in 100 cohorts of 10 (each 8 GPUs nominal, may borrow 8 more; preemption
LowerPriority within the queue, reclaim Any in the cohort) under fair sharing (Kueue's
Configuration ``fairSharing`` with ``preemptionStrategies: [LessThanOrEqualToFinalShare]``: with
the default pair, rule S2-b lets a 1-GPU workload and an 8-GPU one of two queues evict each other
at one instant in this trace, which the simulator reports as a livelock) and victims released
30 s after their eviction (plain pods' termination grace period, ``whatif/README.md`` "Victims'
release"; with 0 s, chains of preemptions across three queues repeat at one instant at 25,000
workloads and more, reported as livelocks), and a seeded synthetic trace arriving
at 100,000 workloads per simulated week (about 70% of the GPU quota, with random bursts that
borrow and preempt): gangs of 1-8 GPUs at priorities 0 / 100 / 1000, 10 min to 4 h long.  A size
of N workloads spans N / 100,000 of a week, so the load is the same at every size and the cost
per workload shows whether growth is linear; 100,000 is the full week.  Each size runs in its own
process so that its peak memory is its own; for each it prints::

    workloads=N events=E preemptions=P nominations_per_workload=R wall_s=W cpu_s=C cpu_us_per_workload=U peak_mib=M

``cpu_us_per_workload`` (CPU time, which a shared machine disturbs less than wall time) staying
flat as N doubles is the linear growth the issue asks for.  ``nominations_per_workload`` (heads
the scheduling cycles nominated, over workloads) is what the cost follows: Kueue moves every
parked workload of a cohort back into its queue on each release of quota there
(``QueueInadmissibleWorkloads``), so it grows with the backlog this trace builds.  A last
line times the default what-if of every repo stack (what ``make preview`` adds to the report).
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import random
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SIZES = (12_500, 25_000, 50_000, 100_000)
WEEK = 7 * 24 * 3600
PER_WEEK = 100_000
COHORTS, PER_COHORT = 100, 10
# a preempted pod stops within its termination grace period (Kubernetes default 30 s) before its
# quota is free; with 0 the flapping of this trace collapses into one instant (a livelock)
EVICTION_DELAY = 30.0


def _objects(fair: bool = True) -> list[tuple[str, Any, str, str]]:
    token = "kubernetes:kueue.x-k8s.io/v1beta2:"
    items: list[tuple[str, Any, str, str]] = [
        (token + "ResourceFlavor", {"metadata": {"name": "gpu"}, "spec": {}}, "urn:flavor", "gpu")
    ]
    if fair:  # Kueue's Configuration with fairSharing, rule S2-a only (see the module docstring)
        config = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing: {preemptionStrategies: [LessThanOrEqualToFinalShare]}\n"
        cm = {
            "metadata": {"name": "kueue-manager-config", "namespace": "kueue-system"},
            "data": {"controller_manager_config.yaml": config},
        }
        items.append(("kubernetes:core/v1:ConfigMap", cm, "urn:kueue-config", "kueue-manager-config"))
    for c in range(COHORTS):
        for q in range(PER_COHORT):
            name = f"cq-{c}-{q}"
            spec = {
                "cohortName": f"cohort-{c}",
                "namespaceSelector": {},
                "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"},
                "resourceGroups": [
                    {
                        "coveredResources": ["nvidia.com/gpu"],
                        "flavors": [
                            {
                                "name": "gpu",
                                "resources": [
                                    {"name": "nvidia.com/gpu", "nominalQuota": "8", "borrowingLimit": "8"}
                                ],
                            }
                        ],
                    }
                ],
            }
            lq = {"metadata": {"name": "q", "namespace": name}, "spec": {"clusterQueue": name}}
            items.append(
                (token + "ClusterQueue", {"metadata": {"name": name}, "spec": spec}, f"urn:{name}", name)
            )
            items.append((token + "LocalQueue", lq, f"urn:lq-{name}", "q"))
    return items


def _trace(n: int) -> dict[str, Any]:
    rng = random.Random(14)
    span = WEEK * n // PER_WEEK
    workloads = []
    for i in range(n):
        ns = f"cq-{rng.randrange(COHORTS)}-{rng.randrange(PER_COHORT)}"
        workloads.append(
            {
                "name": f"w{i}",
                "namespace": ns,
                "queue": "q",
                "priority": rng.choice((0, 100, 1000)),
                "submit": rng.randrange(span),
                "duration": rng.randrange(600, 4 * 3600),
                "podSets": [
                    {"name": "main", "count": 1, "requests": {"nvidia.com/gpu": str(rng.randint(1, 8))}}
                ],
            }
        )
    return {"workloads": workloads}


def run_one(n: int, fair: bool = True) -> str:
    from whatif.cluster import build_cluster
    from whatif.pack import StackModel
    from whatif.results import document
    from whatif.simulator import Simulation
    from whatif.trace import parse_trace

    cluster = build_cluster(StackModel.from_plain(_objects(fair)))
    assert (cluster.fair_sharing is not None) == fair
    trace = parse_trace(_trace(n))
    start, cpu_start = time.perf_counter(), time.process_time()
    sim = Simulation(cluster, trace, eviction_delay=EVICTION_DELAY)
    outcome = sim.run()
    doc = document(cluster, outcome)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    preempted = sum(q["preempted"] for q in doc["queues"].values())
    return (
        f"workloads={n} events={len(doc['events'])} preemptions={preempted} "
        f"nominations_per_workload={sim.scheduler.nominations / n:.1f} wall_s={wall:.2f} "
        f"cpu_s={cpu:.2f} cpu_us_per_workload={cpu / n * 1e6:.0f} peak_mib={peak:.0f}"
    )


def stacks_line() -> str:
    from preview.harness import run_program
    from preview.report import what_if_section
    from preview.stack_files import load_stack_files

    parts = []
    for path in sorted(ROOT.glob("Pulumi.*.yaml")):
        stack = path.name.split(".")[1]
        resources = run_program(ROOT, load_stack_files(ROOT, stack)).resources
        start = time.perf_counter()
        what_if_section(stack, resources)
        parts.append(f"{stack}={time.perf_counter() - start:.2f}s")
    return "default what-if per stack (report stage): " + " ".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.whatif_bench", description=__doc__)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES), help="numbers of workloads")
    parser.add_argument(
        "--stacks-only", action="store_true", help="only time the repo stacks' default what-if"
    )
    args = parser.parse_args(argv)
    if args.one:
        print(run_one(args.one), flush=True)
        return 0
    if not args.stacks_only:
        print(f"{COHORTS * PER_COHORT} ClusterQueues in {COHORTS} cohorts, trace over a simulated week")
        for n in args.sizes:
            child = subprocess.run(
                [sys.executable, "-m", "benchmarks.whatif_bench", "--one", str(n)],
                cwd=ROOT, capture_output=True, text=True, check=False,
            )  # fmt: skip
            print(child.stdout.strip() or child.stderr.strip().splitlines()[-1], flush=True)
    print(stacks_line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
