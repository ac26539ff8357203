"""A bounded, thread-safe LRU map: the one way the pack keeps anything between analyses.

Why (issue 31, "Bounded memory"): one pack process serves a whole ``pulumi preview`` and, in CI,
may be reused for many; a cache keyed by what a program sends (chart values, CRD patterns, type
tokens) grew with every distinct stack it saw, to gigabytes over a thousand stacks.  Every cache
that outlives one analysis is either keyed by the pack's own pinned inputs (the lock file, the
shipped schema minors) or is one of these, with a limit chosen for its entry size.  The
analyzer servicer runs calls on a thread pool, hence the lock.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class BoundedCache(Generic[K, V]):
    """At most ``limit`` entries; the least recently used one goes first."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("a cache needs room for at least one entry")
        self.limit = limit
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            if key not in self._entries:
                return None
            self._entries.move_to_end(key)
            return self._entries[key]

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._entries

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.limit:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
