"""How deep a value nests, measured without recursion, and the deepest the schema walk reads.

Why: the schema walk, the CEL adapter and the defaulting are recursive, once per level.  A
resource nested deeper than any real CRD object (a RayJob's deepest field is about 20 levels:
``spec.rayClusterSpec.workerGroupSpecs[].template.spec.affinity.nodeAffinity...values[]``) is
not walked at all: it gets one "cannot check" verdict naming the resource and
:data:`MAX_SCHEMA_DEPTH`, never a ``RecursionError``.
"""

from __future__ import annotations

from typing import Any, Final

MAX_SCHEMA_DEPTH: Final = 100
"""Deepest nesting (objects and lists) the schema and CEL validation read."""


def nesting_depth(value: Any) -> int:
    """Nesting depth of dicts/lists in ``value`` (a scalar is 0, ``{"a": 1}`` is 1)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            deepest = max(deepest, level)
            continue
        deepest = max(deepest, level + 1)
        stack.extend((child, level + 1) for child in children)
    return deepest
