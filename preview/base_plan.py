"""The recorded plan of a stack as it was at a git ref: its own program, run by its own preview.

Why its own preview: the base's components, config models and pinned charts are what produced
the resources running today, so the comparison is between what `pulumi up` last applied (the
base branch) and what it would apply now.  The ref is exported with ``git archive`` into a
temporary folder (no checkout is touched) and ``python -m preview --no-policy`` runs there with
this interpreter.  Used by ``python -m preview --base`` (the change list) and ``python -m whatif
--base`` (the what-if per queue).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path
from typing import Any

from gpu_batch_policy.facts.charts.render_cache import RENDER_CACHE_ENV, cache_dir
from gpu_batch_policy.facts.charts.resolver import CACHE_ENV, MIRROR_ENV, default_cache, default_mirror

from preview.project import PROJECT_DIR


def _chart_sources() -> dict[str, str]:
    """This checkout's chart cache, render cache and mirror, handed to the base's preview: the
    exported tree lives in a temporary folder, where ``../shared/vendor`` and ``.cache/charts`` do
    not exist (and the render cache would otherwise move beside the chart cache)."""
    env = dict(os.environ)
    env[RENDER_CACHE_ENV] = str(cache_dir().resolve())
    env[CACHE_ENV] = str(default_cache().resolve())
    mirror = default_mirror()
    if mirror is not None:
        env[MIRROR_ENV] = str(mirror.resolve())
    return env


class BasePlanError(Exception):
    """The base could not be exported or previewed; the message is one line for the user."""


def check_ref(ref: str, project_dir: Path = PROJECT_DIR) -> None:
    """BasePlanError, the line :func:`plan_at` gives, when git names no commit ``ref`` here:
    ``python -m preview --base`` asks before the head's own preview runs, so a mistyped ref costs
    one git call, not a whole preview first."""
    found = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
        cwd=project_dir,
        capture_output=True,
        check=False,
    )
    if found.returncode != 0:
        raise BasePlanError(f"--base {ref}: git cannot export it (no commit of that name here)")


def plan_at(ref: str, stack: str, project_dir: Path = PROJECT_DIR) -> dict[str, Any]:
    """``build/<stack>/plan.json`` of the stack at ``ref``; BasePlanError with one line if not."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", ref], cwd=project_dir, capture_output=True, check=False
    )
    if archive.returncode != 0:
        message = archive.stderr.decode(errors="replace").strip().splitlines()
        raise BasePlanError(
            f"--base {ref}: git cannot export it ({message[0] if message else 'unknown ref'})"
        )
    with tempfile.TemporaryDirectory(prefix="gpu-batch-base-") as tmp:
        root = Path(tmp)
        with tarfile.open(fileobj=BytesIO(archive.stdout)) as tar:
            tar.extractall(root, filter="data")
        if not (root / f"Pulumi.{stack}.yaml").exists():
            raise BasePlanError(
                f"--base {ref}: the stack {stack} does not exist there (no Pulumi.{stack}.yaml)"
            )
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "preview",
                "--stack",
                stack,
                "--quiet",
                "--no-policy",
                "--out",
                str(root / "build"),
            ],
            cwd=root,
            env=_chart_sources(),
            capture_output=True,
            text=True,
            check=False,
        )
        plan = root / "build" / stack / "plan.json"
        if not plan.exists():
            lines = (run.stderr or run.stdout).strip().splitlines()
            raise BasePlanError(f"--base {ref}: its preview failed ({lines[-1] if lines else 'no output'})")
        document: dict[str, Any] = json.loads(plan.read_text())
        return document
