"""What `helm upgrade` would leave stale: the CRDs of two chart versions, rendered by Helm, compared.

Helm creates a chart's ``crds/`` on install only (helm/helm v3.20.2 ``pkg/action/install.go``
``installCRDs``) and never on upgrade (``pkg/action/upgrade.go`` ``performUpgrade`` renders with
``includeCrds`` false), so every CRD that differs between the installed and the target version
stays at the installed one unless something else applies it.  Both KAI Scheduler versions in the
offline mirror (v0.13.0, v0.17.0; ``../shared/vendor/SOURCE.md``) are rendered with the real Helm
engine and compared: CRDs added or removed, served/storage versions, and schema fields.  The
runbook's KAI procedure must name exactly the CRDs whose schema changes.

Only one KubeRay (1.7.0) and one Kueue (0.19.2) version is in the mirror, so those are not
compared here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pytest
from gpu_batch_policy.facts.charts import ChartReference, ChartUnavailableError, default_resolver
from gpu_batch_policy.facts.charts.render import in_crds_dir, render_chart

from tests.stack_runner import ROOT

OLD = ChartReference("kai-scheduler", "v0.13.0", "oci://ghcr.io/nvidia/kai-scheduler/kai-scheduler")
NEW = ChartReference("kai-scheduler", "v0.17.0", "oci://ghcr.io/kai-scheduler/kai-scheduler/kai-scheduler")


def crds_of(reference: ChartReference) -> dict[str, dict[str, Any]]:
    """The chart's ``crds/`` by CRD name, as ``helm install`` creates them."""
    try:
        chart_dir = default_resolver().resolve(reference)
    except ChartUnavailableError as error:
        pytest.skip(str(error))
    rendered = render_chart(chart_dir, {}, release_name=reference.name, namespace=reference.name)
    return {
        o.manifest["metadata"]["name"]: o.manifest
        for o in rendered.objects
        if in_crds_dir(o.source) and o.manifest.get("kind") == "CustomResourceDefinition"
    }


def schema_fields(node: Any, prefix: str = "") -> set[str]:
    """Every field path an OpenAPI v3 schema declares (``[]`` list items, ``{}`` map values)."""
    if not isinstance(node, dict):
        return set()
    found: set[str] = set()
    for name, child in (node.get("properties") or {}).items():
        path = f"{prefix}.{name}"
        found |= {path, *schema_fields(child, path)}
    found |= schema_fields(node.get("items"), prefix + "[]")
    found |= schema_fields(node.get("additionalProperties"), prefix + "{}")
    return found


@dataclass(frozen=True)
class CrdChange:
    name: str
    versions_before: tuple[tuple[str, bool, bool], ...]
    versions_after: tuple[tuple[str, bool, bool], ...]
    added: frozenset[str]
    removed: frozenset[str]
    spec_changed: bool


def _versions(crd: dict[str, Any]) -> tuple[tuple[str, bool, bool], ...]:
    return tuple((v["name"], bool(v.get("served")), bool(v.get("storage"))) for v in crd["spec"]["versions"])


def _fields(crd: dict[str, Any]) -> set[str]:
    return {
        f"{v['name']}:{path}"
        for v in crd["spec"]["versions"]
        for path in schema_fields((v.get("schema") or {}).get("openAPIV3Schema"))
    }


def compare(old: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]]) -> list[CrdChange]:
    return [
        CrdChange(
            name,
            _versions(old[name]),
            _versions(new[name]),
            frozenset(_fields(new[name]) - _fields(old[name])),
            frozenset(_fields(old[name]) - _fields(new[name])),
            old[name]["spec"] != new[name]["spec"],
        )
        for name in sorted(old.keys() & new.keys())
    ]


def test_schema_fields_walks_properties_items_and_maps() -> None:
    schema = {
        "properties": {
            "spec": {
                "properties": {
                    "a": {"type": "string"},
                    "l": {"items": {"properties": {"b": {}}}},
                    "m": {"additionalProperties": {"properties": {"c": {}}}},
                }
            }
        }
    }
    assert schema_fields(schema) == {".spec", ".spec.a", ".spec.l", ".spec.l[].b", ".spec.m", ".spec.m{}.c"}


def test_kai_upgrade_keeps_names_and_versions_but_changes_schemas() -> None:
    old, new = crds_of(OLD), crds_of(NEW)
    assert old and new
    # No CRD appears or disappears, and no served/storage version moves: an upgrade needs no
    # storage migration, only the new schemas.
    assert old.keys() == new.keys()
    changes = compare(old, new)
    assert all(c.versions_before == c.versions_after for c in changes)
    changed = [c for c in changes if c.spec_changed]
    assert changed and len(changed) < len(changes)
    # A field v0.17.0 adds would be pruned by a v0.13.0 schema left in place: that is what
    # `helm upgrade` alone would leave stale.
    assert any(c.added for c in changed)
    podgroups = next(c for c in changes if c.name == "podgroups.scheduling.run.ai")
    assert {"v2alpha2:.spec.backoffLimit", "v2alpha2:.spec.parallelism"} <= podgroups.removed


def test_the_new_chart_upgrades_them_itself() -> None:
    """v0.17.0 applies its CRDs in a pre-upgrade hook: what the pack's rule recognises."""
    from gpu_batch_policy.rules.installs.helm_crds import self_upgraded

    chart_dir = default_resolver().resolve(NEW)
    rendered = render_chart(chart_dir, {}, release_name="kai-scheduler", namespace="kai-scheduler")
    assert self_upgraded(rendered.objects, "kai-scheduler") == set(crds_of(NEW))


def _runbook_section(title: str) -> str:
    text = (ROOT / "docs" / "runbook.md").read_text(encoding="utf-8")
    match = re.search(rf"^### {re.escape(title)}.*?(?=^### |^## )", text, re.S | re.M)
    assert match, f"docs/runbook.md has no section '### {title}'"
    return match.group(0)


def test_the_runbooks_kai_procedure_names_exactly_the_crds_that_change() -> None:
    section = _runbook_section("KAI Scheduler")
    changes = compare(crds_of(OLD), crds_of(NEW))
    named = set(re.findall(r"`([a-z0-9.-]+\.[a-z0-9.-]+)`", section)) & {c.name for c in changes}
    assert named == {c.name for c in changes}, "every KAI CRD is named (changed or not)"
    unchanged = [c.name for c in changes if not c.spec_changed]
    for name in unchanged:
        assert re.search(rf"`{re.escape(name)}` does not", section), f"{name} is said to be unchanged"
    for change in changes:
        if change.spec_changed:
            assert not re.search(rf"`{re.escape(change.name)}` does not", section)
