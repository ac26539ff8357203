"""The verdict cache for large built-in objects (issue 44): an unchanged object is not walked
again, any change to the object, the patch flag, the minor or the validator is a miss, a damaged
entry is a miss (the object is validated), and the folder stays bounded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gpu_batch_policy.facts.charts import render_cache
from gpu_batch_policy.facts.schema.core import CoreValidator, shipped_minors
from gpu_batch_policy.facts.schema.crd import Outcome

from preview import validation_cache

CONFIG_MAP: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "big", "namespace": "team-a"},
    "data": {f"key{i}": "x" * 64 for i in range(64)},
}
INVALID: dict[str, Any] = {**CONFIG_MAP, "data": {"key": 1}, "unknownField": True}


class Counting(CoreValidator):
    """A validator that counts the objects it walks."""

    def __init__(self, minor: str | None = None) -> None:
        super().__init__(minor) if minor else super().__init__()
        self.walked = 0

    def validate(self, obj: Any, patch: bool = False) -> Any:
        self.walked += 1
        return super().validate(obj, patch=patch)


@pytest.fixture()
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(render_cache.RENDER_CACHE_ENV, str(tmp_path / "renders"))
    monkeypatch.setattr(validation_cache, "MIN_BYTES", 0)
    return tmp_path / "renders"


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.json"))


@pytest.mark.parametrize("obj", [CONFIG_MAP, INVALID], ids=["valid", "invalid"])
def test_an_unchanged_object_is_a_hit_with_the_same_verdict(folder: Path, obj: dict[str, Any]) -> None:
    validator = Counting()
    first = validation_cache.validate(validator, obj)
    again = validation_cache.validate(validator, json.loads(json.dumps(obj)))
    assert validator.walked == 1
    assert again == first == CoreValidator().validate(obj)
    assert (first.outcome is Outcome.INVALID) == (obj is INVALID)


@pytest.mark.parametrize(
    "change",
    ["data", "name", "type", "map order", "patch", "minor", "validator"],
)
def test_a_changed_input_is_a_miss(folder: Path, monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    validator = Counting()
    validation_cache.validate(validator, CONFIG_MAP)
    obj: dict[str, Any] = dict(CONFIG_MAP)
    patch = False
    if change == "data":
        obj["data"] = {**CONFIG_MAP["data"], "key0": "y"}
    elif change == "name":
        obj["metadata"] = {**CONFIG_MAP["metadata"], "name": "other"}
    elif change == "type":
        obj["data"] = {**CONFIG_MAP["data"], "key0": 1}
    elif change == "map order":
        obj = dict(reversed(list(CONFIG_MAP.items())))
    elif change == "patch":
        patch = True
    elif change == "minor":
        other = next(m for m in shipped_minors() if m != validator.minor.minor)
        validator = Counting(other)
    else:
        monkeypatch.setattr(validation_cache, "validator_identity", lambda: "another validator")
    validator.walked = 0
    result = validation_cache.validate(validator, obj, patch=patch)
    assert validator.walked == 1
    assert result == CoreValidator(validator.minor.minor).validate(obj, patch=patch)


@pytest.mark.parametrize("damage", ["truncate", "garbage", "other outcome", "missing field", "extra field"])
def test_a_damaged_entry_is_a_miss(folder: Path, damage: str) -> None:
    validator = Counting()
    expected = validation_cache.validate(validator, INVALID)
    (entry,) = _entries(folder)
    stored = json.loads(entry.read_text())
    document = stored["document"]
    if damage == "truncate":
        entry.write_bytes(entry.read_bytes()[:30])
    elif damage == "garbage":
        entry.write_bytes(b"\x00\xffnot json")
    else:
        if damage == "other outcome":
            document["outcome"] = "no-such-outcome"
        elif damage == "missing field":
            del document["violations"]
        else:
            document["surprise"] = 1
        entry.write_text(json.dumps(stored))
    validator.walked = 0
    assert validation_cache.validate(validator, INVALID) == expected
    assert validator.walked == 1


def test_small_objects_are_not_stored(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(validation_cache, "MIN_BYTES", 10**9)
    validation_cache.validate(CoreValidator(), CONFIG_MAP)
    assert not _entries(folder)


def test_the_folder_stays_bounded(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = render_cache.evict
    monkeypatch.setattr(render_cache, "evict", lambda path: real(path, max_entries=2))
    for n in range(5):
        validation_cache.validate(CoreValidator(), {**CONFIG_MAP, "metadata": {"name": f"m{n}"}})
    assert len(_entries(folder)) == 2
