"""``build/<stack>/findings.json``: every finding with where it points, the single source for
SARIF, annotations and the report's findings table.

Schema (``SCHEMA``): ``{schema, project, stack, pack, policies: [{name, description, level}],
findings: [{policy, level, cannotCheck, urn, resourceType, resourceName, keyPath, location:
{file, line, column}, message, fix, reference, fingerprint}]}``.  ``level`` is the enforcement
level the pack reported (``mandatory``/``advisory``/...; ``config`` findings are ``mandatory``:
the stack cannot be previewed).  ``fix`` is null: this pack's messages carry their fix
(``preview.analyzer.format_diagnostic``).  ``reference`` is the policy's description, which names
the upstream rule it enforces.

The fingerprint hashes the rule, the key path and the resource (plus an ordinal among identical
triples), never a line number: moving unrelated lines of the stack file keeps it, so code
scanning tracks one alert across pushes (GitHub docs "SARIF support for code scanning",
"Providing data to track code scanning alerts across runs": ``partialFingerprints``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml
from gpu_batch_policy.primitives.yaml_loader import SAFE_LOADER

from components.chart_lock import ChartLockError, locked_charts
from preview.analyzer import AnalysisResult, Diagnostic, in_display_order
from preview.findings.locate import Position, YamlPositions
from preview.findings.origins import Origin, OriginIndex
from preview.records import RecordedResource
from stacks.errors import ConfigIssue

SCHEMA = "gpu-batch/findings/v1"
CONFIG_POLICY = "stack-config"
CONFIG_DESCRIPTION = (
    "The stack config must validate against the program's config model (stacks/config): "
    "`pulumi preview` exits 2 on it."
)


@dataclass(frozen=True)
class Finding:
    policy: str
    level: str
    cannotCheck: bool  # noqa: N815 - the JSON field name
    urn: str
    resourceType: str  # noqa: N815
    resourceName: str  # noqa: N815
    keyPath: str  # noqa: N815
    location: dict[str, Any]
    message: str
    fix: str | None
    reference: str
    fingerprint: str
    # Other resources the message names (the pack's ``describe()`` markers), where they came from.
    related: list[dict[str, Any]] = field(default_factory=list)


class Locator:
    """Origins and positions for one stack: stack file, charts.lock.yaml and Pulumi.yaml."""

    def __init__(
        self, project_dir: Path, project: str, stack: str, resources: Iterable[RecordedResource] = ()
    ) -> None:
        self.stack_file = f"Pulumi.{stack}.yaml"
        text = _read(project_dir / self.stack_file)
        self.stack_positions = YamlPositions(self.stack_file, text)
        self.lock_positions = YamlPositions.read(project_dir, "charts.lock.yaml")
        self.project_positions = YamlPositions.read(project_dir, "Pulumi.yaml")
        self.project = project
        try:
            doc = yaml.load(text, Loader=SAFE_LOADER)
        except yaml.YAMLError:
            doc = None
        config = doc.get("config") if isinstance(doc, dict) else None
        self.origins = OriginIndex(
            project, self.stack_file, config if isinstance(config, dict) else {}, resources, _lock_entries()
        )

    def position(self, origin: Origin) -> Position:
        """A stack-file key path, else its Pulumi.yaml project default, else Pulumi.yaml's top."""
        if origin.file == self.stack_file:
            here = self.stack_positions.locate(origin.path)
            if here.found:
                return here
            default = self.project_positions.locate(origin.path.removeprefix(f"{self.project}:"))
            return default if default.found else Position("Pulumi.yaml", 1, 1)
        if origin.file == "charts.lock.yaml":
            return self.lock_positions.locate(origin.path, under=())
        return Position("Pulumi.yaml", 1, 1)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _lock_entries() -> dict[str, tuple[str, str]]:
    try:
        return {key: (c.name, c.version) for key, c in locked_charts().items()}
    except ChartLockError:
        return {}


def fingerprint(policy: str, key_path: str, urn: str, ordinal: int) -> str:
    text = "\x1f".join((policy, key_path, urn, str(ordinal)))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


# How the pack names a resource inside a message: ``K8sObject.describe()`` in
# policies/gpu_batch_policy/facts/model/base.py writes `[resource '<name>']` or
# `[rendered by Helm release '<name>']` after an object whose Pulumi name differs from its own.
_NAMED = re.compile(r"\[(?:resource|rendered by Helm release) '([^']+)'\]")


