"""``make bench``: the offline preview with the policy pack on stacks of 1, 10, 100 and 1,000 teams.

For each size, measured back to back (``--repeat N`` prints min/median of N; the machine is
shared, so the minimum is the cleanest run)::

    teams=N resources=R
      wall_s floor_ratio floor_ratio_matched wall_no_pack_s floor_ratio_no_pack
      wall_noop_pack_s floor_ratio_noop_pack program_s program_floor_s program_ratio
      program_ratio_matched pack_s pack_floor_s pack_ratio protocol_s floor_ratio_protocol
      peak_mib pack_peak_mib cpu_s host_cpu_s pack_cpu_s [baseline_wall_s]
      stages_s program plan manifests policy report analyze_backlog_s analyze_stack_s

* ``wall_s``: the whole ``python -m preview`` run as a user waits for it (interpreter start, the
  program under the SDK mocks with the pack streaming alongside, plan.json, manifests with strict
  CRD validation, the rest of the pack, the report).  ``floor_ratio`` = wall_s / the wall of the
  same *number* of bare resources registered under the same harness, no pack (issue 6's floor,
  which issue 13's target is stated against); ``floor_ratio_matched`` divides by the same floor
  run as the preview runs its program (heap frozen, no teardown at exit: ``benchmarks/floor.py``),
  the stricter figure.
* ``wall_no_pack_s``: the same preview with ``--no-policy``; ``wall_noop_pack_s``: with
  ``--policy-pack`` pointed at the pack floor's pack (as many policies of each kind as the real
  pack, each doing nothing, under the same SDK patch).  Their ``floor_ratio_no_pack`` and
  ``floor_ratio_noop_pack`` are the ratio the preview would have before any rule runs: what the
  program, the outputs and the analyzer protocol alone cost over the floor, which no work on the
  rules can take below.
* ``program_s``: the preview's program stage; ``program_floor_s``: the *same recorded resources*
  (types, names, wire inputs) registered flat under the same mocks and harness
  (``benchmarks/stage_floors.py``, as issue 13 defined it), so ``program_ratio`` is what
  components, typed SDKs and streaming to the pack cost on top of registering;
  ``program_ratio_matched`` divides by that floor run as the preview runs its program (heap
  frozen: no deferred collection), the stricter figure.
* ``pack_s``: the recorded resources sent over the analyzer protocol to the real pack, batch;
  ``pack_floor_s``: the same to a pack of as many policies doing nothing.
* ``protocol_s``: the engine's serial chain alone -- ``Remediate`` then ``Analyze`` for each of
  the same recorded resources, one call at a time, from the analysis host's client (its
  environment) to pulumi-policy's gRPC server with a servicer that answers at once
  (``benchmarks/stage_floors.py`` ``bare_pack``); ``floor_ratio_protocol`` divides it by the
  same floor as ``floor_ratio``.  The preview cannot end before that chain has run, whatever the
  pack and its rules cost: this is the part of ``floor_ratio`` no work in this project can remove.
* ``peak_mib``: the preview process's peak resident set; ``pack_peak_mib``: the pack process's
  own (its ``VmHWM``, read before it stops).
* ``cpu_s``, ``host_cpu_s``, ``pack_cpu_s``: the own CPU seconds (user + system) of the preview
  process, of the analysis host and of the pack, in the same preview run.  On a machine shared
  with other work the wall figures move with the load; these say which process did the work.
* ``stages_s``: seconds per preview stage; ``policy`` is only the wait for the pack once the
  outputs, the report's capacity sections, the cost and the findings' locator (``report``)
  are written: the rest of its work overlaps the program and the outputs.  ``analyze_backlog_s``:
  from the program's end until ``AnalyzeStack`` went out (the ``Analyze`` calls still queued then,
  sent one at a time as the engine sends them); ``analyze_stack_s``: that call's own seconds.
* ``--baseline DIR``: another checkout (e.g. ``git worktree add /tmp/base main``): its own
  preview and program on the same stack file, run right after each of this tree's previews.

Figures are printed, never asserted: speed is measured, not tested.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from benchmarks.stage_floors import bare_pack, flat_project, noop_pack
from preview.engine_grpc import host_environment

ROOT = Path(__file__).resolve().parent.parent
SIZES = (1, 10, 100, 1000)


@dataclass(frozen=True)
class Measurement:
    wall_s: float
    stdout: str


def measure(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> Measurement:
    """Run ``command`` and time it from the outside, as a user waits for it."""
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        )
    return Measurement(wall, done.stdout)


# Every team's ClusterQueue: 1 L4 GPU nominal, may borrow 1 more from the cohort.  Shared as a
# template so 1,000 teams stay under the 128 KiB Pulumi can pass a stack config in.
TEAM_QUEUE_TEMPLATE: dict[str, Any] = {
    "cohort": "ml",
    "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"},
    "admissionChecks": [{"name": "dws", "onFlavors": ["l4"]}],
    "resourceGroups": [
        {
            "flavors": [
                {
                    "name": "l4",
                    "resources": {
                        "cpu": {"nominalQuota": "8", "borrowingLimit": "8"},
                        "memory": {"nominalQuota": "32Gi", "borrowingLimit": "32Gi"},
                        "nvidia.com/gpu": {"nominalQuota": "1", "borrowingLimit": "1"},
                    },
                }
            ]
        }
    ],
}


def team_config(index: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """One team: its ClusterQueue (from the shared template) and its tenancy entry."""
    name = f"t{index:04d}"
    return {"name": name, "template": "team"}, {"name": name, "localQueue": "q", "clusterQueue": name}


def stack_document(teams: int) -> dict[str, Any]:
    """The prod stack's cluster, pools and operators, with ``teams`` generated teams."""
    base = yaml.safe_load((ROOT / "Pulumi.prod.yaml").read_text())["config"]
    pairs = [team_config(i) for i in range(teams)]
    config = {
        key: base[key]
        # prod's monitoring too: its protected cluster requires notification channels (issue 39)
        for key in (
            "gcp:project",
            "gpu-batch:cluster",
            "gpu-batch:kueue",
            "gpu-batch:kuberay",
            "gpu-batch:monitoring",
        )
    }
    config["gpu-batch:gpuPools"] = [
        {
            "name": "l4-queued",
            "machineType": "g2-standard-24",
            "provisioning": "queued",
            "maxNodes": max(1, teams),
        }
    ]
    config["gpu-batch:kueueQueues"] = {
        "resourceFlavors": [{"name": "l4", "pool": "l4-queued"}],
        "admissionChecks": [
            {
                "name": "dws",
                "provisioningClassName": "queued-provisioning.gke.io",
                "managedResources": ["nvidia.com/gpu"],
            }
        ],
        "cohorts": [{"name": "ml"}],
        "clusterQueueTemplates": {"team": TEAM_QUEUE_TEMPLATE},
        "clusterQueues": [q for q, _ in pairs],
    }
    config["gpu-batch:teams"] = [t for _, t in pairs]
    return {"config": config}


