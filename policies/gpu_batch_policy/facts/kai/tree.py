"""The KAI queue hierarchy of a stack: declared Queues plus the ones the KAI chart creates.

KAI checks almost nothing about the hierarchy itself: its Queue webhook only requires
``spec.resources`` and accepts a missing parent, a cycle or children whose quotas exceed the
parent's; the scheduler then silently drops jobs whose queue (or parent) is missing or is not a
leaf (``pkg/scheduler/actions/utils/input_jobs.go``; kai-kuberay-skypilot.md §1.5). So the pack
has to see the whole tree, including the queues it does not declare: on install the chart creates
``default-parent-queue`` → ``default-queue`` (``defaultQueue.*`` values, ``templates/
default-queue.yaml``), which is where the podgrouper sends workloads that carry no queue label.

A queue's ancestors are resolved by name; a missing parent or a cycle ends the chain and is
reported by its own rule, never guessed around.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ...primitives.values import Unknown, as_bool, as_str, dig
from ..model import HelmRelease, KaiQueue, StackModel, Subject
from ..model.workloads import KaiResource

# KAI chart defaults (deployments/kai-scheduler/values.yaml @v0.13.0, ``defaultQueue``).
_DEFAULT_QUEUE_RESOURCES: dict[str, Any] = {
    r: {"quota": 0, "limit": -1, "overQuotaWeight": 1} for r in ("cpu", "gpu", "memory")
}
KAI_DEFAULT_QUEUE_VALUES: dict[str, Any] = {
    "createDefaultQueue": True,
    "parentName": "default-parent-queue",
    "childName": "default-queue",
    "parentResources": _DEFAULT_QUEUE_RESOURCES,
    "childResources": _DEFAULT_QUEUE_RESOURCES,
}


def _merge(defaults: Any, override: Any) -> Any:
    """Helm's value coalescing: maps merge key by key, anything else replaces."""
    if isinstance(defaults, dict) and isinstance(override, dict):
        out = dict(defaults)
        for key, value in override.items():
            out[key] = _merge(defaults.get(key), value)
        return out
    return defaults if override is None else override


def _number(raw: Any) -> float | Unknown | None:
    if isinstance(raw, Unknown):
        return raw
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        return None
    # KAI keeps quotas as float64 (wire numbers are doubles); an int beyond a double, NaN or an
    # infinity is no amount (a Decimal made from it would poison the tree's arithmetic).
    number = float(raw) if isinstance(raw, float) or abs(raw) < 2**1023 else math.inf
    return number if math.isfinite(number) else None


def _resources(raw: Any) -> dict[str, KaiResource] | Unknown | None:
    if isinstance(raw, Unknown):
        return raw
    if not isinstance(raw, dict):
        return None
    return {
        str(k): KaiResource(
            _number(dig(v, "quota")), _number(dig(v, "limit")), _number(dig(v, "overQuotaWeight"))
        )
        for k, v in raw.items()
    }


@dataclass(frozen=True)
class QueueNode:
    """One queue: declared (``queue`` set) or created by a KAI Helm release (``release`` set)."""

    name: str
    parent: str | Unknown | None
    resources: dict[str, KaiResource] | Unknown | None
    subject: Subject
    queue: KaiQueue | None = None
    release: HelmRelease | None = None

    def describe(self) -> str:
        if self.queue is not None:
            return self.queue.describe()
        return f"Queue '{self.name}' (created by {self.subject.describe()})"

    def amount(self, resource: str, field: str) -> Decimal | Unknown | None:
        """``quota``/``limit`` of ``resource`` as a Decimal; None when unset."""
        if isinstance(self.resources, Unknown):
            return self.resources
        entry = (self.resources or {}).get(resource)
        if entry is None:
            return None
        raw = entry.quota if field == "quota" else entry.limit
        if isinstance(raw, Unknown):
            return raw
        return None if raw is None else Decimal(str(raw))


def chart_queues(release: HelmRelease) -> list[QueueNode]:
    """The two default queues a KAI release creates on install (none when switched off)."""
    values = release.value("defaultQueue")
    if isinstance(values, Unknown):
        return []
    merged = _merge(KAI_DEFAULT_QUEUE_VALUES, values if isinstance(values, dict) else None)
    if as_bool(merged.get("createDefaultQueue")) is not True:
        return []
    parent, child = as_str(merged.get("parentName")), as_str(merged.get("childName"))
    if not isinstance(parent, str) or not isinstance(child, str):
        return []
    return [
        QueueNode(parent, None, _resources(merged.get("parentResources")), release, release=release),
        QueueNode(child, parent, _resources(merged.get("childResources")), release, release=release),
    ]


class QueueTree:
    """Every KAI queue by name, with parent/children navigation."""

    def __init__(self, model: StackModel) -> None:
        self.declared: list[QueueNode] = [
            QueueNode(q.name, q.parent_queue, q.resources, q, queue=q) for q in model.kai_queues()
        ]
        self.nodes: dict[str, QueueNode] = {}
        for release in model.kai_releases():
            for node in chart_queues(release):
                self.nodes.setdefault(node.name, node)
        for node in self.declared:  # a declared queue of the same name wins over the chart's
            self.nodes[node.name] = node
        # Children by parent name, built once: rules ask per queue and per workload.
        self._children: dict[str, list[QueueNode]] = {}
        for node in self.nodes.values():
            if isinstance(node.parent, str):
                self._children.setdefault(node.parent, []).append(node)
        self._leaves: list[str] | None = None
        self._children_known = not any(isinstance(n.parent, Unknown) for n in self.nodes.values())
        # Names of queues not known until apply: lookups that miss cannot conclude "missing".
        self.names_known = all(q.obj.identity_known for q in model.kai_queues())

    def get(self, name: str) -> QueueNode | None:
        return self.nodes.get(name)

    def children(self, name: str) -> list[QueueNode]:
        return list(self._children.get(name, ()))

    def children_known(self) -> bool:
        """False when some queue's parent is unknown: any queue may gain a child at apply."""
        return self._children_known

    def is_leaf(self, name: str) -> bool:
        return name not in self._children

    def leaves(self) -> list[str]:
        """Names of every leaf queue, sorted."""
        if self._leaves is None:
            self._leaves = sorted(n.name for n in self.nodes.values() if self.is_leaf(n.name))
        return list(self._leaves)

    def ancestors(self, name: str) -> tuple[list[QueueNode], str | None]:
        """Parent chain of ``name`` (nearest first) and why it stopped early, if it did:
        ``"unknown"`` (a parent not known yet), ``"missing:<name>"`` or ``"cycle"``."""
        chain: list[QueueNode] = []
        seen = {name}
        node = self.nodes.get(name)
        while node is not None and node.parent:
            parent = node.parent
            if isinstance(parent, Unknown):
                return chain, "unknown"
            if parent in seen:
                return chain, "cycle"
            seen.add(parent)
            node = self.nodes.get(parent)
            if node is None:
                return chain, f"missing:{parent}"
            chain.append(node)
        return chain, None
