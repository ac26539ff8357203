"""YAML strings in chart values are parsed with limits, and every limit becomes a finding."""

from __future__ import annotations

import time

import pytest
import yaml
from gpu_batch_policy.primitives.values_yaml import MAX_BYTES, MAX_DEPTH, YamlLimitError, load_limited

from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_harness import run
from tests.policies.pack_objects import kueue_release

INTEGRATIONS = get_policy("kueue-integrations-cover-workloads")

# The classic "billion laughs": nine levels of ten aliases each, ~300 bytes of text.
BILLION_LAUGHS = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{chr(ord('b') + i)}: &{chr(ord('b') + i)} [{','.join(['*' + chr(ord('a') + i)] * 9)}]\n"
    for i in range(8)
)


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_plain_configs_still_load() -> None:
    assert load_limited("integrations:\n  frameworks: [batch/job]\n") == {
        "integrations": {"frameworks": ["batch/job"]}
    }


def test_alias_bomb_is_refused_at_once() -> None:
    started = time.perf_counter()
    with pytest.raises(YamlLimitError, match="aliases"):
        load_limited(BILLION_LAUGHS)
    print(f"alias bomb refused in {time.perf_counter() - started:.4f} s")


def test_self_referencing_alias_is_refused() -> None:
    with pytest.raises(YamlLimitError, match="aliases"):
        load_limited("a: &a [*a]\n")


def test_depth_is_limited_before_the_recursion_limit() -> None:
    assert load_limited(nested(MAX_DEPTH - 1)) is not None
    for depth in (MAX_DEPTH + 1, 5_000):
        with pytest.raises(YamlLimitError, match="deeper than"):
            load_limited(nested(depth))


def test_size_is_limited() -> None:
    with pytest.raises(YamlLimitError, match="byte limit"):
        load_limited("a: " + "x" * MAX_BYTES)


def test_syntax_errors_are_yaml_errors() -> None:
    with pytest.raises(yaml.YAMLError):
        load_limited("integrations: [unclosed")


@pytest.mark.parametrize(
    ("text", "expected"),
    [(BILLION_LAUGHS, "aliases"), (nested(10_000), "deeper than"), ("a: " + "x" * MAX_BYTES, "byte limit")],
)
def test_each_limit_is_a_finding_that_names_it(text: str, expected: str) -> None:
    result = run(INTEGRATIONS, [kueue_release(text)])
    assert len(result.violations) == 1
    assert "controllerManagerConfigYaml is not valid: refused" in result.messages[0]
    assert expected in result.messages[0]