def _field(pattern: str, text: str) -> str:
    found = re.search(pattern, text, re.MULTILINE)
    if found is None:
        raise RuntimeError(f"no {pattern!r} in the preview output:\n{text[-2000:]}")
    return found.group(1)


def floor_project(project: Path, resources: int) -> Path:
    project.mkdir()
    (project / "Pulumi.yaml").write_text("name: floor\nruntime: python\n")
    (project / "Pulumi.floor.yaml").write_text(yaml.safe_dump({"config": {"floor:count": str(resources)}}))
    shutil.copy(ROOT / "benchmarks" / "floor_program.py", project / "__main__.py")
    return project


def bench_project(root: Path, source: Path = ROOT, name: str = "project") -> Path:
    """A project under ``root`` running ``source``'s program (its own stacks/ and components/)."""
    project = root / name
    if project.exists():
        return project
    project.mkdir()
    shutil.copy(source / "Pulumi.yaml", project / "Pulumi.yaml")
    shutil.copy(source / "__main__.py", project / "__main__.py")
    for package in ("stacks", "components"):
        (project / package).symlink_to(source / package)
    return project


def preview_command(project: Path, stack: str, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "preview",
        "--project-dir",
        str(project),
        "--stack",
        stack,
        "--out",
        str(out),
        "--quiet",
        *extra,
    ]


def _python_module(module: str, *args: object) -> list[str]:
    return [sys.executable, "-m", module, *(str(a) for a in args)]


def _number(name: str, text: str) -> float:
    return float(_field(rf"{name}=([0-9.]+)", text))


@dataclass(frozen=True)
class Sample:
    """One preview of one size with its floors, all measured back to back."""

    resources: int
    wall_s: float
    floor_wall_s: float
    floor_matched_wall_s: float
    no_pack_wall_s: float
    noop_pack_wall_s: float
    stages: dict[str, float]
    peak_mib: float
    pack_peak_mib: float
    cpu: dict[str, float]
    program_floor_s: float
    program_floor_matched_s: float
    pack_s: float
    pack_floor_s: float
    protocol_s: float
    baseline_wall_s: float | None

    @property
    def figures(self) -> dict[str, float]:
        figures = {
            "wall_s": self.wall_s,
            "floor_ratio": self.wall_s / self.floor_wall_s,
            "floor_ratio_matched": self.wall_s / self.floor_matched_wall_s,
            "wall_no_pack_s": self.no_pack_wall_s,
            "floor_ratio_no_pack": self.no_pack_wall_s / self.floor_wall_s,
            "wall_noop_pack_s": self.noop_pack_wall_s,
            "floor_ratio_noop_pack": self.noop_pack_wall_s / self.floor_wall_s,
            "program_s": self.stages["program"],
            "program_floor_s": self.program_floor_s,
            "program_ratio": self.stages["program"] / self.program_floor_s,
            "program_ratio_matched": self.stages["program"] / self.program_floor_matched_s,
            "pack_s": self.pack_s,
            "pack_floor_s": self.pack_floor_s,
            "pack_ratio": self.pack_s / self.pack_floor_s,
            "protocol_s": self.protocol_s,
            "floor_ratio_protocol": self.protocol_s / self.floor_wall_s,
            "peak_mib": self.peak_mib,
            "pack_peak_mib": self.pack_peak_mib,
            **self.cpu,
        }
        if self.baseline_wall_s is not None:
            figures["baseline_wall_s"] = self.baseline_wall_s
        return figures


