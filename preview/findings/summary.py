"""The report's short "Findings by line" table: where each finding points, for the PR comment.

The same ``findings.json`` entries the SARIF and the annotations come from, errors first, at most
``MAX_ROWS`` rows (the comment stays short; code scanning and the artifact hold them all).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from preview.findings.sarif import sarif_level

MAX_ROWS = 20
_ORDER = {"error": 0, "warning": 1, "note": 2}
Table = Callable[[Sequence[str], Iterable[Sequence[object]]], list[str]]


def findings_by_line(document: Mapping[str, Any], table: Table) -> list[str]:
    findings = sorted(
        document["findings"],
        key=lambda f: (_ORDER[sarif_level(f)], f["location"]["file"], f["location"]["line"], f["policy"]),
    )
    if not findings:
        return []
    rows = [
        [
            sarif_level(f),
            f["policy"],
            f"`{f['location']['file']}:{f['location']['line']}`",
            f"`{f['keyPath']}`" if f["keyPath"] else "-",
            f["message"].splitlines()[0][:160] if f["message"] else "-",
        ]
        for f in findings[:MAX_ROWS]
    ]
    out = ["### Findings by line", "", *table(["level", "rule", "where", "config key", "message"], rows), ""]
    if len(findings) > MAX_ROWS:
        out += [f"{len(findings) - MAX_ROWS} more in `build/<stack>/findings.json` and code scanning.", ""]
    return out
