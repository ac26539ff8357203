"""Every cache of the pack is bounded or lives for one analysis (issue 31, "Bounded memory").

Read from the pack's source, so a new cache fails here until it is bounded or its key is shown
to be the pack's own pinned input: an unbounded ``functools.cache`` / ``lru_cache(maxsize=None)``
must be listed in :data:`KEYED_BY_PINNED_INPUTS` with why its keys are few, and an empty
module-level container (``{}``, ``[]``, ``set()``) in :data:`MODULE_STATE` with how it is bounded.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from gpu_batch_policy.facts.charts import render, render_cache
from gpu_batch_policy.primitives.bounded import BoundedCache
from gpu_batch_policy.rules.kit.rule_guard import INTERNAL_ERRORS_KEPT

PACK = Path(__file__).resolve().parents[2] / "policies" / "gpu_batch_policy"

KEYED_BY_PINNED_INPUTS = {
    "facts/schema/core.py:shipped_minors": "no arguments",
    "facts/schema/core.py:_registry": "one per Kubernetes minor kubernetes-validate ships (CoreValidator refuses others)",
    "facts/schema/core.py:_memo": "one per shipped minor; each memo is cleared at _MEMO_LIMIT entries",
    "facts/schema/core.py:_nodes": "one per shipped minor; each is cleared at _NODES_LIMIT entries",
    "facts/schema/pinned.py:_pinned": "keyed by charts.lock.yaml's references, the pack's own pins",
    "facts/schema/pinned.py:unavailable_crd_files": "no arguments (the lock file's pinned manifests)",
    "facts/schema/core.py:_definitions_document": "one per shipped minor (CoreValidator refuses others)",
    "facts/schema/core.py:_partial_class": "one per shipped minor (CoreValidator refuses others)",
    "facts/schema/pinned.py:_pinned_catalog": "keyed by charts.lock.yaml's references, the pack's own pins",
    "facts/charts/resolver.py:default_resolver": "no arguments",
    "facts/schema/pinned.py:_manifest_crds": "no arguments (the lock file's pinned manifests)",
    "facts/charts/manifests.py:locked_manifests": "keyed by the lock file's path",
    "facts/charts/manifests.py:resolve_manifest": "keyed by pinned (entry, file) pairs; anything else raises, never cached",
    "facts/known_bugs/__init__.py:known_bugs": "no arguments (the pack's own known_bugs/*.json records)",
    "facts/gcp_apis/__init__.py:_table": "no arguments (the pack's own gcp_apis/table.json)",
}
MODULE_STATE = {
    "rules/kit/rule_guard.py:INTERNAL_ERRORS": "trimmed to the newest INTERNAL_ERRORS_KEPT on every append",
    "facts/schema/pinned.py:_STACK_CATALOGS": "cleared at _STACK_CATALOG_LIMIT catalogs",
}


def _decorator_name(node: ast.expr) -> tuple[str, ast.Call | None]:
    call = node if isinstance(node, ast.Call) else None
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Attribute):
        return target.attr, call
    return (target.id if isinstance(target, ast.Name) else ""), call


def _unbounded(decorator: ast.expr) -> bool:
    name, call = _decorator_name(decorator)
    if name == "cache":
        return True
    if name == "lru_cache" and call is not None:
        for keyword in call.keywords:
            if (
                keyword.arg == "maxsize"
                and isinstance(keyword.value, ast.Constant)
                and keyword.value.value is None
            ):
                return True
        return bool(call.args) and isinstance(call.args[0], ast.Constant) and call.args[0].value is None
    return False


def _mutable(value: ast.expr | None) -> bool:
    """An empty container at module level: it exists to be filled while the process runs (a
    filled literal is a constant table)."""
    if isinstance(value, ast.Dict):
        return not value.keys
    if isinstance(value, (ast.List, ast.Set)):
        return not value.elts
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in {"dict", "list", "set"}
        and not value.args
    )


def _findings() -> tuple[set[str], set[str]]:
    caches: set[str] = set()
    state: set[str] = set()
    for path in sorted(PACK.rglob("*.py")):
        where = path.relative_to(PACK).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                _unbounded(d) for d in node.decorator_list
            ):
                caches.add(f"{where}:{node.name}")
        for node in tree.body:
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
            if _mutable(value):
                state.update(f"{where}:{t.id}" for t in targets if isinstance(t, ast.Name))
    return caches, state


def test_every_unbounded_cache_is_keyed_by_the_packs_own_pins() -> None:
    caches, _ = _findings()
    assert caches == set(KEYED_BY_PINNED_INPUTS), (
        "bound it (lru_cache(maxsize=N), bounded.BoundedCache) or justify"
    )


def test_every_mutable_module_value_is_bounded() -> None:
    _, state = _findings()
    assert state == set(MODULE_STATE), "a module-level container outlives analyses: use bounded.BoundedCache"


def test_bounded_cache_drops_the_least_recently_used() -> None:
    cache: BoundedCache[str, int] = BoundedCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # a is now the most recent
    cache.put("c", 3)
    assert "b" not in cache and cache.get("a") == 1 and cache.get("c") == 3 and len(cache) == 2
    with pytest.raises(ValueError, match="at least one entry"):
        BoundedCache(0)


def test_the_limits_are_small() -> None:
    assert render._RENDERS.limit <= 32
    assert render_cache.MAX_ENTRIES <= 1024 and render_cache.MAX_BYTES <= 1024**3
    assert INTERNAL_ERRORS_KEPT <= 1000
