"""``nesting_depth`` (``facts/schema/depth.py``): the depth every "too deep to check" verdict uses.

Held to the plain recursive definition on hand-picked shapes and on seeded random values, and to
no recursion on values far deeper than the interpreter's recursion limit.
"""

from __future__ import annotations

import random
import sys
from typing import Any

import pytest
from gpu_batch_policy.facts.schema.depth import nesting_depth


def _reference(value: Any) -> int:
    """The definition: a container is one level more than its deepest child (a scalar is 0)."""
    if isinstance(value, dict):
        return 1 + max((_reference(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_reference(v) for v in value), default=0)
    return 0


SHAPES: dict[str, tuple[Any, int]] = {
    "scalar": ("x", 0),
    "none": (None, 0),
    "empty map": ({}, 1),
    "empty list": ([], 1),
    "flat map": ({"a": 1, "b": "c"}, 1),
    "map in a list": ([{"a": 1}], 2),
    "deep branch beside a shallow one": ({"a": 1, "b": {"c": [{"d": []}]}}, 5),
    "empty containers nested": ({"a": {"b": {}}}, 3),
    "deepest branch last": ([1, [2], [[3]], [[[{}]]]], 5),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_each_shape_has_its_depth(name: str) -> None:
    value, depth = SHAPES[name]
    assert nesting_depth(value) == depth == _reference(value)


def _random_value(rng: random.Random, budget: int) -> Any:
    roll = rng.random()
    if budget <= 0 or roll < 0.3:
        return rng.choice([1, "s", None, True, 2.5])
    width = rng.randint(0, 4)
    if roll < 0.65:
        return {f"k{i}": _random_value(rng, budget - rng.randint(1, 3)) for i in range(width)}
    return [_random_value(rng, budget - rng.randint(1, 3)) for _ in range(width)]


def test_random_values_match_the_definition() -> None:
    rng = random.Random(20261130)
    values = [_random_value(rng, rng.randint(0, 30)) for _ in range(2000)]
    assert [nesting_depth(v) for v in values] == [_reference(v) for v in values]
    assert max(_reference(v) for v in values) >= 10  # not only shallow values


def test_a_value_deeper_than_the_recursion_limit_is_measured() -> None:
    levels = sys.getrecursionlimit() * 5
    value: Any = "leaf"
    for index in range(levels):
        value = {"a": value} if index % 2 else [value]
    assert nesting_depth(value) == levels
