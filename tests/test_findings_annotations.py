"""Annotations: only lines the PR changed, errors first, GitHub's per-step limit, toolkit escaping."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from preview.findings.annotations import (
    PER_KIND_PER_STEP,
    changed_lines,
    escape_data,
    escape_property,
    workflow_commands,
)

DIFF = """\
diff --git a/Pulumi.dev.yaml b/Pulumi.dev.yaml
--- a/Pulumi.dev.yaml
+++ b/Pulumi.dev.yaml
@@ -61 +61 @@
-                  nvidia.com/gpu: {nominalQuota: "10000"}
+                  nvidia.com/gpu: {nominalQuota: "0"}
@@ -70,0 +71,3 @@
+  a: 1
+  b: 2
+  c: 3
diff --git a/gone.yaml b/gone.yaml
--- a/gone.yaml
+++ /dev/null
@@ -1,2 +0,0 @@
"""


def _finding(line: int, level: str = "advisory", cannot: bool = False, message: str = "m") -> dict[str, Any]:
    return {
        "policy": "rule",
        "level": level,
        "cannotCheck": cannot,
        "location": {"file": "Pulumi.dev.yaml", "line": line, "column": 3},
        "message": message,
    }


def test_changed_lines_are_the_new_side_of_each_hunk() -> None:
    assert changed_lines(DIFF) == {"Pulumi.dev.yaml": {61, 71, 72, 73}}


def test_only_changed_lines_are_annotated_errors_first_within_the_limit() -> None:
    findings = [_finding(71) for _ in range(12)] + [_finding(61, "mandatory"), _finding(5, "mandatory")]
    findings += [_finding(72, cannot=True)]
    printed, left = workflow_commands(findings, changed_lines(DIFF))
    assert printed[0].startswith("::error file=Pulumi.dev.yaml,line=61,col=3,title=rule::")
    assert sum(p.startswith("::warning ") for p in printed) == PER_KIND_PER_STEP
    assert printed[-1].startswith("::notice ")
    assert left == 2  # two warnings over the limit; the error on line 5 is not on a changed line
    assert not any("line=5," in p for p in printed)


def test_escaping_is_the_actions_toolkits() -> None:
    assert escape_data("50% of a\r\nb") == "50%25 of a%0D%0Ab"
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"
    [line], _ = workflow_commands(
        [_finding(61, "mandatory", message="two\nlines, 100%")], {"Pulumi.dev.yaml": {61}}
    )
    assert line.endswith("::two%0Alines, 100%25")


def test_the_command_reads_git_diff_against_base(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)

    git("init", "-q")
    (repo / "Pulumi.dev.yaml").write_text("config:\n  a: 1\n  b: 2\n")
    git("add", ".")
    git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "base")
    (repo / "Pulumi.dev.yaml").write_text("config:\n  a: 1\n  b: 3\n")
    findings = repo / "findings.json"
    findings.write_text(json.dumps({"findings": [_finding(3, "mandatory"), _finding(2, "mandatory")]}))
    result = subprocess.run(
        [sys.executable, "-m", "preview.findings.annotations", "--base", "HEAD", str(findings)],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": str(Path(__file__).resolve().parent.parent), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["::error file=Pulumi.dev.yaml,line=3,col=3,title=rule::m"]
