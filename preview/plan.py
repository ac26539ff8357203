"""``build/<stack>/plan.json``: what the stack would create, for reviewers and for diffing.

Inputs are in wire (camelCase) form as the engine receives them; unknown values read
``"(unknown)"`` and secrets ``"[secret]"`` so the file can be committed to a PR comment
without leaking anything.  Resources are in URN order and every map's keys sorted, so the same
stack gives the same bytes on every run and machine.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from preview.dump_cache import cached_dump
from preview.records import RecordedResource, by_urn, for_display, shown_inputs, sorted_maps


def plan_document(
    project: str, stack: str, resources: list[RecordedResource], outputs: dict[str, Any]
) -> dict[str, Any]:
    return {
        "project": project,
        "stack": stack,
        "resources": [
            {
                "urn": r.urn,
                "type": r.type,
                "name": r.name,
                "parent": r.parent,
                "provider": r.provider,
                "custom": r.custom,
                # Only where set, so plans of stacks without protection read as before.
                **({"protect": True} if r.protect else {}),
                **({"retainOnDelete": True} if r.retain_on_delete else {}),
                **({"ignoreChanges": sorted(r.ignore_changes)} if r.ignore_changes else {}),
                **({"replaceOnChanges": sorted(r.replace_on_changes)} if r.replace_on_changes else {}),
                **({"deleteBeforeReplace": True} if r.delete_before_replace else {}),
                # A set to the engine; the SDK gathers it in hash order, so sort it.
                "dependsOn": sorted(r.dependencies),
                "inputs": shown_inputs(r),
            }
            for r in by_urn(resources)
        ],
        "outputs": sorted_maps(for_display(outputs)),
    }


def write_plan(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(cached_dump("plan.json", document, plan_text))


def plan_text(document: dict[str, Any]) -> str:
    """What ``plan.json`` holds: read back from the render cache when the plan has not changed
    (:mod:`preview.dump_cache`: the standard library's indenting encoder is pure Python)."""
    return json.dumps(document, indent=2, sort_keys=False) + "\n"
