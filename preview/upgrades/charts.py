"""What changes between two versions of a chart, computed from the charts themselves.

* **values keys the target drops**: a key of the old ``values.yaml`` that the new one does not
  have is read by no template any more, and Helm ignores a values key nothing reads, silently
  (helm/helm v3.20.2 ``pkg/chart/v2/util/coalesce.go``: user values are merged over the chart's,
  unknown keys kept and never rendered).  Listed with the record's known renames, and flagged
  when the stack sets it.
* **default flips**: a leaf whose default differs between the two ``values.yaml`` and that the
  stack does not set.
* **CRDs**: from the charts' ``crds/``: versions that stop being served, and property paths the
  target version's ``openAPIV3Schema`` no longer has (the API server prunes unknown fields of a
  structural schema: Kubernetes docs "Custom resources", "Field pruning"), each with the plan's
  objects that set them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml


def leaf_paths(document: Any, prefix: str = "") -> dict[str, Any]:
    """{dotted path: value} of every leaf (a scalar, a list, or an empty map)."""
    if isinstance(document, Mapping) and document:
        out: dict[str, Any] = {}
        for key, value in document.items():
            out.update(leaf_paths(value, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: document} if prefix else {}


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(f"{prefix}.")


@dataclass(frozen=True)
class RemovedKey:
    path: str
    renamed_to: str | None
    set_by_stack: bool


@dataclass(frozen=True)
class DefaultFlip:
    path: str
    old: Any
    new: Any


@dataclass(frozen=True)
class CrdChange:
    crd: str
    kind: str
    group: str
    unserved: tuple[str, ...] = ()
    removed_paths: tuple[str, ...] = ()
    # The plan's objects (name) using an unserved version or a removed path.
    users: dict[str, tuple[str, ...]] = field(default_factory=dict)


def values_of(chart: Path) -> dict[str, Any]:
    loaded = yaml.safe_load((chart / "values.yaml").read_text(encoding="utf-8")) or {}
    return loaded if isinstance(loaded, dict) else {}


def removed_values(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    stack_values: Mapping[str, Any],
    renames: Mapping[str, str],
) -> list[RemovedKey]:
    old_leaves, new_leaves = leaf_paths(old), leaf_paths(new)
    set_paths = set(leaf_paths(stack_values))
    out = []
    for path in sorted(old_leaves):
        if path in new_leaves or any(_under(n, path) or _under(path, n) for n in new_leaves):
            continue
        out.append(
            RemovedKey(path, renames.get(path), any(_under(s, path) or _under(path, s) for s in set_paths))
        )
    return out


def default_flips(
    old: Mapping[str, Any], new: Mapping[str, Any], stack_values: Mapping[str, Any]
) -> list[DefaultFlip]:
    old_leaves, new_leaves = leaf_paths(old), leaf_paths(new)
    set_paths = set(leaf_paths(stack_values))
    return [
        DefaultFlip(p, old_leaves[p], new_leaves[p])
        for p in sorted(old_leaves.keys() & new_leaves.keys())
        if old_leaves[p] != new_leaves[p] and not any(_under(p, s) or _under(s, p) for s in set_paths)
    ]


def crds_of(chart: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for path in sorted((chart / "crds").glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if isinstance(document, dict) and document.get("kind") == "CustomResourceDefinition":
                out[document["metadata"]["name"]] = document
    return out


def schema_paths(schema: Any, prefix: str = "") -> Iterator[str]:
    """Every property path of an openAPIV3Schema (through arrays' ``items``, no index)."""
    if not isinstance(schema, Mapping):
        return
    for name, sub in (schema.get("properties") or {}).items():
        path = f"{prefix}.{name}" if prefix else name
        yield path
        yield from schema_paths(sub, path)
    if isinstance(schema.get("items"), Mapping):
        yield from schema_paths(schema["items"], prefix)


def _versions(crd: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {v["name"]: v for v in crd["spec"].get("versions", []) if v.get("served", True)}


def _input_paths(value: Any, prefix: str = "") -> Iterator[str]:
    if isinstance(value, Mapping):
        for key, sub in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            yield path
            yield from _input_paths(sub, path)
    elif isinstance(value, list):
        for element in value:
            yield from _input_paths(element, prefix)


def crd_changes(old_chart: Path, new_chart: Path, plan_objects: list[Mapping[str, Any]]) -> list[CrdChange]:
    """Per CRD of the old chart: unserved versions and removed property paths, with users."""
    old_crds, new_crds = crds_of(old_chart), crds_of(new_chart)
    out: list[CrdChange] = []
    for name, old in sorted(old_crds.items()):
        group, kind = old["spec"]["group"], old["spec"]["names"]["kind"]
        new = new_crds.get(name)
        old_versions = _versions(old)
        new_versions = _versions(new) if new else {}
        unserved = tuple(sorted(set(old_versions) - set(new_versions)))
        removed: set[str] = set()
        for ver, spec in old_versions.items():
            target = new_versions.get(ver) or next(iter(new_versions.values()), None)
            if target is None:
                continue
            before = set(schema_paths(spec.get("schema", {}).get("openAPIV3Schema")))
            after = set(schema_paths(target.get("schema", {}).get("openAPIV3Schema")))
            removed |= {p for p in before - after if not any(_under(p, q) for q in before - after if q != p)}
        users: dict[str, tuple[str, ...]] = {}
        for obj in plan_objects:
            api_version = str(obj.get("apiVersion", ""))
            if obj.get("kind") != kind or not api_version.startswith(f"{group}/"):
                continue
            used = sorted({p for p in _input_paths(obj) for r in removed if _under(p, r)})
            if api_version.split("/", 1)[1] in unserved:
                used.insert(0, f"apiVersion {api_version}")
            if used:
                users[str((obj.get("metadata") or {}).get("name", "?"))] = tuple(used)
        if unserved or removed:
            out.append(CrdChange(name, kind, group, unserved, tuple(sorted(removed)), users))
    return out
