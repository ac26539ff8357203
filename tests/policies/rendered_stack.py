"""A stack as the pack will see it once releases are rendered: the program's resources plus
every Helm release's rendered objects (the lead's issue-9 interface, built here for tests).

The program runs under the preview mocks (``tests/stack_runner.py``); each
``kubernetes:helm.sh/v3:Release`` is rendered with the real Helm engine from the pinned chart in
``../shared/vendor/<chart>-<version>`` with the release's own values, name and namespace.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterable
from typing import Any

import helm_python
import yaml
from gpu_batch_policy.model import StackModel
from gpu_batch_policy.values import plain

from tests.stack_runner import ROOT, config_value, run_stack

VENDOR = ROOT.parent / "shared" / "vendor"
Item = tuple[str, Any, str, str]
RELEASE = "kubernetes:helm.sh/v3:Release"


def render_release(inputs: dict[str, Any], urn: str) -> list[Item]:
    """The objects one release renders, as ``StackModel.from_plain`` items."""
    chart = str(inputs["chart"]).rstrip("/").rsplit("/", 1)[-1]
    namespace = inputs.get("namespace") or "default"
    folder = VENDOR / f"{chart}-{inputs['version']}"
    rendered = helm_python.Chart.load(str(folder)).render(
        inputs.get("values") or {}, name=inputs["name"], namespace=namespace
    )
    items: list[Item] = []
    for path, text in sorted(rendered.items()):
        if not path.endswith((".yaml", ".yml")):
            continue  # NOTES.txt
        for doc in yaml.safe_load_all(text):
            if not isinstance(doc, dict) or "kind" not in doc:
                continue
            group, _, version = str(doc.get("apiVersion", "v1")).rpartition("/")
            meta = doc.setdefault("metadata", {})
            meta.setdefault("namespace", namespace)
            kind = doc["kind"]
            obj_urn = f"{urn}$rendered:{kind}/{meta['namespace']}/{meta.get('name')}"
            items.append(
                (f"kubernetes:{group or 'core'}/{version}:{kind}", doc, obj_urn, str(meta.get("name")))
            )
    return items


@functools.lru_cache(maxsize=16)
def _items(stack: str, edits_json: str) -> tuple[Item, ...]:
    result = run_stack(stack, json.loads(edits_json) or None)
    items: list[Item] = []
    for res in result.resources:
        inputs = plain(res.inputs)
        items.append((res.type, inputs, res.urn, res.name))
        if res.type == RELEASE:
            items.extend(render_release(inputs, res.urn))
    return tuple(items)


def stack_items(stack: str, edits: dict[str, Any] | None = None) -> list[Item]:
    """Program resources plus rendered objects (deep copies: tests may edit them)."""
    return copy.deepcopy(list(_items(stack, json.dumps(edits or {}, sort_keys=True))))


def model_of(items: Iterable[Item]) -> StackModel:
    return StackModel.from_plain(items)


def rendered_stack(stack: str, edits: dict[str, Any] | None = None) -> StackModel:
    return model_of(stack_items(stack, edits))


def cluster_edit(stack: str, **changes: Any) -> dict[str, Any]:
    cluster = dict(config_value(stack, "gpu-batch:cluster"))
    cluster.update(changes)
    return {"gpu-batch:cluster": cluster}


def system_pool_edit(stack: str, **changes: Any) -> dict[str, Any]:
    cluster = dict(config_value(stack, "gpu-batch:cluster"))
    cluster["systemPool"] = {**cluster["systemPool"], **changes}
    return {"gpu-batch:cluster": cluster}
