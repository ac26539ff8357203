"""One offline preview per repo stack file per test process, shared read-only by the tests that
check what it writes.

``python -m preview --stack <stack>`` of an unedited stack file writes the same outputs however
often it runs (``tests/test_deterministic_output.py`` and ``tests/test_render_cache_previews.py``
hold it to that, byte for byte), so the tests that only read ``build/<stack>/`` -- the preview
CLI's per-stack checks, the multi-region stack's per-cluster manifests -- read one preview instead
of running their own (multiregion's took 104 s and 128 s on CI in two tests).  Tests that share a
stack's preview carry the same ``xdist_group`` (:func:`preview_group`), so ``--dist loadgroup``
runs them on one worker, which previews the stack once.  A test that edits the stack, the project
or the environment runs its own preview.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from preview.cli import main


@dataclass(frozen=True)
class StackPreview:
    """What ``main(["--stack", stack, "--out", out, "--quiet"])`` returned and wrote (``out/<stack>/``)."""

    stack: str
    exit_code: int
    folder: Path


def preview_group(stack: str) -> pytest.MarkDecorator:
    """The xdist group of the tests that read ``stack``'s shared preview."""
    return pytest.mark.xdist_group(f"preview-{stack}")


def previewer(root: Path) -> Callable[[str], StackPreview]:
    """Previews each stack at most once, into ``root/<stack>/``; later calls return the first run."""
    done: dict[str, StackPreview] = {}

    def preview(stack: str) -> StackPreview:
        if stack not in done:
            out = root / stack
            code = main(["--stack", stack, "--out", str(out), "--quiet"])
            done[stack] = StackPreview(stack, code, out / stack)
        return done[stack]

    return preview