def related_locations(
    message: str, own: str, by_name: Mapping[str, Sequence[RecordedResource]], locator: Locator
) -> list[dict[str, Any]]:
    """Where each other resource the message names came from (one entry per distinct key path)."""
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for name in _NAMED.findall(message):
        for record in by_name.get(name, []):
            if record.urn == own:
                continue
            origin = locator.origins.origin(record.urn)
            where = locator.position(origin)
            if (where.file, origin.path) in seen:
                continue
            seen.add((where.file, origin.path))
            out.append(
                {
                    "resourceName": name,
                    "keyPath": origin.path,
                    "file": where.file,
                    "line": where.line,
                    "column": where.column,
                }
            )
    return out


def policy_findings(
    analysis: AnalysisResult, resources: Sequence[RecordedResource], locator: Locator
) -> list[Finding]:
    by_urn = {r.urn: r for r in resources}
    by_name: dict[str, list[RecordedResource]] = {}
    for resource in resources:
        by_name.setdefault(resource.name, []).append(resource)
    out: list[Finding] = []
    seen: dict[tuple[str, str, str], int] = {}
    for diag in in_display_order(analysis.diagnostics):
        record = by_urn.get(diag.urn)
        origin = locator.origins.origin(diag.urn) if diag.urn else Origin("Pulumi.yaml", "")
        finding = _finding(diag, record, origin, locator.position(origin), seen)
        finding.related.extend(related_locations(diag.message, diag.urn, by_name, locator))
        out.append(finding)
    return out


def _finding(
    diag: Diagnostic,
    record: RecordedResource | None,
    origin: Origin,
    where: Position,
    seen: dict[tuple[str, str, str], int],
) -> Finding:
    key_path = origin.path if origin.file != "Pulumi.yaml" else ""
    triple = (diag.policy_name, key_path, diag.urn)
    ordinal = seen.get(triple, 0)
    seen[triple] = ordinal + 1
    return Finding(
        policy=diag.policy_name,
        level=diag.level,
        cannotCheck=diag.cannot_check,
        urn=diag.urn,
        resourceType=diag.resource_type or (record.type if record else ""),
        resourceName=diag.resource_name or (record.name if record else ""),
        keyPath=key_path,
        location={"file": where.file, "line": where.line, "column": where.column},
        message=diag.message,
        fix=None,
        reference=diag.description,
        fingerprint=fingerprint(diag.policy_name, key_path, diag.urn, ordinal),
    )


def key_finding(
    locator: Locator,
    policy: str,
    level: str,
    key_path: str,
    message: str,
    *,
    reference: str,
    cannot_check: bool = False,
    ordinal: int = 0,
) -> Finding:
    """A finding about a stack-file key itself (no resource), at that key's line."""
    where = locator.position(Origin(locator.stack_file, key_path))
    return Finding(
        policy=policy,
        level=level,
        cannotCheck=cannot_check,
        urn="",
        resourceType="",
        resourceName="",
        keyPath=key_path,
        location={"file": where.file, "line": where.line, "column": where.column},
        message=message,
        fix=None,
        reference=reference,
        fingerprint=fingerprint(policy, key_path, "", ordinal),
    )


def config_findings(issues: Sequence[ConfigIssue], locator: Locator) -> list[Finding]:
    """A stack-config error (exit 2) as findings at the line of the key each issue names."""
    out: list[Finding] = []
    seen: dict[str, int] = {}
    for issue in issues:
        ordinal = seen.get(issue.path, 0)
        seen[issue.path] = ordinal + 1
        out.append(
            key_finding(
                locator,
                CONFIG_POLICY,
                "mandatory",
                issue.path,
                issue.line(),
                reference=CONFIG_DESCRIPTION,
                ordinal=ordinal,
            )
        )
    return out


def findings_document(
    project: str,
    stack: str,
    findings: Sequence[Finding],
    analysis: AnalysisResult | None = None,
) -> dict[str, Any]:
    policies: list[dict[str, Any]] = []
    if analysis is not None:
        for p in analysis.policies:
            configured = analysis.config.get(p.name)
            level = configured.level if configured is not None else p.level
            policies.append({"name": p.name, "description": p.description, "level": level})
    if any(f.policy == CONFIG_POLICY for f in findings):
        policies.append({"name": CONFIG_POLICY, "description": CONFIG_DESCRIPTION, "level": "mandatory"})
    return {
        "schema": SCHEMA,
        "project": project,
        "stack": stack,
        "pack": analysis.pack_name if analysis is not None else "",
        "policies": policies,
        "findings": [asdict(f) for f in findings],
    }


def write_findings(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
