"""Mutate every leaf of every stack file: the program either accepts the edit or rejects it with
config-error lines -- never a traceback from somewhere deeper.

Mutations per leaf: a value of the wrong type, a negative number, a number past int64 / NaN,
an empty string; per mapping: an unknown key.  Every stack file in the project is covered.  Nearly all must be rejected (a config that silently accepts garbage is the bug
this guards against); the few that may legitimately pass are listed when the ratio drops.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from preview.stack_files import stack_names
from stacks.errors import ConfigError
from tests.stack_runner import ROOT, plain_project_keys, run_stack

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
        yield "2^63", 2**63
        yield "NaN", float("nan")
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


@pytest.mark.parametrize("stack", stack_names(ROOT))
def test_every_leaf_mutation_is_accepted_or_one_line_errors(stack: str) -> None:
    accepted: list[str] = []
    rejected = 0
    for key, document in plain_project_keys(stack).items():
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


OUT_OF_RANGE = [
    ("dev", "gpu-batch:gpuPools", (0, "maxNodes"), 2**63, "gpu-batch:gpuPools[0].maxNodes"),
    ("dev", "gpu-batch:cluster", ("systemPool", "maxNodes"), 2**63, "gpu-batch:cluster.systemPool.maxNodes"),
    ("dev", "gpu-batch:gpuPools", (0, "maxNodes"), 65_001, "gpu-batch:gpuPools[0].maxNodes"),
    ("kai", "gpu-batch:kaiQueues", (0, "children", 0, "priority"), 2**31, "priority"),
    (
        "prod",
        "gpu-batch:kueue",
        ("waitForPodsReady", "requeuingStrategy", "backoffLimitCount"),
        2**63,
        "gpu-batch:kueue.waitForPodsReady.requeuingStrategy.backoffLimitCount",
    ),
    (
        "prod",
        "gpu-batch:kueueQueues",
        ("admissionChecks", 0, "parameters", "maxRunDurationSeconds"),
        "",
        "maxRunDurationSeconds",
    ),
    (
        "prod",
        "gpu-batch:kueueQueues",
        ("admissionChecks", 0, "parameters", "maxRunDurationSeconds"),
        "999999999",
        "maxRunDurationSeconds",
    ),
    ("kai", "gpu-batch:kaiQueues", (0, "resources", "gpu", "quota"), float("inf"), "quota"),
]


@pytest.mark.parametrize(("stack", "key", "path", "value", "where"), OUT_OF_RANGE)
def test_out_of_range_values_are_one_line_errors(
    stack: str, key: str, path: Path, value: Any, where: str
) -> None:
    document = plain_project_keys(stack)[key]
    with pytest.raises(ConfigError) as caught:
        run_stack(stack, {key: _set(document, path, value)})
    [line] = str(caught.value).splitlines()
    assert line.startswith("config error: ") and where in line, line
