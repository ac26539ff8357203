"""``make bench``: the offline preview with the policy pack on stacks of 1, 10, 100 and 1,000 teams.

For each size it prints one line::

    teams=N resources=R wall_s=W peak_mib=M floor_ratio=F

``wall_s`` is the whole ``python -m preview`` run (interpreter start, the program under the SDK
mocks, plan.json, manifests with strict CRD validation, the policy pack over gRPC, the report) as
a user waits for it; ``peak_mib`` the largest resident set of that process or the pack process it
starts.  The *floor* is the same number of resources registered bare -- no components, no policy
pack -- under the same mocks and harness, measured in the same run: ``floor_ratio`` = wall / floor.
A second line per size says where the time went (seconds per preview stage).

Targets (issue 6): 1,000 teams within 30 s and 1.5 GiB on a 2-core machine, floor_ratio <= 2,
cost linear in teams.  Figures are printed, never asserted: speed is measured, not tested.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
SIZES = (1, 10, 100, 1000)


@dataclass(frozen=True)
class Measurement:
    wall_s: float
    stdout: str


def measure(command: list[str], cwd: Path) -> Measurement:
    """Run ``command`` and time it from the outside, as a user waits for it."""
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
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
        key: base[key] for key in ("gcp:project", "gpu-batch:cluster", "gpu-batch:kueue", "gpu-batch:kuberay")
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


def bench_project(root: Path) -> Path:
    project = root / "project"
    project.mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", project / "Pulumi.yaml")
    shutil.copy(ROOT / "__main__.py", project / "__main__.py")
    for package in ("stacks", "components"):
        (project / package).symlink_to(ROOT / package)
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


def run(sizes: tuple[int, ...]) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="gpu-batch-bench-") as tmp:
        root = Path(tmp)
        project = bench_project(root)
        for teams in sizes:
            stack = f"bench-{teams}"
            (project / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(stack_document(teams)))
            full = measure(preview_command(project, stack, root / "build", "--timings"), ROOT)
            count = int(_field(r"(\d+) resources planned", full.stdout))
            timings = json.loads(_field(r"^timings: (.*)$", full.stdout))
            floor = measure(
                [
                    sys.executable,
                    "-m",
                    "benchmarks.floor",
                    str(floor_project(root / f"floor-{teams}", count)),
                ],
                ROOT,
            )
            row = {
                "teams": teams,
                "resources": count,
                "wall_s": round(full.wall_s, 2),
                "peak_mib": round(max(timings.pop("peak_mib"), timings.pop("pack_peak_mib"))),
                "floor_ratio": round(full.wall_s / floor.wall_s, 2),
                "floor_wall_s": round(floor.wall_s, 2),
                "stages": timings,
            }
            rows.append(row)
            print(
                f"teams={teams} resources={count} wall_s={row['wall_s']} peak_mib={row['peak_mib']} "
                f"floor_ratio={row['floor_ratio']}",
                flush=True,
            )
            print(f"  floor_wall_s={row['floor_wall_s']} stages_s={json.dumps(timings)}", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sizes", default=",".join(str(s) for s in SIZES), help="comma-separated team counts"
    )
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args()
    rows = run(tuple(int(s) for s in args.sizes.split(",")))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
