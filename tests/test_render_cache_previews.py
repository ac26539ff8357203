"""Previews with the render cache cold and warm write the same bytes (issue 44, item 2).

Each stack is previewed twice, each time in its own ``python -m preview`` process, against one
render cache folder that starts empty: the first run renders every chart with Helm and fills it,
the second reads every render (and post-renderer output), the text of ``plan.json`` and
``manifests.yaml`` and the verdicts on large objects back from it.  ``findings.json``,
``manifests.yaml`` and ``plan.json`` must not differ by a byte."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from gpu_batch_policy.facts.charts.render_cache import RENDER_CACHE_ENV

from tests.stack_runner import ROOT

OUTPUTS = ("findings.json", "manifests.yaml", "plan.json")


def _preview(stack: str, out: Path, renders: Path) -> None:
    env = dict(os.environ, **{RENDER_CACHE_ENV: str(renders)})
    done = subprocess.run(
        [sys.executable, "-m", "preview", "--stack", stack, "--out", str(out), "--quiet"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-2000:]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_cold_and_warm_render_cache_write_identical_outputs(tmp_path: Path, stack: str) -> None:
    renders = tmp_path / "renders"
    _preview(stack, tmp_path / "cold", renders)
    stored = sorted(p.name for p in renders.glob("*.json"))
    assert stored, "the cold preview stored its renders"
    _preview(stack, tmp_path / "warm", renders)
    assert sorted(p.name for p in renders.glob("*.json")) == stored, "the warm preview stored nothing new"
    for name in OUTPUTS:
        cold = (tmp_path / "cold" / stack / name).read_bytes()
        warm = (tmp_path / "warm" / stack / name).read_bytes()
        assert cold == warm, f"{stack}: {name} differs between a cold and a warm render cache"
