"""Upstream files read at test time from a fetched git mirror, never copied into the repository.

A mirror is a bare git directory (``$<env>``, default ``../.mirror/<owner>+<repo>/repo`` beside
this checkout); when it or the file is absent the calling test is skipped, saying which.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def mirror_file(repo: str, env: str, rev: str, path: str) -> str:
    """``path`` at ``rev`` of the mirror of GitHub ``repo`` (``owner/name``), or skip."""
    owner, name = repo.split("/", 1)
    git_dir = Path(os.environ.get(env, ROOT.parent / ".mirror" / f"{owner}+{name}" / "repo"))
    if shutil.which("git") is None or not git_dir.is_dir():
        pytest.skip(f"no git mirror of {repo} at {git_dir} (set {env})")
    shown = subprocess.run(
        ["git", f"--git-dir={git_dir}", "show", f"{rev}:{path}"], capture_output=True, text=True, check=False
    )
    if shown.returncode != 0:
        pytest.skip(f"{repo} {path} is not at {rev} in the mirror: {shown.stderr.strip()}")
    return shown.stdout
