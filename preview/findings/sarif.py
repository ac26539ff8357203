"""SARIF 2.1.0 for GitHub code scanning, from a stack's ``findings.json`` document.

What GitHub reads and requires (GitHub docs "SARIF support for code scanning", sections
"Supported SARIF output file properties" and "Providing data to track code scanning alerts
across runs"): ``version`` 2.1.0; per run ``tool.driver.name`` and its ``rules`` (``id``,
``shortDescription``, ``fullDescription``, ``help``, ``defaultConfiguration.level``); per result
``ruleId``, ``message.text``, ``level`` and one ``physicalLocation`` with an
``artifactLocation.uri`` relative to the repository root and ``region.startLine``;
``partialFingerprints`` to track an alert across runs; ``automationDetails.id``
(``<category>/``) so each stack is its own category.  Limits (GitHub docs "SARIF results exceed
one or more limits"): 20 runs per file, 25,000 results and 25,000 rules per run, 1,000 locations
per result, 20 tags per rule, 10 MB gzip-compressed upload.

Levels: mandatory (and remediate) -> ``error``, advisory -> ``warning``, a rule the pack
could not check in preview -> ``note`` (SARIF 2.1.0 §3.27.10 ``level``).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
TOOL_NAME = "gpu-batch-preview"
FINGERPRINT_KEY = "gpuBatchFinding/v1"
# GitHub's hard limits (GitHub docs "SARIF results exceed one or more limits").
MAX_RESULTS_PER_RUN = 25_000
MAX_RULES_PER_RUN = 25_000
MAX_GZIP_BYTES = 10 * 1024 * 1024
MAX_LOCATIONS_PER_RESULT = 1_000
_LEVEL_ORDER = {"error": 0, "warning": 1, "note": 2}


def sarif_level(finding: Mapping[str, Any]) -> str:
    if finding.get("cannotCheck"):
        return "note"
    return "error" if finding.get("level") in ("mandatory", "remediate") else "warning"


def sarif_log(documents: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One run per stack document (each its own category ``gpu-batch/<stack>``)."""
    return {"$schema": SARIF_SCHEMA_URI, "version": SARIF_VERSION, "runs": [_run(d) for d in documents]}


def category(stack: str) -> str:
    return f"gpu-batch/{stack}"


def _run(document: Mapping[str, Any]) -> dict[str, Any]:
    findings: list[Mapping[str, Any]] = list(document["findings"])
    rules = _rules(document, findings)
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    # Errors first, so a cap keeps what blocks the deploy (GitHub keeps the top results by severity).
    ordered = sorted(findings, key=lambda f: _LEVEL_ORDER[sarif_level(f)])
    kept = ordered[:MAX_RESULTS_PER_RUN]
    run: dict[str, Any] = {
        "tool": {"driver": {"name": TOOL_NAME, "rules": rules}},
        "automationDetails": {"id": f"{category(str(document['stack']))}/"},
        "columnKind": "unicodeCodePoints",
        "results": [_result(f, index) for f in kept],
    }
    if len(kept) < len(findings):
        run["properties"] = {"omittedResults": len(findings) - len(kept)}
    return run


def _rules(document: Mapping[str, Any], findings: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A rule per policy the pack declared (and any a finding names), in name order."""
    declared = {str(p["name"]): p for p in document.get("policies", ())}
    for f in findings:
        declared.setdefault(
            str(f["policy"]), {"name": f["policy"], "description": f["reference"], "level": f["level"]}
        )
    rules = []
    for name in sorted(declared)[:MAX_RULES_PER_RUN]:
        policy = declared[name]
        description = str(policy.get("description") or name)
        first_line = description.strip().splitlines()[0] if description.strip() else name
        level = "error" if policy.get("level") in ("mandatory", "remediate") else "warning"
        rules.append(
            {
                "id": name,
                "name": name,
                "shortDescription": {"text": first_line[:1024]},
                "fullDescription": {"text": description},
                "help": {"text": description},
                "defaultConfiguration": {"level": level, "enabled": policy.get("level") != "disabled"},
            }
        )
    return rules


def _result(finding: Mapping[str, Any], index: Mapping[str, int]) -> dict[str, Any]:
    where = finding["location"]
    location: dict[str, Any] = {
        "physicalLocation": {
            "artifactLocation": {"uri": where["file"]},
            "region": {"startLine": where["line"], "startColumn": where["column"]},
        }
    }
    if finding.get("urn"):
        location["logicalLocations"] = [
            {"fullyQualifiedName": finding["urn"], "name": finding.get("resourceName") or finding["urn"]}
        ]
    properties: dict[str, Any] = {}
    if finding.get("keyPath"):
        properties["keyPath"] = finding["keyPath"]
    result: dict[str, Any] = {
        "ruleId": finding["policy"],
        "ruleIndex": index[finding["policy"]],
        "level": sarif_level(finding),
        "message": {"text": finding["message"] or finding["policy"]},
        "locations": [location],
        "partialFingerprints": {FINGERPRINT_KEY: finding["fingerprint"]},
    }
    related = finding.get("related") or []
    if related:
        # Other resources the message names, at the config lines that declared them (SARIF
        # 2.1.0 §3.27.22 relatedLocations; GitHub shows them as links on the alert).
        result["relatedLocations"] = [
            {
                "id": i,
                "physicalLocation": {
                    "artifactLocation": {"uri": r["file"]},
                    "region": {"startLine": r["line"], "startColumn": r["column"]},
                },
                "message": {"text": f"{r['resourceName']} ({r['keyPath'] or r['file']})"},
            }
            for i, r in enumerate(related[: MAX_LOCATIONS_PER_RESULT - 1])
        ]
    if properties:
        result["properties"] = properties
    return result


def write_sarif(path: Path, log: Mapping[str, Any]) -> int:
    """Write the log; returns its gzip-compressed size (what GitHub's 10 MB limit counts)."""
    text = json.dumps(log, indent=1, sort_keys=False) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return len(gzip.compress(text.encode(), mtime=0))
