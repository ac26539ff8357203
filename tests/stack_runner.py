"""Run a stack file (optionally edited) through the real program under the preview mocks.

Tests state the edit they make to a stack file as data (``{"gpu-batch:gpuPools": [...]}``)
rather than keeping near-copies of stack files, so each test shows exactly what it changes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from preview.harness import RunResult, run_program
from preview.records import RecordedResource
from preview.stack_files import StackFiles, load_stack_files

ROOT = Path(__file__).resolve().parent.parent


def stack_files(stack: str, edits: dict[str, Any] | None = None, drop: tuple[str, ...] = ()) -> StackFiles:
    """The stack's config with whole keys replaced (``edits``) or removed (``drop``)."""
    files = load_stack_files(ROOT, stack)
    config = {k: v for k, v in files.config.items() if k not in drop}
    for key, value in (edits or {}).items():
        config[key] = value if isinstance(value, str) else json.dumps(value)
    return replace(files, config=config)


def program_records(project: Path, stack: str) -> list[RecordedResource]:
    """Every registration of ``project``'s program for ``stack``, as the preview records them."""
    return run_program(project, load_stack_files(project, stack)).resources


def config_value(stack: str, key: str) -> Any:
    """A stack file's value for ``key``, decoded (so tests can edit a copy of it)."""
    text = load_stack_files(ROOT, stack).config[key]
    try:
        return json.loads(text)
    except ValueError:
        return text


def run_stack(stack: str, edits: dict[str, Any] | None = None, drop: tuple[str, ...] = ()) -> RunResult:
    return run_program(ROOT, stack_files(stack, edits, drop))


def of_type(result: RunResult, type_token: str) -> list[RecordedResource]:
    return [r for r in result.resources if r.type == type_token]


def named(result: RunResult, name: str) -> RecordedResource:
    matches = [r for r in result.resources if r.name == name]
    assert len(matches) == 1, f"expected one resource named {name}, got {[r.type for r in matches]}"
    return matches[0]


def custom_objects(result: RunResult, kind: str) -> Iterator[dict[str, Any]]:
    """Inputs of every Kubernetes object of ``kind`` (any API group/version)."""
    for r in result.resources:
        if r.type.startswith("kubernetes:") and r.type.endswith(f":{kind}"):
            yield r.inputs
