"""The dump cache (issue 44, item 2): ``plan.json`` and ``manifests.yaml`` text of unchanged
documents read back from the render cache's folder.

A hit must return exactly what the dumper would write; any change to the document (values, their
types, map order) or to the dumper is a miss; the folder stays bounded; a damaged entry is a
miss, never an error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpu_batch_policy.facts.charts import render_cache

from preview import dump_cache
from preview.manifests import _dump, _dump_cached
from preview.plan import plan_text

DOCUMENT: dict[str, Any] = {
    "project": "gpu-batch",
    "resources": [{"urn": "urn:a", "inputs": {"replicas": 2, "labels": {"team": "a"}, "ports": [80]}}],
}


@pytest.fixture()
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private render cache folder."""
    monkeypatch.setenv(render_cache.RENDER_CACHE_ENV, str(tmp_path / "renders"))
    return tmp_path / "renders"


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.json"))


def test_an_unchanged_document_is_a_hit_with_the_same_text(folder: Path) -> None:
    first = dump_cache.cached_dump("plan.json", DOCUMENT, plan_text)
    assert len(_entries(folder)) == 1
    calls: list[Any] = []

    def never(document: Any) -> str:
        calls.append(document)
        return "not this"

    key = dump_cache.dump_key("plan.json", DOCUMENT, plan_text)
    assert key is not None and render_cache.read(key) == first == plan_text(DOCUMENT)
    assert dump_cache.cached_dump("plan.json", json.loads(json.dumps(DOCUMENT)), plan_text) == first
    assert not calls


def _replicas(value: Any) -> dict[str, Any]:
    return {"resources": [{"urn": "urn:a", "inputs": {"replicas": value}}]}


def _key(document: Any) -> str | None:
    return dump_cache.dump_key("plan.json", document, plan_text)


def test_a_changed_document_is_a_miss(folder: Path) -> None:
    key = _key(DOCUMENT)
    assert _key({**DOCUMENT, "project": "other"}) != key
    assert _key({"resources": DOCUMENT["resources"], "project": DOCUMENT["project"]}) != key  # map order


@pytest.mark.parametrize("other", [2.0, "2", True, [2], (2,)])
def test_a_value_of_another_type_is_a_miss(folder: Path, other: Any) -> None:
    assert _key(_replicas(other)) != _key(_replicas(2))
    assert _key([2]) != _key((2,))


def test_an_int_key_is_not_its_string(folder: Path) -> None:
    int_keyed: dict[Any, str] = {1: "one"}
    assert _key(int_keyed) != _key({"1": "one"})


def test_another_dumper_or_kind_is_a_miss(folder: Path) -> None:
    key = dump_cache.dump_key("plan.json", DOCUMENT, plan_text)
    assert dump_cache.dump_key("manifests.yaml", DOCUMENT, plan_text) != key
    assert dump_cache.dump_key("plan.json", DOCUMENT, _dump) != key

    def plan_text_indented_4(document: dict[str, Any]) -> str:
        return json.dumps(document, indent=4) + "\n"

    assert dump_cache.dump_key("plan.json", DOCUMENT, plan_text_indented_4) != key


def test_a_changed_library_version_is_a_miss(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = dump_cache.dump_key("manifests.yaml", [DOCUMENT], _dump)
    monkeypatch.setattr(yaml, "__version__", "0.0-other")
    assert dump_cache.dump_key("manifests.yaml", [DOCUMENT], _dump) != key


@pytest.mark.parametrize("damage", ["truncate", "garbage", "other key", "not text"])
def test_a_damaged_entry_is_a_miss(folder: Path, damage: str) -> None:
    text = _dump_cached([DOCUMENT])
    (entry,) = _entries(folder)
    if damage == "truncate":
        entry.write_bytes(entry.read_bytes()[:20])
    elif damage == "garbage":
        entry.write_bytes(b"\xff\x00garbage")
    elif damage == "other key":
        stored = json.loads(entry.read_text())
        entry.write_text(json.dumps({**stored, "key": "0" * 64}))
    else:
        stored = json.loads(entry.read_text())
        entry.write_text(json.dumps({**stored, "document": {"not": "text"}}))
    assert _dump_cached([DOCUMENT]) == text == _dump([DOCUMENT])


def test_the_manifests_text_of_a_hit_is_what_yaml_writes(folder: Path) -> None:
    objects = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}, DOCUMENT]
    assert _dump_cached(objects) == _dump(objects)
    assert _dump_cached(objects) == _dump(objects)
    assert len(_entries(folder)) == 1


def test_what_does_not_pickle_is_dumped_not_cached(folder: Path) -> None:
    document = {"handle": lambda: None}
    assert dump_cache.cached_dump("plan.json", document, lambda d: "dumped") == "dumped"
    assert not _entries(folder)


def test_the_folder_stays_bounded(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = render_cache.evict
    monkeypatch.setattr(render_cache, "evict", lambda path: real(path, max_entries=3))
    for n in range(6):
        dump_cache.cached_dump("plan.json", {"n": n}, plan_text)
    assert len(_entries(folder)) == 3
