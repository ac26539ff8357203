"""Dictionary operations the compiled simulator calls on every nomination, push and release.

Why a module (issue 44 item 3, round 13): mypyc compiles ``d.get(k)`` and ``del d[k]`` to direct
C calls, but ``d.pop(k, None)`` to a Python method call by name (``PyObject_VectorcallMethod``),
and the queues, the verdicts and the release path ran one on every push, nomination and release.
"""

from __future__ import annotations

from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def take(d: dict[K, V], key: K) -> V | None:
    """``d.pop(key, None)`` for a dictionary whose values are never None."""
    found = d.get(key)
    if found is not None:
        del d[key]
    return found
