"""GKE version strings compared as GKE resolves them.

Forms seen in ``minMasterVersion``/``nodeVersion``: full ``1.28.3-gke.1098000``, a prefix
``1.33`` / ``1.28.3`` (GKE picks the newest available version with that prefix), ``latest``
(newest), and ``-`` (the default).  A prefix therefore satisfies a minimum when *some* version
with that prefix does: when the minimum starts with the prefix, or the prefix sorts above it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

_VERSION = re.compile(r"^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-gke\.(\d+))?$")


@dataclass(frozen=True)
class GkeVersion:
    """Parsed components; trailing ``None`` parts mean "any" (a prefix)."""

    parts: tuple[int, ...]

    @property
    def is_prefix(self) -> bool:
        return len(self.parts) < 4


def parse_gke_version(text: str) -> GkeVersion | None:
    m = _VERSION.match(text.strip())
    if not m:
        return None
    return GkeVersion(tuple(int(g) for g in m.groups() if g is not None))


def satisfies(version: str, minimum: str) -> Literal["yes", "no", "unparseable"]:
    """Whether the version GKE would pick for ``version`` is ≥ ``minimum`` (a full version)."""
    text = version.strip().lower()
    if text == "latest":
        return "yes"
    parsed = parse_gke_version(text)
    floor = parse_gke_version(minimum)
    if parsed is None or floor is None:
        return "unparseable"
    depth = len(parsed.parts)
    head = floor.parts[:depth]
    if parsed.parts > head:
        return "yes"
    if parsed.parts == head:
        # Equal on every given component: a prefix can resolve to the minimum or newer; a full
        # version equal to the minimum is the minimum.
        return "yes"
    return "no"
