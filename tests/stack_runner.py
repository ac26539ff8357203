"""Run a stack file (optionally edited) through the real program under the preview mocks.

Tests state the edit they make to a stack file as data (``{"gpu-batch:gpuPools": [...]}``)
rather than keeping near-copies of stack files, so each test shows exactly what it changes.

:func:`unedited_run` is one run of an unedited stack file per test process, handed out as a
private copy: ~100 call sites in 54 files ran the same six stack files afresh (1-10 s each on the
2-core machine).  A run of a stack file records the same resources however often it runs (the
preview's outputs are byte-identical run to run, ``tests/test_deterministic_output.py``); only the
order of registrations, and of a record's dependencies, follows the program's concurrency, so a
process's shared run fixes one such order for its callers.  Only a caller that changes neither
the program nor its environment first may take it; one that monkeypatches anything the program
reads, or checks that two runs agree, runs its own (:func:`run_stack`).
"""

from __future__ import annotations

import json
import marshal
from collections.abc import Iterator
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from preview.harness import RunResult, run_program
from preview.records import RecordedResource
from preview.stack_files import StackFiles, load_stack_files
from stacks.loader import _decode

ROOT = Path(__file__).resolve().parent.parent


def stack_files(stack: str, edits: dict[str, Any] | None = None, drop: tuple[str, ...] = ()) -> StackFiles:
    """The stack's config with whole keys replaced (``edits``) or removed (``drop``)."""
    files = load_stack_files(ROOT, stack)
    config = {k: v for k, v in files.config.items() if k not in drop}
    for key, value in (edits or {}).items():
        config[key] = value if isinstance(value, str) else json.dumps(value)
    return replace(files, config=config)


def program_records(project: Path, stack: str) -> list[RecordedResource]:
    """Every registration of ``project``'s program for ``stack``, as the preview records them.

    For this repo's own stack files, a copy of the process's shared run (:func:`unedited_run`);
    another project's program (a fixture project) runs afresh."""
    if project.resolve() == ROOT:
        return unedited_run(stack).resources
    return run_program(project, load_stack_files(project, stack)).resources


def config_value(stack: str, key: str) -> Any:
    """A stack file's value for ``key``, decoded (so tests can edit a copy of it)."""
    return _decode(load_stack_files(ROOT, stack).config[key])


def plain_project_keys(stack: str) -> dict[str, Any]:
    """A repo stack file's ``gpu-batch:`` keys that are not secrets, by full key, in file order.

    Each value decoded as the program decodes it (``stacks.loader``: JSON when it parses, else the
    text), so a test can validate them as the program does or edit a copy of one.
    """
    files = load_stack_files(ROOT, stack)
    return {
        key: _decode(text)
        for key, text in files.config.items()
        if key.startswith("gpu-batch:") and key not in files.secret_keys
    }


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


class _SharedRun:
    """A run kept as immutable parts: each record without its containers, and the containers marshalled.

    A handout unmarshals the containers afresh, so no caller can reach another's (or the kept)
    dicts and lists.  Measured on the six stack files (2026-11-29, 2-core VM, load 2.5-5, min of
    3-5 each): a handout took 0.011-0.123 s, ``copy.deepcopy`` of the run 0.040-1.8 s, the first
    run 1.7-9.7 s.  Freezing the run once instead (read-only mappings and tuples) took 0.01-0.56 s
    and would hand out types ``yaml.safe_dump`` refuses (it represents ``dict``/``list`` by exact
    type).  The bytes (0.9-5.9 MB a stack) also keep the process's heap, and every later garbage
    collection, free of six runs' object graphs.
    """

    def __init__(self, run: RunResult) -> None:
        self.skeletons: list[RecordedResource] = []
        containers: list[dict[str, Any]] = []
        for record in run.resources:
            mutable = {f.name: getattr(record, f.name) for f in fields(record)}
            mutable = {name: value for name, value in mutable.items() if isinstance(value, (dict, list))}
            containers.append(mutable)
            self.skeletons.append(replace(record, **{name: type(value)() for name, value in mutable.items()}))
        # Wire values are JSON-like (dict, list, str, float, bool, None): marshal's types exactly;
        # anything else raises ValueError here rather than being shared.
        self.blob = marshal.dumps((containers, run.outputs))

    def handout(self) -> RunResult:
        containers, outputs = marshal.loads(self.blob)
        resources = [
            replace(skeleton, **parts) for skeleton, parts in zip(self.skeletons, containers, strict=True)
        ]
        return RunResult(resources=resources, outputs=outputs)


_UNEDITED: dict[str, _SharedRun] = {}


def unedited_run(stack: str) -> RunResult:
    """``run_stack(stack)``, run once per test process; each call gets its own copy to change at will.

    For callers that patch nothing first (module docstring): the first call in a process runs
    the program with whatever the environment is then.
    """
    if stack not in _UNEDITED:
        _UNEDITED[stack] = _SharedRun(run_stack(stack))
    return _UNEDITED[stack].handout()


def shared_unless_edited(stack: str, edits: dict[str, Any] | None = None) -> RunResult:
    """:func:`unedited_run` for no edits, else :func:`run_stack`: for helpers whose edits are optional."""
    return run_stack(stack, edits) if edits else unedited_run(stack)
