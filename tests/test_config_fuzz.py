"""Mutate every leaf of every stack file: the program either accepts the edit or rejects it with
config-error lines -- never a traceback from somewhere deeper.

Mutations per leaf: a value of the wrong type, a negative number, an empty string; per mapping:
an unknown key.  Nearly all must be rejected (a config that silently accepts garbage is the bug
this guards against); the few that may legitimately pass are listed when the ratio drops.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from preview.stack_files import load_stack_files, stack_names
from stacks.errors import ConfigError
from tests.stack_runner import ROOT, run_stack

Path = tuple[str | int, ...]


def _leaves(value: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    if isinstance(value, dict):
        yield path, value
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index))
    else:
        yield path, value


def _wrong_type(value: Any) -> Any:
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return 12345
    return "not-a-mapping"


def _mutations(value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        yield "unknown key", {**value, "unknownKeyXyz": 1}
        return
    yield "wrong type", _wrong_type(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        yield "negative", -abs(value) - 1
    if isinstance(value, str):
        yield "empty string", ""


def _set(document: Any, path: Path, value: Any) -> Any:
    if not path:
        return value
    copy_ = copy.deepcopy(document)
    node = copy_
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return copy_


def _plain_project_keys(stack: str) -> dict[str, Any]:
    files = load_stack_files(ROOT, stack)
    out = {}
    for key, text in files.config.items():
        if key.startswith("gpu-batch:") and key not in files.secret_keys:
            try:
                out[key] = json.loads(text)
            except ValueError:
                out[key] = text
    return out


@pytest.mark.parametrize("stack", stack_names(ROOT))
def test_every_leaf_mutation_is_accepted_or_one_line_errors(stack: str) -> None:
    accepted: list[str] = []
    rejected = 0
    for key, document in _plain_project_keys(stack).items():
        for path, leaf in _leaves(document):
            for label, mutated in _mutations(leaf):
                where = f"{key}{''.join(f'[{p}]' if isinstance(p, int) else f'.{p}' for p in path)}"
                try:
                    run_stack(stack, {key: _set(document, path, mutated)})
                except ConfigError as error:
                    lines = str(error).splitlines()
                    assert lines, where
                    assert all(line.startswith("config error: ") for line in lines), str(error)
                    rejected += 1
                else:
                    accepted.append(f"{where} ({label})")
    total = rejected + len(accepted)
    assert total > 0
    print(f"{stack}: {rejected}/{total} mutations rejected; accepted: {accepted}")
    assert rejected / total >= 0.95, f"accepted {len(accepted)}/{total} mutations: {accepted}"
