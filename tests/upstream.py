"""Upstream files the tests read, never copied into the repository: one helper for all of them.

Where a file comes from, in order:

1. ``../shared/upstream/<owner>+<repo>/<ref>/<path>`` beside this checkout (``$GPU_BATCH_UPSTREAM``
   names another folder): byte-for-byte ``git show <ref>:<path>``, listed in its ``SOURCE.tsv``.
   CI has it, so a test that reads only such files runs there, never skips;
2. a fetched bare git mirror, ``../.mirror/<owner>+<repo>/repo`` (or the folder ``$<env>`` names);
3. neither: the test is skipped, naming both places.

A file of a repository's default branch is read at the commit it was stored at
(:data:`DEFAULT_BRANCH_PINS`), never at a mirror's moving ``HEAD``.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STORE = Path(os.environ.get("GPU_BATCH_UPSTREAM", ROOT.parent / "shared" / "upstream"))
MIRRORS = ROOT.parent / ".mirror"

# The commit each default-branch file was read at (``../shared/upstream/SOURCE.tsv``, ref
# "(default branch head when fetched)"); ``test_upstream.py`` checks these against that file.
DEFAULT_BRANCH_PINS = {
    "GoogleCloudPlatform/accelerated-platforms": "9320f3b27aa0998e9607829ad6e9695d3514a8ef",
    "GoogleCloudPlatform/gke-fleet-management": "dbf58b5eaa0d5eb0a4f780582e217ee28ab920b3",
    "ai-on-gke/tutorials-and-examples": "df226554de59e8ff8e6632abf3a852af85963f3c",
}


def _folder(repo: str) -> str:
    owner, name = repo.split("/", 1)
    return f"{owner}+{name}"


def pinned(repo: str) -> str:
    """The commit a default-branch read of ``repo`` is pinned to."""
    return DEFAULT_BRANCH_PINS[repo]


def mirror(repo: str, env: str | None = None) -> Path | None:
    """The fetched bare mirror of ``repo`` (``$env`` first), or None."""
    configured = os.environ.get(env) if env else None
    path = Path(configured) if configured else MIRRORS / _folder(repo) / "repo"
    return path if shutil.which("git") and path.is_dir() else None


def _git(git_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True, check=False)


def upstream_file(repo: str, ref: str, path: str, *, env: str | None = None) -> str:
    """``path`` of GitHub ``repo`` (``owner/name``) at ``ref`` (a tag or a full commit), or skip."""
    stored = STORE / _folder(repo) / ref / path
    if stored.is_file():
        return stored.read_text(encoding="utf-8")
    git_dir = mirror(repo, env)
    if git_dir is None:
        pytest.skip(f"{repo} {path}@{ref}: not in {STORE} and no git mirror (fetch it or set ${env})")
    shown = _git(git_dir, "show", f"{ref}:{path}")
    if shown.returncode != 0:
        pytest.skip(f"{repo} {path} is not at {ref} in {STORE} nor in the mirror: {shown.stderr.strip()}")
    return shown.stdout


def upstream_listing(repo: str, ref: str, folder: str, *, env: str | None = None) -> list[str]:
    """The file names directly in ``folder`` of ``repo`` at ``ref``: from the mirror's tree when
    there is one (the whole folder), else from the store (the files the tests read), or skip."""
    git_dir = mirror(repo, env)
    if git_dir is not None:
        listed = _git(git_dir, "ls-tree", "--name-only", f"{ref}:{folder}")
        if listed.returncode == 0:
            return listed.stdout.split()
    stored = STORE / _folder(repo) / ref / folder
    if stored.is_dir():
        return sorted(p.name for p in stored.iterdir() if p.is_file())
    pytest.skip(f"{repo} {folder}@{ref}: not in {STORE} and no git mirror (fetch it or set ${env})")


def stored_sources() -> list[dict[str, str]]:
    """The rows of ``SOURCE.tsv`` in the store (empty when there is no store)."""
    table = STORE / "SOURCE.tsv"
    if not table.is_file():
        return []
    with table.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def kueue_file(ref: str, path: str) -> str:
    """A file of kubernetes-sigs/kueue at ``ref``."""
    return upstream_file("kubernetes-sigs/kueue", ref, path, env="GPU_BATCH_KUEUE_GIT")


ACCELERATED_PLATFORMS = "GoogleCloudPlatform/accelerated-platforms"
AP_VERSION_FILE = "platforms/gke/base/_shared_config/workloads_variables.tf"


def accelerated_platforms_file(path: str) -> str:
    """A file of accelerated-platforms at its pinned default-branch commit."""
    return upstream_file(
        ACCELERATED_PLATFORMS, pinned(ACCELERATED_PLATFORMS), path, env="GPU_BATCH_ACCELERATED_PLATFORMS_GIT"
    )


def accelerated_platforms_kueue_version() -> str:
    """``kueue_version``'s default in accelerated-platforms' shared workload variables."""
    text = accelerated_platforms_file(AP_VERSION_FILE)
    block = text[text.index('variable "kueue_version"') :]
    return block.split("default", 1)[1].split('"')[1]


def show(git_dir: Path, ref: str, path: str) -> str:
    """``git show <ref>:<path>`` of a mirror :func:`mirror` found (for tests that walk a whole tree)."""
    shown = _git(git_dir, "show", f"{ref}:{path}")
    if shown.returncode != 0:
        raise FileNotFoundError(f"{path} is not at {ref} in {git_dir}: {shown.stderr.strip()}")
    return shown.stdout
