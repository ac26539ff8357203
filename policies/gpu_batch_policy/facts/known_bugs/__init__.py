"""Known bugs of the pinned operator versions, as data (``<component>.json``), and the conditions
that decide whether a program can hit one (:mod:`.conditions`).

A record says which releases carry the bug (``affected``: ``from`` inclusive, ``before``
exclusive), which release fixes it, the upstream references, and the id of a condition the pack
evaluates on any program.  :mod:`gpu_batch_policy.rules.installs.known_bugs` reports an advisory per
record whose version range holds the installed release and whose condition the program meets.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

RECORDS_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class KnownBug:
    id: str
    component: str
    chart: str
    summary: str
    affected_from: tuple[int, ...]
    affected_before: tuple[int, ...]
    fixed_in: str
    references: tuple[str, ...]
    condition: str

    def affects(self, version: tuple[int, ...]) -> bool:
        return self.affected_from <= version < self.affected_before


def parse_version(text: str) -> tuple[int, ...] | None:
    """``v0.19.2`` / ``0.19.2`` -> (0, 19, 2); None when it is not a plain release."""
    parts = text.strip().removeprefix("v").split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    return tuple(int(p) for p in parts)


def _record(component: str, chart: str, raw: dict[str, Any]) -> KnownBug:
    start, before = parse_version(raw["affected"]["from"]), parse_version(raw["affected"]["before"])
    if start is None or before is None or parse_version(raw["fixedIn"]) is None:
        raise ValueError(f"known bug {raw.get('id')}: versions must be X.Y.Z")
    return KnownBug(
        id=raw["id"],
        component=component,
        chart=chart,
        summary=raw["summary"],
        affected_from=start,
        affected_before=before,
        fixed_in=raw["fixedIn"],
        references=tuple(raw["references"]),
        condition=raw["condition"],
    )


@cache
def known_bugs() -> tuple[KnownBug, ...]:
    """Every record of every component file, in file and record order."""
    out: list[KnownBug] = []
    for path in sorted(RECORDS_DIR.glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        out.extend(_record(document["component"], document["chart"], r) for r in document["records"])
    return tuple(out)
