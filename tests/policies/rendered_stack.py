"""A stack with every Helm release replaced by the objects it renders, as editable items.

The program runs under the preview mocks (``tests/stack_runner.py``); each
``kubernetes:helm.sh/v3:Release`` is rendered by the pack's own renderer
(``gpu_batch_policy.facts.charts.render_releases``: the pinned chart, the release's values, name and
namespace) and replaced by its objects, so a test can edit what a chart rendered (a KAI Config, a
Service) and the pack, which renders only releases it sees, judges exactly those objects.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterable
from typing import Any

from gpu_batch_policy.facts.charts.objects import render_releases
from gpu_batch_policy.facts.model import StackModel
from gpu_batch_policy.facts.model.base import build_resource
from gpu_batch_policy.primitives.values import plain

from tests.stack_runner import config_value, shared_unless_edited

Item = tuple[str, Any, str, str]
RELEASE = "kubernetes:helm.sh/v3:Release"


@functools.lru_cache(maxsize=16)
def _items(stack: str, edits_json: str) -> tuple[Item, ...]:
    result = shared_unless_edited(stack, json.loads(edits_json) or None)
    declared = [(res.type, plain(res.inputs), res.urn, res.name) for res in result.resources]
    objects, renders = render_releases(build_resource(t, p, u, n) for t, p, u, n in declared)
    failed = {urn: r.message for urn, r in renders.items() if r.status != "rendered"}
    assert not failed, f"charts did not render: {failed}"
    items: list[Item] = [item for item in declared if item[0] != RELEASE]
    for obj in objects:
        urn = f"{obj.urn}$rendered:{obj.kind}/{obj.namespace or ''}/{obj.name}"
        items.append((obj.type, obj.props, urn, obj.name))
    return tuple(items)


def stack_items(stack: str, edits: dict[str, Any] | None = None) -> list[Item]:
    """Program resources plus rendered objects (deep copies: tests may edit them)."""
    return copy.deepcopy(list(_items(stack, json.dumps(edits or {}, sort_keys=True))))


def model_of(items: Iterable[Item]) -> StackModel:
    return StackModel.from_plain(items, render=False)


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
