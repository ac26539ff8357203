"""Whether any namespace can submit to a ClusterQueue: the one answer the pack's
``kueue-clusterqueue-reachable`` rule and the capacity report (``preview/report``) both use.

Kueue v0.19.2 admits a workload into a ClusterQueue only through a LocalQueue
(``pkg/cache/queue``: a Workload names a LocalQueue, which names the ClusterQueue), and only when
the ClusterQueue's ``namespaceSelector`` matches the workload's namespace
(``pkg/cache/scheduler/clusterqueue.go`` ``updateClusterQueue`` turns the selector into a
``labels.Selector`` with apimachinery's ``metav1.LabelSelectorAsSelector``, which maps a nil
selector to ``labels.Nothing()``; ``apis/kueue/v1beta2/clusterqueue_types.go``: "Defaults to null
which is a nothing selector (no namespaces eligible)").  So a ClusterQueue is unreachable when its
selector is omitted, or when no LocalQueue that targets it sits in a namespace it selects.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..primitives.values import Unknown
from .model import ClusterQueue, LocalQueue, StackModel
from .selectors import NAME_LABEL, selector_matches


@dataclass(frozen=True)
class Reach:
    """``reachable``: True / False / None (cannot tell before apply); ``why``: the reason."""

    reachable: bool | None
    why: str
    local_queues: tuple[str, ...] = ()


def _admits(cq: ClusterQueue, lq: LocalQueue, namespaces: Mapping[str, Any]) -> bool | None:
    selector = cq.namespace_selector
    if isinstance(selector, Unknown) or not lq.obj.identity_known:
        return None
    if selector is None:
        return False
    labels: dict[str, str | Unknown] = {NAME_LABEL: lq.namespace or ""}
    ns = namespaces.get(lq.namespace or "")
    complete = False
    if ns is not None:
        labels.update(ns.labels)
        complete = ns.obj.labels_known
    return selector_matches(selector, labels, complete=complete)


def reach(model: StackModel, cq: ClusterQueue) -> Reach:
    """Whether a namespace can submit to ``cq`` through a LocalQueue the stack declares."""
    if isinstance(cq.namespace_selector, Unknown):
        return Reach(None, "spec.namespaceSelector is unknown until apply")
    if cq.namespace_selector is None:
        return Reach(False, "spec.namespaceSelector is omitted, which selects no namespace")
    namespaces = model.memo("facts.kueue_reach.namespaces", lambda: {n.name: n for n in model.namespaces()})
    targets: list[LocalQueue] = []
    for lq in model.local_queues():
        if isinstance(lq.cluster_queue, Unknown):
            return Reach(None, f"LocalQueue {lq.obj.qualified_name} names a ClusterQueue unknown until apply")
        if lq.cluster_queue != cq.name:
            continue
        # Each API server resolves names among its own objects (StackModel.lookup): a LocalQueue
        # on another cluster of the program does not reach this queue.
        here, there = model.cluster_key(cq.obj), model.cluster_key(lq.obj)
        if not here or not there or here == there:
            targets.append(lq)
    names = tuple(sorted(lq.obj.qualified_name for lq in targets))
    if not targets:
        return Reach(False, "no LocalQueue points at it")
    verdicts = [_admits(cq, lq, namespaces) for lq in targets]
    if any(v is True for v in verdicts):
        return Reach(True, "", names)
    if any(v is None for v in verdicts):
        return Reach(None, "whether its namespaceSelector admits its LocalQueues' namespaces", names)
    return Reach(
        False, f"its namespaceSelector admits none of its LocalQueues' namespaces ({', '.join(names)})", names
    )
