"""Transition records: load, match and check them.

A record file (``records/<component>.json``)::

    {"component": "kai-scheduler", "chart": "kai-scheduler", "pin": "0.17.0",
     "transitions": [{"from": {"min": "0.13.0", "before": "0.17.0"},
                      "to": {"min": "0.17.0", "before": "0.18.0"},
                      "verdict": "manual", "steps": [{"phase": "crds", "do": "..."}],
                      "renames": {"old.values.key": "new.values.key"},
                      "evidence": [], "references": ["..."]}]}

Ranges are half-open (``min`` inclusive, ``before`` exclusive).  The checks (:func:`problems`):
for one component no two transitions overlap in both ``from`` and ``to``; the ``from`` ranges of
the transitions that reach the pin leave no hole from the lowest one up to the pin; ``safe`` needs
``evidence``; steps name a known phase, and a record's steps go CRDs, then operator, then objects.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final

RECORDS: Final = Path(__file__).resolve().parent / "records"
PHASES: Final = ("migrate", "crds", "operator", "objects")
VERDICTS: Final = ("safe", "manual", "blocked")

Version = tuple[int, int, int]


def version(text: str) -> Version:
    """``v0.17.0`` / ``0.17.0`` -> (0, 17, 0); raises ValueError on anything else."""
    parts = text.strip().removeprefix("v").split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise ValueError(f"{text!r}: expected a version X.Y.Z")
    return (int(parts[0]), int(parts[1]), int(parts[2]))


@dataclass(frozen=True)
class Range:
    low: Version
    before: Version

    def __contains__(self, v: object) -> bool:
        return isinstance(v, tuple) and self.low <= v < self.before

    def overlaps(self, other: Range) -> bool:
        return self.low < other.before and other.low < self.before

    def __str__(self) -> str:
        return f">={'.'.join(map(str, self.low))} <{'.'.join(map(str, self.before))}"


@dataclass(frozen=True)
class Step:
    phase: str
    do: str


@dataclass(frozen=True)
class Transition:
    component: str
    source: Range
    target: Range
    verdict: str
    steps: tuple[Step, ...]
    renames: Mapping[str, str]
    evidence: tuple[str, ...]
    references: tuple[str, ...]


@dataclass(frozen=True)
class ComponentRecords:
    component: str
    chart: str
    pin: Version
    transitions: tuple[Transition, ...]
    path: str

    def find(self, old: Version, new: Version) -> Transition | None:
        """The transition that covers ``old`` -> ``new``; None: unplanned."""
        return next((t for t in self.transitions if old in t.source and new in t.target), None)


def _range(raw: Mapping[str, Any]) -> Range:
    return Range(version(str(raw["min"])), version(str(raw["before"])))


def load(path: Path) -> ComponentRecords:
    document = json.loads(path.read_text(encoding="utf-8"))
    component = str(document["component"])
    transitions = tuple(
        Transition(
            component=component,
            source=_range(t["from"]),
            target=_range(t["to"]),
            verdict=str(t["verdict"]),
            steps=tuple(Step(str(s["phase"]), str(s["do"])) for s in t.get("steps", [])),
            renames=dict(t.get("renames", {})),
            evidence=tuple(t.get("evidence", [])),
            references=tuple(t.get("references", [])),
        )
        for t in document["transitions"]
    )
    return ComponentRecords(
        component, str(document["chart"]), version(document["pin"]), transitions, path.name
    )


@cache
def all_records() -> dict[str, ComponentRecords]:
    """{chart name: its records} for every file under ``records/``."""
    out: dict[str, ComponentRecords] = {}
    for path in sorted(RECORDS.glob("*.json")):
        records = load(path)
        out[records.chart] = records
    return out


def problems(records: ComponentRecords) -> list[str]:
    """What is wrong with one component's records (empty: well formed)."""
    found: list[str] = []
    ts = records.transitions
    for i, a in enumerate(ts):
        where = f"{records.path} transition {i} ({a.source} -> {a.target})"
        if a.verdict not in VERDICTS:
            found.append(f"{where}: verdict {a.verdict!r}, expected one of {', '.join(VERDICTS)}")
        if a.verdict == "safe" and not a.evidence:
            found.append(f"{where}: 'safe' without evidence")
        if not a.references:
            found.append(f"{where}: no references")
        if a.verdict != "blocked" and not a.steps:
            found.append(f"{where}: no steps")
        phases = [s.phase for s in a.steps]
        unknown = [p for p in phases if p not in PHASES]
        if unknown:
            found.append(f"{where}: unknown phase {unknown[0]!r}, expected one of {', '.join(PHASES)}")
        elif phases != sorted(phases, key=PHASES.index):
            found.append(f"{where}: steps out of order (migrate, crds, operator, objects)")
        for j, b in enumerate(ts[i + 1 :], start=i + 1):
            if a.source.overlaps(b.source) and a.target.overlaps(b.target):
                found.append(f"{where} overlaps transition {j} ({b.source} -> {b.target})")
    reaching = sorted((t.source for t in ts if records.pin in t.target), key=lambda r: r.low)
    if not reaching:
        found.append(f"{records.path}: no transition reaches the pin {'.'.join(map(str, records.pin))}")
    for lower, upper in itertools.pairwise(reaching):
        if lower.before < upper.low:
            found.append(f"{records.path}: hole below the pin between {lower} and {upper}")
    if reaching and max(r.before for r in reaching) < records.pin:
        found.append(f"{records.path}: the from-ranges reaching the pin stop below it")
    return found
