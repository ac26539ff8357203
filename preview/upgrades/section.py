"""The upgrade section of the preview report and the PR comment: one per chart whose version
changes between the base and the head plan, from its records (:mod:`.records`) and the two charts
(:mod:`.charts`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from preview.upgrades.charts import crd_changes, default_flips, removed_values, values_of
from preview.upgrades.records import PHASES, ComponentRecords, version


def upgrade_section(
    records: ComponentRecords,
    old_version: str,
    new_version: str,
    old_chart: Path,
    new_chart: Path,
    *,
    stack_values: Mapping[str, Any],
    plan_objects: list[Mapping[str, Any]],
) -> list[str]:
    """Markdown lines: verdict, steps in order, then what the charts themselves say."""
    lines = [f"### Upgrade: {records.component} {old_version} -> {new_version}", ""]
    transition = records.find(version(old_version), version(new_version))
    if transition is None:
        lines += [f"**unplanned**: no record in `preview/upgrades/records/{records.path}` covers it.", ""]
    else:
        lines += [f"Verdict: **{transition.verdict}** (`preview/upgrades/records/{records.path}`).", ""]
        for step in sorted(transition.steps, key=lambda s: PHASES.index(s.phase)):
            lines.append(f"1. {step.phase}: {step.do}")
        lines += ["", *(f"- reference: {r}" for r in transition.references), ""]
    renames = transition.renames if transition else {}
    old_values, new_values = values_of(old_chart), values_of(new_chart)
    removed = removed_values(old_values, new_values, stack_values, renames)
    if removed:
        lines.append("Values keys the target chart no longer has (Helm ignores them silently):")
        for key in removed:
            note = f" -> renamed `{key.renamed_to}`" if key.renamed_to else ""
            note += " (**set by this stack**)" if key.set_by_stack else ""
            lines.append(f"- `{key.path}`{note}")
        lines.append("")
    flips = default_flips(old_values, new_values, stack_values)
    if flips:
        lines.append("Defaults that change and this stack does not pin:")
        lines += [f"- `{f.path}`: `{f.old}` -> `{f.new}`" for f in flips]
        lines.append("")
    for change in crd_changes(old_chart, new_chart, plan_objects):
        lines.append(f"CRD `{change.crd}`:")
        if change.unserved:
            lines.append(f"- versions no longer served: {', '.join(change.unserved)}")
        if change.removed_paths:
            lines.append(f"- properties removed: {', '.join(f'`{p}`' for p in change.removed_paths)}")
        for name, used in sorted(change.users.items()):
            lines.append(f"- used by {change.kind} `{name}`: {', '.join(used)}")
        lines.append("")
    return lines
