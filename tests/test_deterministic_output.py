"""Two previews of the same large generated stack write byte-identical plan.json, manifests.yaml and
report.md (issue 13: a committed report or an artifact must diff only when the stack changed).

Each preview is its own ``python -m preview`` process, so string hashing (``PYTHONHASHSEED``),
the SDK's executor threads and the pack's streaming all differ between the two runs, as they do
between two CI machines.  The stack is the benchmark's generator (``benchmarks/scale.py``) at
``TEAMS`` teams.  What the test needs of the size is that registration order really varies from
run to run (it did before outputs were sorted): at 100 teams it does -- the program run under the
preview's mocks (``preview.harness.run_program``) with ``PYTHONHASHSEED`` 1, 2 and 3 registered
the same 1,277 resources in three different orders -- so the sorting is exercised as at 1,000
teams, where the two previews took 186 s of a CI worker.  1,000 teams are previewed by the
benchmark (``make bench``, for its figures: it does not compare two runs); SARIF's size limit at
GitHub's result cap is ``tests/test_findings_sarif.py``'s, whatever the team count.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
from pathlib import Path

import yaml

from benchmarks.scale import bench_project, preview_command, stack_document
from preview.findings.sarif import MAX_GZIP_BYTES
from tests.stack_runner import ROOT
from tests.test_findings_sarif import sarif_problems

TEAMS = 100
OUTPUTS = ("plan.json", "manifests.yaml", "report.md", "findings.json", "findings.sarif", "cost.json")


def _preview(project: Path, stack: str, out: Path, hash_seed: str) -> None:
    env = dict(os.environ, PYTHONHASHSEED=hash_seed)
    done = subprocess.run(
        preview_command(project, stack, out), cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_two_previews_of_a_large_stack_write_identical_bytes(tmp_path: Path) -> None:
    project = bench_project(tmp_path)
    stack = f"generated-{TEAMS}"
    (project / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(stack_document(TEAMS)))
    _preview(project, stack, tmp_path / "first", hash_seed="1")
    _preview(project, stack, tmp_path / "second", hash_seed="2")
    for name in OUTPUTS:
        first = (tmp_path / "first" / stack / name).read_bytes()
        second = (tmp_path / "second" / stack / name).read_bytes()
        assert first == second, f"{name} differs between two previews of the same stack"
    plan = (tmp_path / "first" / stack / "plan.json").read_text()
    assert plan.count('"urn":') > 5 * TEAMS  # the whole stack was planned, not an early failure
    # The generated stack's SARIF: valid SARIF 2.1.0 with GitHub's required properties, within its limits
    # (10 MB gzip-compressed), and a cost row for every ClusterQueue (issue 32).
    sarif_text = (tmp_path / "first" / stack / "findings.sarif").read_text()
    assert sarif_problems(json.loads(sarif_text)) == []
    assert len(gzip.compress(sarif_text.encode())) < MAX_GZIP_BYTES
    cost = json.loads((tmp_path / "first" / stack / "cost.json").read_text())
    assert len([q for q in cost["queues"] if q["scheduler"] == "kueue"]) >= TEAMS