def sample(root: Path, project: Path, stack: str, baseline: Path | None) -> Sample:
    """The preview, the baseline's preview (when given), the preview without rules, then every
    floor, back to back."""
    full = measure(preview_command(project, stack, root / "build", "--timings"), ROOT)
    baseline_wall = None
    if baseline is not None:
        # The baseline tree's own preview and program, on the same stack file.
        before = bench_project(root, baseline, f"baseline-{stack}")
        (before / f"Pulumi.{stack}.yaml").write_text((project / f"Pulumi.{stack}.yaml").read_text())
        baseline_wall = measure(preview_command(before, stack, root / "build-baseline"), baseline).wall_s
    count = int(_field(r"(\d+) resources planned", full.stdout))
    timings = json.loads(_field(r"^timings: (.*)$", full.stdout))
    tag = f"{stack}-{time.monotonic_ns()}"
    noop = noop_pack(root / f"noop-{tag}")
    no_pack = measure(preview_command(project, stack, root / "build-no-pack", "--no-policy"), ROOT)
    noop_pack_run = measure(
        preview_command(project, stack, root / "build-noop", "--policy-pack", str(noop)), ROOT
    )
    floor_dir = floor_project(root / f"floor-{tag}", count)
    floor = measure(_python_module("benchmarks.floor", floor_dir), ROOT)
    floor_matched = measure(_python_module("benchmarks.floor", floor_dir, "--as-preview"), ROOT)
    records = root / f"records-{tag}.json"
    measure(_python_module("benchmarks.stage_floors", "record", project, stack, records), ROOT)
    flat_dir = flat_project(records, root / f"flat-{tag}")
    flat = measure(_python_module("benchmarks.stage_floors", "flat", flat_dir), ROOT)
    flat_matched = measure(_python_module("benchmarks.stage_floors", "flat", flat_dir, "--as-preview"), ROOT)
    protocol = measure(
        _python_module("benchmarks.stage_floors", "protocol", records, bare_pack(root / f"bare-{tag}")),
        ROOT,
        host_environment(os.environ),
    )
    packs = {}
    for kind, pack_dir in (("real", ROOT / "policies"), ("noop", noop)):
        done = measure(
            _python_module("benchmarks.stage_floors", "pack", records, pack_dir, project, stack), ROOT
        )
        packs[kind] = _number("pack_s", done.stdout)
    return Sample(
        resources=count,
        wall_s=full.wall_s,
        floor_wall_s=floor.wall_s,
        floor_matched_wall_s=floor_matched.wall_s,
        no_pack_wall_s=no_pack.wall_s,
        noop_pack_wall_s=noop_pack_run.wall_s,
        stages={k: v for k, v in timings.items() if not k.endswith(("_mib", "cpu_s"))},
        peak_mib=timings["peak_mib"],
        pack_peak_mib=timings["pack_peak_mib"],
        cpu={k: timings[k] for k in ("cpu_s", "host_cpu_s", "pack_cpu_s")},
        program_floor_s=_number("program_s", flat.stdout),
        program_floor_matched_s=_number("program_s", flat_matched.stdout),
        pack_s=packs["real"],
        pack_floor_s=packs["noop"],
        protocol_s=_number("protocol_s", protocol.stdout),
        baseline_wall_s=baseline_wall,
    )


def _spread(values: list[float]) -> str:
    """``min/median`` of paired runs (the machine is shared: the minimum is the cleanest run)."""
    return f"{min(values):.2f}/{statistics.median(values):.2f}"


def run(sizes: tuple[int, ...], repeat: int = 1, baseline: Path | None = None) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="gpu-batch-bench-") as tmp:
        root = Path(tmp)
        project = bench_project(root)
        for teams in sizes:
            stack = f"bench-{teams}"
            (project / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(stack_document(teams)))
            samples = [sample(root, project, stack, baseline) for _ in range(repeat)]
            figures = {key: [s.figures[key] for s in samples] for key in samples[0].figures}
            stages = {key: [s.stages.get(key, 0.0) for s in samples] for key in samples[0].stages}
            row = {
                "teams": teams,
                "resources": samples[0].resources,
                "runs": repeat,
                "figures": figures,
                "stages": stages,
            }
            rows.append(row)
            print(f"teams={teams} resources={row['resources']} (min/median of {repeat})", flush=True)
            print("  " + " ".join(f"{key}={_spread(values)}" for key, values in figures.items()), flush=True)
            print(
                "  stages_s " + " ".join(f"{key}={_spread(values)}" for key, values in stages.items()),
                flush=True,
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sizes", default=",".join(str(s) for s in SIZES), help="comma-separated team counts"
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs per size; figures are min/median")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another checkout of this project (e.g. main): its preview runs paired with this one",
    )
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args()
    rows = run(tuple(int(s) for s in args.sizes.split(",")), args.repeat, args.baseline)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
