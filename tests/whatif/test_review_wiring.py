"""``make whatif`` and the PR workflow step that puts the per-queue diff in the stack's PR comment."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _offline_steps() -> list[dict[str, Any]]:
    workflow = yaml.safe_load((ROOT / ".github/workflows/pull-request.yml").read_text())
    steps: list[dict[str, Any]] = workflow["jobs"]["offline"]["steps"]
    return steps


def test_the_what_if_diff_lands_in_the_report_before_it_is_commented() -> None:
    steps = _offline_steps()
    names = [s.get("name", "") for s in steps]
    what_if = names.index("What-if against the base branch")
    comment = next(i for i, s in enumerate(steps) if "sticky-pull-request-comment" in str(s.get("uses", "")))
    assert names.index("Offline preview with the policy pack, against the base branch") < what_if < comment
    run = steps[what_if]["run"]
    assert "make -s --no-print-directory whatif" in run and "BASE=FETCH_HEAD" in run
    assert '>> "build/$STACK/report.md"' in run
    assert "!cancelled()" in steps[what_if]["if"], "the diff is wanted even when the preview failed"


def test_make_whatif_runs_the_simulator_with_the_base_ref() -> None:
    dry = subprocess.run(
        ["make", "-n", "whatif", "STACK=prod", "BASE=HEAD~1", f"PY={ROOT}/venv/bin/python", "STAMP="],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "-m whatif --stack prod --fresh --base HEAD~1" in dry.stdout
