"""The pinned upstream charts, read from ``charts.lock.yaml`` at the repository root.

Why one lock file: the chart a component installs, the default version a stack may override, and
the chart the preview and the policy pack render must be the same one.  Components take their
:class:`~components.operator_release.ChartRef` from here; the preview resolves every entry before
it runs, so a machine that can reach neither the upstream location nor a mirror fails at once with
one line instead of half-way through a plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final

import yaml

LOCK_FILE: Final = Path(__file__).resolve().parent.parent / "charts.lock.yaml"


class ChartLockError(ValueError):
    """``charts.lock.yaml`` is missing an entry or has one of the wrong shape (one line)."""


@dataclass(frozen=True)
class LockedChart:
    """One entry: ``name``/``version`` as in ``Chart.yaml``; ``source`` an ``oci://`` reference
    (ending in the chart name) or a Helm repository URL."""

    key: str
    name: str
    version: str
    source: str


@cache
def locked_charts(path: Path = LOCK_FILE) -> dict[str, LockedChart]:
    """Every entry of the lock file, by key."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise ChartLockError(f"{path.name}: cannot read: {' '.join(str(error).split())}") from None
    charts = data.get("charts") if isinstance(data, dict) else None
    if not isinstance(charts, dict) or not charts:
        raise ChartLockError(f"{path.name}: charts: got {charts!r}, expected a map of chart entries")
    out: dict[str, LockedChart] = {}
    for key, entry in charts.items():
        fields = {}
        for field_name in ("name", "version", "source"):
            value = entry.get(field_name) if isinstance(entry, dict) else None
            if not isinstance(value, str) or not value.strip():
                raise ChartLockError(
                    f"{path.name}: charts.{key}.{field_name}: got {value!r}, expected a non-empty string"
                )
            fields[field_name] = value.strip()
        if fields["source"].startswith("oci://") and not fields["source"].endswith("/" + fields["name"]):
            raise ChartLockError(
                f"{path.name}: charts.{key}.source: got {fields['source']!r}, expected an oci:// "
                f"reference ending in /{fields['name']}"
            )
        out[str(key)] = LockedChart(key=str(key), **fields)
    return out


def locked(key: str) -> LockedChart:
    """The entry ``key``; a missing one is a :class:`ChartLockError`."""
    charts = locked_charts()
    if key not in charts:
        raise ChartLockError(
            f"{LOCK_FILE.name}: charts.{key}: missing (entries: {', '.join(sorted(charts))})"
        )
    return charts[key]
