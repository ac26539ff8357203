"""Upstream repositories read at test time from a fetched bare git mirror, never copied here.

``../.mirror/<owner>+<name>/repo`` beside the repository (where the search tool's ``fetch`` puts
them), or the directory an environment variable names; tests skip with the reason when absent.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

MIRRORS = Path(__file__).resolve().parents[2].parent / ".mirror"


def git_dir(env: str, mirror: str) -> Path | None:
    configured = os.environ.get(env)
    path = Path(configured) if configured else MIRRORS / mirror / "repo"
    return path if path.is_dir() else None


def require_git_dir(env: str, mirror: str) -> Path:
    found = git_dir(env, mirror)
    if found is None:
        pytest.skip(f"no {mirror} git mirror: fetch it into ../.mirror/{mirror}/repo or set ${env}")
    return found


def show(git: Path, rev_path: str) -> str:
    """``git show <rev>:<path>`` of the mirror."""
    return subprocess.run(
        ["git", f"--git-dir={git}", "show", rev_path], check=True, capture_output=True, text=True
    ).stdout


def kueue_git() -> Path:
    return require_git_dir("GPU_BATCH_KUEUE_GIT", "kubernetes-sigs+kueue")


def accelerated_platforms_git() -> Path:
    return require_git_dir("GPU_BATCH_ACCELERATED_PLATFORMS_GIT", "GoogleCloudPlatform+accelerated-platforms")


AP_VERSION_FILE = "platforms/gke/base/_shared_config/workloads_variables.tf"


def accelerated_platforms_kueue_version(ap: Path) -> str:
    """``kueue_version``'s default in accelerated-platforms' shared workload variables."""
    text = show(ap, f"HEAD:{AP_VERSION_FILE}")
    block = text[text.index('variable "kueue_version"') :]
    return block.split("default", 1)[1].split('"')[1]
