"""findings.json and its SARIF: located on the stack file's lines, schema-valid, stable.

The SARIF is validated offline against the OASIS SARIF 2.1.0 schema (oasis-tcs/sarif-spec,
pinned in ../shared/schemas/sarif) and against what GitHub code scanning requires of an upload
(GitHub docs "SARIF support for code scanning").
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from preview.cli import main
from preview.findings.sarif import MAX_GZIP_BYTES, MAX_RESULTS_PER_RUN, sarif_log, write_sarif
from tests.stack_runner import ROOT

SARIF_SCHEMA = ROOT.parent / "shared" / "schemas" / "sarif" / "sarif-schema-2.1.0.json"
QUOTA_LINE = re.compile(r'^(\s*nvidia\.com/gpu: \{nominalQuota: )"10000"\}$', re.MULTILINE)


def sarif_problems(log: dict[str, Any]) -> list[str]:
    """The OASIS schema's errors plus GitHub's required properties and hard limits."""
    schema = json.loads(SARIF_SCHEMA.read_text())
    problems = [e.message for e in jsonschema.Draft4Validator(schema).iter_errors(log)]
    if log.get("version") != "2.1.0":
        problems.append("version must be 2.1.0")
    runs = log.get("runs", [])
    if len(runs) > 20:
        problems.append("more than 20 runs")
    for run in runs:
        rules = run["tool"]["driver"].get("rules", [])
        if not run["tool"]["driver"].get("name"):
            problems.append("tool.driver.name missing")
        if not run.get("automationDetails", {}).get("id"):
            problems.append("no category (automationDetails.id)")
        if len(run["results"]) > 25_000 or len(rules) > 25_000:
            problems.append("over 25,000 results or rules")
        ids = [r["id"] for r in rules]
        for result in run["results"]:
            if result["ruleId"] not in ids or ids[result["ruleIndex"]] != result["ruleId"]:
                problems.append(f"result names an unknown rule {result['ruleId']}")
            if not result["message"].get("text"):
                problems.append("result without message.text")
            loc = result["locations"][0]["physicalLocation"]
            if loc["artifactLocation"]["uri"].startswith("/") or loc["region"]["startLine"] < 1:
                problems.append(f"bad location {loc}")
            if not result.get("partialFingerprints"):
                problems.append("result without partialFingerprints")
    return problems


def _project(tmp_path: Path, stack_text: str) -> Path:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    for name in ("Pulumi.yaml", "__main__.py", "charts.lock.yaml"):
        (project / name).write_text((ROOT / name).read_text())
    for package in ("stacks", "components"):
        if not (project / package).exists():
            (project / package).symlink_to(ROOT / package)
    (project / "Pulumi.dev.yaml").write_text(stack_text)
    return project


def _preview(project: Path) -> tuple[int, dict[str, Any], dict[str, Any]]:
    out = project / "build"
    code = main(["--stack", "dev", "--project-dir", str(project), "--out", str(out), "--quiet"])
    findings = json.loads((out / "dev" / "findings.json").read_text())
    sarif = json.loads((out / "dev" / "findings.sarif").read_text())
    return code, findings, sarif


def _line_of(text: str, pattern: re.Pattern[str]) -> int:
    match = pattern.search(text)
    assert match is not None
    return text[: match.start()].count("\n") + 1 + match.group(0)[:1].count("\n")


def test_a_quota_config_error_is_a_sarif_result_on_its_line_and_keeps_its_fingerprint(tmp_path: Path) -> None:
    original = (ROOT / "Pulumi.dev.yaml").read_text()
    seeded = QUOTA_LINE.sub(r'\1"lots"}', original)
    assert seeded != original
    line = _line_of(seeded, re.compile(r'^.*nominalQuota: "lots"', re.MULTILINE))
    code, findings, sarif = _preview(_project(tmp_path, seeded))
    assert code == 2
    assert sarif_problems(sarif) == []
    [result] = sarif["runs"][0]["results"]
    assert result["ruleId"] == "stack-config" and result["level"] == "error"
    region = result["locations"][0]["physicalLocation"]
    assert region["artifactLocation"]["uri"] == "Pulumi.dev.yaml"
    assert region["region"]["startLine"] == line
    assert findings["findings"][0]["keyPath"].endswith("resources.nvidia.com/gpu.nominalQuota")

    # Unrelated lines above it move the result, not its fingerprint.
    moved = "# a comment\n# and another\n" + seeded.replace("  gcp:project:", "  # moved\n  gcp:project:")
    _, _, sarif_moved = _preview(_project(tmp_path, moved))
    [moved_result] = sarif_moved["runs"][0]["results"]
    assert moved_result["locations"][0]["physicalLocation"]["region"]["startLine"] == line + 3
    assert moved_result["partialFingerprints"] == result["partialFingerprints"]


def test_a_policy_finding_points_at_the_entry_that_declared_the_resource(tmp_path: Path) -> None:
    """A GPU quota of 0 leaves the seed's RayJobs unadmittable (kueue-gang-fits-queue): each
    finding points at its `workloads[i]` entry, and moving lines keeps the fingerprints."""
    seeded = QUOTA_LINE.sub(r'\1"0"}', (ROOT / "Pulumi.dev.yaml").read_text())
    code, findings, sarif = _preview(_project(tmp_path, seeded))
    assert code == 1
    assert sarif_problems(sarif) == []
    gang = [f for f in findings["findings"] if f["policy"] == "kueue-gang-fits-queue"]
    assert {f["keyPath"] for f in gang} == {"gpu-batch:workloads[0]", "gpu-batch:workloads[1]"}
    lines = seeded.splitlines()
    for finding in gang:
        assert finding["level"] == "mandatory"
        assert lines[finding["location"]["line"] - 1].strip().startswith("- name: pytorch-text-classifier")
    gang_results = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "kueue-gang-fits-queue"]
    assert {r["level"] for r in gang_results} == {"error"}
    # The ClusterQueue the message names (where the quota mistake is) is a related location, at
    # the entry that declares it.
    cq_line = lines.index("      - name: cluster-queue") + 1
    for result in gang_results:
        related = result["relatedLocations"]
        assert [r["physicalLocation"]["region"]["startLine"] for r in related] == [cq_line]
    # The PR comment's short table says where each finding points.
    report = (tmp_path / "project" / "build" / "dev" / "report.md").read_text()
    table = report.split("### Findings by line", 1)[1]
    for finding in gang:
        assert f"`Pulumi.dev.yaml:{finding['location']['line']}` | `{finding['keyPath']}`" in table
    _, moved, _ = _preview(_project(tmp_path, "# moved\n" * 4 + seeded))
    assert sorted(f["fingerprint"] for f in moved["findings"]) == sorted(
        f["fingerprint"] for f in findings["findings"]
    )
    # Stack-file lines move by 4; a finding located elsewhere (Pulumi.yaml) stays put.
    shift = {"Pulumi.dev.yaml": 4}
    assert [f["location"]["line"] for f in moved["findings"]] == [
        f["location"]["line"] + shift.get(f["location"]["file"], 0) for f in findings["findings"]
    ]


def _finding(i: int, level: str, cannot_check: bool = False) -> dict[str, Any]:
    return {
        "policy": f"rule-{i % 3}",
        "level": level,
        "cannotCheck": cannot_check,
        "urn": f"urn:pulumi:dev::gpu-batch::kubernetes:v1:ConfigMap::cm-{i}",
        "resourceName": f"cm-{i}",
        "keyPath": f"gpu-batch:teams[{i}]",
        "location": {"file": "Pulumi.dev.yaml", "line": i + 1, "column": 5},
        "message": f"finding {i}",
        "fix": None,
        "reference": "a rule",
        "fingerprint": f"{i:032x}",
    }


def test_levels_map_to_error_warning_note_and_a_run_keeps_the_errors_within_githubs_limit(
    tmp_path: Path,
) -> None:
    findings = [_finding(i, "advisory") for i in range(MAX_RESULTS_PER_RUN)]
    findings += [
        _finding(MAX_RESULTS_PER_RUN, "mandatory"),
        _finding(MAX_RESULTS_PER_RUN + 1, "advisory", True),
    ]
    doc = {"stack": "big", "policies": [], "findings": findings}
    log = sarif_log([doc])
    [run] = log["runs"]
    assert len(run["results"]) == MAX_RESULTS_PER_RUN
    assert (
        run["results"][0]["level"] == "error"
        and run["results"][0]["message"]["text"] == f"finding {MAX_RESULTS_PER_RUN}"
    )
    assert run["properties"] == {"omittedResults": 2}
    assert all(r["level"] == "warning" for r in run["results"][1:])
    # At the cap, with pack-sized messages (several hundred characters, distinct per result), the
    # log stays under GitHub's 10 MB gzip-compressed upload limit, whatever the team count.
    for i, finding in enumerate(findings):
        finding["message"] = f"ClusterQueue 'team-{i}' " + " ".join(f"w{i * 7 + j}" for j in range(80))
    size = write_sarif(tmp_path / "big.sarif", sarif_log([doc]))
    assert size < MAX_GZIP_BYTES, size
    small = sarif_log(
        [
            {
                "stack": "s",
                "policies": [],
                "findings": [_finding(1, "advisory", True), _finding(2, "remediate")],
            }
        ]
    )
    assert [r["level"] for r in small["runs"][0]["results"]] == ["error", "note"]
    assert small["runs"][0]["automationDetails"]["id"] == "gpu-batch/s/"
    assert sarif_problems(small) == []


def test_the_schema_check_catches_a_broken_log() -> None:
    log = sarif_log([{"stack": "s", "policies": [], "findings": [_finding(1, "advisory")]}])
    del log["runs"][0]["results"][0]["message"]
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    with pytest.raises(KeyError):
        sarif_problems(log)
    log["runs"][0]["results"][0]["message"] = {"text": "x"}
    assert sarif_problems(log), "startLine 0 breaks the schema (minimum 1)"
