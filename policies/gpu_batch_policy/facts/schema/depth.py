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
    """Nesting depth of dicts/lists in ``value`` (a scalar is 0, ``{"a": 1}`` is 1, ``[]`` is 1).

    Level by level: each pass gathers the children of the level's containers with the list's own
    ``extend``, and the depth is the number of levels holding a container.  Every object of a
    stack is measured, by the pack's custom-resource and built-in object rules and by the
    preview's manifest validation; the walk that pushed a ``(child, level)`` pair per node took
    0.30 s over a 1,000-team stack's 12,227 inputs, this one 0.07-0.09 s (same depths).
    """
    depth = 0
    level = [value]
    while True:
        below: list[Any] = []
        nested = False
        for item in level:
            if isinstance(item, dict):
                below.extend(item.values())
                nested = True
            elif isinstance(item, list):
                below.extend(item)
                nested = True
        if not nested:
            return depth
        depth += 1
        level = below
