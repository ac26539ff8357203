"""``python -m benchmarks.whatif_bench``: the what-if simulator at scale (issues 14 and 22).

1,000 ClusterQueues in 100 cohorts of 10 (each 8 GPUs nominal, may borrow 8 more; preemption
LowerPriority within the queue, reclaim Any in the cohort) under fair sharing (Kueue's
Configuration ``fairSharing`` with ``preemptionStrategies: [LessThanOrEqualToFinalShare]``: with
the default pair, rule S2-b lets a 1-GPU workload and an 8-GPU one of two queues evict each other
at one instant in this trace, which the simulator reports as a livelock) and victims released
30 s after their eviction (plain pods' termination grace period, ``whatif/README.md`` "Victims'
release"; with 0 s, chains of preemptions across three queues repeat at one instant, reported as
livelocks).  A seeded synthetic trace arrives at 100,000 workloads per simulated week: gangs of
1-8 GPUs in random queues at priorities 0 / 100 / 1000, each running 10 min to a maximum.  A size
of N workloads spans N / 100,000 of a week, so the arrival rate is the same at every size; 100,000
is the full week.

Two loads, by the longest run (offered load: GPU-seconds asked for over the nominal GPU quota):

- **steady**, runs up to 2.8 h, 50% offered.  The backlog stays level, so the work Kueue itself
  does per workload is the same at every size: the cost per workload staying flat as N doubles is
  the simulator's linear growth, and 100,000 workloads is the issue's scale target (at most 20 s
  of CPU).
- **overloaded**, runs up to 4 h, 70% offered: the previous benchmark's trace.  Preempted
  workloads restart from the beginning, so reclaims and priority preemptions (half of all
  workloads at 200,000) push demand past what the quota serves and the backlog grows for as long
  as the trace runs.  Kueue moves every parked workload of a cohort back into its queue on each
  release of quota there (``QueueInadmissibleWorkloads``) and nominates it again, so the
  nominations per workload -- Kueue's own work -- grow with the trace (5.1 at 12,500, 11.3 at
  100,000, 15.1 at 200,000); a faithful simulator follows.  ``cpu_us_per_nomination`` shows that
  the cost of each stays flat.

Each size runs in its own process so that its peak memory is its own; for each it prints::

    load=L workloads=N events=E preemptions=P nominations_per_workload=R not_run=S wall_s=W cpu_s=C cpu_us_per_workload=U cpu_us_per_nomination=V peak_mib=M events_sha256=H code=K

(CPU time, which a shared machine disturbs less than wall time; ``not_run``: the share of Kueue's
nominations whose verdict the simulator knew without running them, ``whatif.fairsharing.verdicts``;
``events_sha256``: the first 12 hex
digits of the SHA-256 of the events' JSON, so a change meant to leave every event as it was can be
checked against the figure before it; ``code``: ``compiled`` when the simulator's modules ran as
the mypyc build of these sources, ``make whatif-compiled`` (``whatif.compiled``), else ``python``;
``GPU_BATCH_WHATIF_COMPILED=0`` runs pure Python.)  When 100,000 is among the sizes, a line then gives the CPU
seconds of both 100,000-workload traces against issue 44's goal (the overloaded one within 20 s).  A last line times the default
what-if of every repo stack (what ``make preview`` adds to the report).  Figures are printed,
never asserted.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from whatif.simulator import Simulation

ROOT = Path(__file__).resolve().parent.parent
SIZES = (12_500, 25_000, 50_000, 100_000)
WEEK = 7 * 24 * 3600
PER_WEEK = 100_000
COHORTS, PER_COHORT = 100, 10
NOMINAL_GPUS, SHORTEST_RUN = 8, 600
GANG_GPUS = (1, 8)  # a gang asks for a uniform number of GPUs in this range
# load -> the longest run in seconds (runs are uniform from SHORTEST_RUN up to it)
LONGEST_RUN = {"steady": 10_153, "overloaded": 4 * 3600}
# a preempted pod stops within its termination grace period (Kubernetes default 30 s) before its
# quota is free; with 0 the flapping of this trace collapses into one instant (a livelock)
EVICTION_DELAY = 30.0
# issue 44 item 3: the what-if on the overloaded trace of this many workloads within this CPU time
TARGET_SIZE, TARGET_CPU_S = 100_000, 20.0


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
                                    {
                                        "name": "nvidia.com/gpu",
                                        "nominalQuota": str(NOMINAL_GPUS),
                                        "borrowingLimit": "8",
                                    }
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


def offered_load(longest_run: int) -> float:
    """GPU-seconds the trace asks for per second, over the nominal GPU quota of all queues."""
    mean_run = (SHORTEST_RUN + longest_run - 1) / 2
    quota = COHORTS * PER_COHORT * NOMINAL_GPUS
    mean_gpus = sum(GANG_GPUS) / 2
    return PER_WEEK / WEEK * mean_gpus * mean_run / quota


def _trace(n: int, longest_run: int = LONGEST_RUN["overloaded"]) -> dict[str, Any]:
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
                "duration": rng.randrange(SHORTEST_RUN, longest_run),
                "podSets": [
                    {"name": "main", "count": 1, "requests": {"nvidia.com/gpu": str(rng.randint(*GANG_GPUS))}}
                ],
            }
        )
    return {"workloads": workloads}


def simulation(n: int, load: str = "overloaded", fair: bool = True) -> Simulation:
    """The benchmark's simulation of ``n`` workloads at ``load``, not yet run (also what
    ``tests/whatif/test_overloaded_trace_events.py`` runs, smaller)."""
    from whatif.cluster import build_cluster
    from whatif.pack import StackModel
    from whatif.simulator import Simulation
    from whatif.trace import parse_trace

    cluster = build_cluster(StackModel.from_plain(_objects(fair)))
    assert (cluster.fair_sharing is not None) == fair
    return Simulation(cluster, parse_trace(_trace(n, LONGEST_RUN[load])), eviction_delay=EVICTION_DELAY)


def run_one(n: int, fair: bool = True, load: str = "overloaded", code: str = "python") -> str:
    from whatif.results import document

    sim = simulation(n, load, fair)
    start, cpu_start = time.perf_counter(), time.process_time()
    outcome = sim.run()
    doc = document(sim.cluster, outcome)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    preempted = sum(q["preempted"] for q in doc["queues"].values())
    nominations = sim.scheduler.nominations
    verdicts = sim.scheduler.verdicts
    not_run = verdicts.repeated / max(1, nominations) if verdicts is not None else 0.0
    digest = hashlib.sha256(json.dumps(doc["events"]).encode()).hexdigest()[:12]
    return (
        f"load={load} workloads={n} events={len(doc['events'])} preemptions={preempted} "
        f"nominations_per_workload={nominations / n:.1f} not_run={not_run:.0%} wall_s={wall:.2f} cpu_s={cpu:.2f} "
        f"cpu_us_per_workload={cpu / n * 1e6:.0f} cpu_us_per_nomination={cpu / max(1, nominations) * 1e6:.0f} "
        f"peak_mib={peak:.0f} events_sha256={digest} code={code}"
    )


def target_line(cpu: dict[str, str]) -> str:
    """The CPU seconds of the 100,000-workload traces against issue 44's goal (item 3)."""
    found = " ".join(f"{load}={cpu[load]}" for load in sorted(cpu))
    return f"what-if at {TARGET_SIZE:,} workloads, CPU s: {found} (goal: overloaded <= {TARGET_CPU_S:g})"


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
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.whatif_bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES), help="numbers of workloads")
    parser.add_argument(
        "--loads", nargs="*", choices=sorted(LONGEST_RUN), default=list(LONGEST_RUN), help="trace loads"
    )
    parser.add_argument(
        "--stacks-only", action="store_true", help="only time the repo stacks' default what-if"
    )
    args = parser.parse_args(argv)
    if args.one:
        from whatif.compiled import activate

        code = activate().split()[0]  # before the simulator's modules are imported
        print(run_one(args.one, load=args.loads[0], code=code), flush=True)
        return 0
    at_target: dict[str, str] = {}
    if not args.stacks_only:
        print(
            f"{COHORTS * PER_COHORT} ClusterQueues in {COHORTS} cohorts, {PER_WEEK:,} workloads per simulated week"
        )
        for load in args.loads:
            longest = LONGEST_RUN[load]
            print(
                f"{load}: runs of {SHORTEST_RUN // 60} min to {longest / 3600:.1f} h, offered load "
                f"{offered_load(longest):.0%} of the nominal GPU quota"
            )
            for n in args.sizes:
                child = subprocess.run(
                    [sys.executable, "-m", "benchmarks.whatif_bench", "--one", str(n), "--loads", load],
                    cwd=ROOT, capture_output=True, text=True, check=False,
                )  # fmt: skip
                line = child.stdout.strip() or child.stderr.strip().splitlines()[-1]
                print(line, flush=True)
                found = re.search(r" cpu_s=([0-9.]+) ", line)
                if n == TARGET_SIZE and found:
                    at_target[load] = found.group(1)
        if at_target:
            print(target_line(at_target), flush=True)
    print(stacks_line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
