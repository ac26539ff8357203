"""GitHub Actions annotations for the findings on lines a pull request changed.

``python -m preview.findings.annotations --base REF build/<stack>/findings.json ...`` prints one
workflow command per finding whose location is a line ``git diff REF`` adds or changes, errors
first.  Escaping is the Actions toolkit's (actions/toolkit ``packages/core/src/command.ts``
``escapeData``: ``%``, CR, LF; ``escapeProperty`` also ``:`` and ``,``).  GitHub keeps at most 10
error, 10 warning and 10 notice annotations per step and 50 per job (actions/toolkit
``docs/problem-matchers.md`` "Limitations"), so at most 10 of each kind are printed and the
rest are counted in one plain log line pointing at the SARIF (code scanning shows them all).

Levels: mandatory -> ``error``, advisory -> ``warning``, a rule that could not check -> ``notice``.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

PER_KIND_PER_STEP = 10
_ORDER = {"error": 0, "warning": 1, "notice": 2}
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def kind_of(finding: Mapping[str, Any]) -> str:
    if finding.get("cannotCheck"):
        return "notice"
    return "error" if finding.get("level") in ("mandatory", "remediate") else "warning"


def changed_lines(diff: str) -> dict[str, set[int]]:
    """New-side line numbers each file's hunks add or change (``git diff --unified=0``)."""
    out: dict[str, set[int]] = {}
    current: str | None = None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            target = line[4:]
            current = target[2:] if target.startswith("b/") else None
            continue
        match = _HUNK.match(line)
        if match and current is not None:
            start, count = int(match.group(1)), int(match.group(2) or "1")
            out.setdefault(current, set()).update(range(start, start + count))
    return out


def command(finding: Mapping[str, Any]) -> str:
    where = finding["location"]
    props = {
        "file": where["file"],
        "line": str(where["line"]),
        "col": str(where["column"]),
        "title": finding["policy"],
    }
    rendered = ",".join(f"{k}={escape_property(v)}" for k, v in props.items())
    return f"::{kind_of(finding)} {rendered}::{escape_data(finding['message'])}"


def workflow_commands(
    findings: Iterable[Mapping[str, Any]], changed: Mapping[str, set[int]]
) -> tuple[list[str], int]:
    """The commands to print (errors first, at most 10 per kind) and how many were left out."""
    on_changed = [f for f in findings if f["location"]["line"] in changed.get(f["location"]["file"], set())]
    on_changed.sort(key=lambda f: (_ORDER[kind_of(f)], f["location"]["file"], f["location"]["line"]))
    printed: list[str] = []
    counts = dict.fromkeys(_ORDER, 0)
    for finding in on_changed:
        kind = kind_of(finding)
        if counts[kind] < PER_KIND_PER_STEP:
            counts[kind] += 1
            printed.append(command(finding))
    return printed, len(on_changed) - len(printed)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m preview.findings.annotations", description=__doc__)
    parser.add_argument("--base", required=True, help="git ref the pull request is compared with")
    parser.add_argument("findings", nargs="+", type=Path, help="build/<stack>/findings.json files")
    args = parser.parse_args(argv)
    diff = subprocess.run(
        ["git", "diff", "--unified=0", "--no-color", args.base, "--"],
        capture_output=True,
        text=True,
        check=False,
    )
    if diff.returncode != 0:
        print(f"annotations: git diff {args.base} failed: {diff.stderr.strip()}", file=sys.stderr)
        return 2
    found = [f for path in args.findings if path.exists() for f in json.loads(path.read_text())["findings"]]
    printed, left = workflow_commands(found, changed_lines(diff.stdout))
    for line in printed:
        print(line)
    if left:
        print(
            f"{left} more findings on changed lines are not annotated (GitHub's per-step limit): see findings.sarif"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
