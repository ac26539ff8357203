"""Upgrade sections for a base plan and a head plan: one per Helm release whose chart version
changes and whose chart has records (:func:`.records.all_records`), the two charts resolved
through the pack's chart resolver (the same cache and mirror the preview renders from)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpu_batch_policy.facts.charts import default_resolver, reference_from_release

from preview.upgrades.capabilities import flipped, minor
from preview.upgrades.records import ComponentRecords, Transition, all_records, version
from preview.upgrades.section import upgrade_section

RELEASE = "kubernetes:helm.sh/v3:Release"
CLUSTER = "gcp:container/cluster:Cluster"


def _releases(plan: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {r["urn"]: r for r in plan.get("resources", []) if r.get("type") == RELEASE}


def _chart_dir(inputs: Mapping[str, Any]) -> Any:
    repo = (inputs.get("repositoryOpts") or {}).get("repo")
    return default_resolver().resolve(
        reference_from_release(inputs.get("chart"), inputs.get("version"), repo)
    )


@dataclass(frozen=True)
class ChartUpgrade:
    """One Helm release of both plans whose chart version changes and whose chart has records."""

    component: ComponentRecords
    old: Mapping[str, Any]
    new: Mapping[str, Any]

    @property
    def transition(self) -> Transition | None:
        try:
            return self.component.find(
                version(str(self.old.get("version"))), version(str(self.new.get("version")))
            )
        except ValueError:
            return None


def chart_upgrades(base: Mapping[str, Any], head: Mapping[str, Any]) -> list[ChartUpgrade]:
    """Every recorded chart whose version differs between the two plan.json documents."""
    records = all_records()
    old_releases = _releases(base)
    out: list[ChartUpgrade] = []
    for urn, new in sorted(_releases(head).items()):
        old = old_releases.get(urn)
        old_in, new_in = (old or {}).get("inputs") or {}, new.get("inputs") or {}
        if old is None or old_in.get("version") == new_in.get("version"):
            continue
        component = records.get(str(new_in.get("chart", "")).rstrip("/").rsplit("/", 1)[-1])
        if component is not None:
            out.append(ChartUpgrade(component, old_in, new_in))
    return out


def blocked_upgrades(base: Mapping[str, Any], head: Mapping[str, Any]) -> list[str]:
    """The chart upgrades whose record says ``blocked``: the preview exits 1 on any."""
    return [
        f"{u.component.component} {u.old.get('version')} -> {u.new.get('version')}"
        for u in chart_upgrades(base, head)
        if u.transition is not None and u.transition.verdict == "blocked"
    ]


def upgrade_sections(base: Mapping[str, Any], head: Mapping[str, Any]) -> list[str]:
    """Markdown lines for every planned chart upgrade between the two plan.json documents."""
    objects = [
        r.get("inputs") or {}
        for r in head.get("resources", [])
        if str(r.get("type", "")).startswith("kubernetes:") and r.get("type") != RELEASE
    ]
    lines: list[str] = []
    for upgrade in chart_upgrades(base, head):
        old_in, new_in = upgrade.old, upgrade.new
        try:
            old_dir, new_dir = _chart_dir(old_in), _chart_dir(new_in)
        except (ValueError, RuntimeError, OSError) as error:
            lines += [
                f"### Upgrade: {upgrade.component.component} {old_in.get('version')} -> {new_in.get('version')}",
                "",
                f"Not computed: {error}",
                "",
            ]
            continue
        lines += upgrade_section(
            upgrade.component,
            str(old_in["version"]),
            str(new_in["version"]),
            old_dir,
            new_dir,
            stack_values=new_in.get("values") or {},
            plan_objects=objects,
        )
    return lines


def _cluster_minor(plan: Mapping[str, Any]) -> tuple[int, int] | None:
    for resource in plan.get("resources", []):
        if resource.get("type") == CLUSTER:
            found = (resource.get("inputs") or {}).get("minMasterVersion")
            return minor(found) if isinstance(found, str) else None
    return None


def cluster_minor_sections(base: Mapping[str, Any], head: Mapping[str, Any]) -> list[str]:
    """When the cluster's minor changes: per release of the head plan, the templates whose
    ``Capabilities`` gates render differently at the new minor (:mod:`.capabilities`)."""
    old, new = _cluster_minor(base), _cluster_minor(head)
    if old is None or new is None or old == new:
        return []
    lines = [f"### Upgrade: GKE {old[0]}.{old[1]} -> {new[0]}.{new[1]}", ""]
    for urn, release in sorted(_releases(head).items()):
        inputs = release.get("inputs") or {}
        try:
            found = flipped(_chart_dir(inputs), old, new)
        except (ValueError, RuntimeError, OSError) as error:
            found = [f"not computed: {error}"]
        lines += [
            f"- release `{urn.rsplit('::', 1)[-1]}` ({inputs.get('chart')} {inputs.get('version')}): {f}"
            for f in found
        ]
    if len(lines) == 2:
        lines.append("No chart of this stack renders differently at the new minor.")
    return [*lines, ""]
