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

An unreachable ClusterQueue in a cohort still gives its quota away: Kueue counts each member's
lendable part (its ``lendingLimit``, else its whole nominal quota) in the cohort's subtree quota,
which every other member may borrow (kueue v0.19.2 ``pkg/cache/scheduler/resource_node.go``
``accumulateFromChild`` / ``potentialAvailable``).  A member borrows only flavors of its own
resource groups (``pkg/scheduler/flavorassigner/flavorassigner.go``
``findFlavorForPodSets`` walks the queue's own resource groups) and at most its
``borrowingLimit``.  So a "slack" queue that no namespace submits to (MLBatch's
``slack-cluster-queue``) is capacity for its reachable cohort peers, which :func:`lent_to` finds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..primitives.values import Quantity, Unknown
from .demand import CannotTellError
from .kueue_capacity import cohort_tree
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


@dataclass(frozen=True)
class _Pointing:
    """The stack's LocalQueues by the ClusterQueue name they give (``spec.clusterQueue``), each
    list in the model's order, and the first LocalQueue whose name is unknown until apply."""

    by_name: Mapping[str, tuple[LocalQueue, ...]]
    first_unknown: LocalQueue | None


def _local_queues_by_target(model: StackModel) -> _Pointing:
    """:class:`_Pointing`, built in one pass per model: :func:`reach` runs for every ClusterQueue,
    and scanning every LocalQueue for each was quadratic (1,000,000 steps at 1,000 teams, in the
    pack's ``kueue-clusterqueue-reachable`` rule and again in the capacity report)."""

    def build() -> _Pointing:
        by_name: dict[str, list[LocalQueue]] = {}
        first_unknown: LocalQueue | None = None
        for lq in model.local_queues():
            if isinstance(lq.cluster_queue, Unknown):
                first_unknown = lq if first_unknown is None else first_unknown
            elif lq.cluster_queue is not None:
                by_name.setdefault(lq.cluster_queue, []).append(lq)
        return _Pointing({name: tuple(lqs) for name, lqs in by_name.items()}, first_unknown)

    return model.memo("facts.kueue_reach.local_queues_by_target", build)


def reach(model: StackModel, cq: ClusterQueue) -> Reach:
    """Whether a namespace can submit to ``cq`` through a LocalQueue the stack declares."""
    if isinstance(cq.namespace_selector, Unknown):
        return Reach(None, "spec.namespaceSelector is unknown until apply")
    if cq.namespace_selector is None:
        return Reach(False, "spec.namespaceSelector is omitted, which selects no namespace")
    namespaces = model.memo("facts.kueue_reach.namespaces", lambda: {n.name: n for n in model.namespaces()})
    pointing = _local_queues_by_target(model)
    if pointing.first_unknown is not None:
        name = pointing.first_unknown.obj.qualified_name
        return Reach(None, f"LocalQueue {name} names a ClusterQueue unknown until apply")
    targets: list[LocalQueue] = []
    for lq in pointing.by_name.get(cq.name, ()):
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


@dataclass(frozen=True)
class Lending:
    """Who can borrow an unreachable queue's ``resource`` quota: ``borrowers`` (qualified names)
    certainly can; ``unsure`` says why it cannot be told before apply (empty when it can)."""

    borrowers: tuple[str, ...]
    unsure: str = ""


def _positive(q: Quantity | None) -> bool | None:
    """None means no limit (True); an unknown or unparsable quantity is None (cannot tell)."""
    if q is None:
        return True
    if q.unknown or q.value is None:
        return None
    return q.value > 0


def _reach_of(model: StackModel, cq: ClusterQueue) -> Reach:
    return model.memo(f"facts.kueue_reach.reach:{id(cq.obj)}", lambda: reach(model, cq))


def lent_to(model: StackModel, cq: ClusterQueue, resource: str) -> Lending:
    """The reachable members of ``cq``'s cohort tree that can borrow its ``resource`` quota.

    A flavor of ``cq`` lends when its lendable part is above zero; a peer borrows it when the peer
    lists the same flavor with ``resource`` and its ``borrowingLimit`` is unset or above zero, and
    the peer itself is reachable (a chain of slack queues lends to nobody).
    """
    if isinstance(cq.cohort, Unknown):
        return Lending((), "its cohort is unknown until apply")
    if not cq.cohort:
        return Lending(())
    try:
        tree = cohort_tree(model, cq.cohort)
    except CannotTellError as exc:
        return Lending((), str(exc))
    unsure = ""
    lent: list[str] = []
    for group in cq.resource_groups:
        for flavor in group.flavors:
            entry = next((r for r in flavor.resources if r.name == resource), None)
            if not isinstance(flavor.name, str) or entry is None:
                continue
            field, lendable = entry.lendable
            lends = _positive(lendable)
            if lends is None:
                unsure = f"{entry.path}.{field} is unknown until apply"
            elif lends:
                lent.append(flavor.name)
    borrowers: set[str] = set()
    for peer in model.cluster_queues():
        if peer.obj is cq.obj or peer.cohort is None:
            continue
        if isinstance(peer.cohort, Unknown):
            unsure = unsure or f"the cohort of {peer.obj.qualified_name} is unknown until apply"
            continue
        if peer.cohort not in tree:
            continue
        for name in lent:
            entry = peer.quota_entry(name, resource)
            if entry is None:
                continue
            borrows = _positive(entry.borrowing_limit)
            peer_reach = _reach_of(model, peer).reachable
            if borrows and peer_reach:
                borrowers.add(peer.obj.qualified_name)
            elif borrows is not False and peer_reach is not False:
                unsure = unsure or f"whether {peer.obj.qualified_name} can borrow its quota"
    return Lending(tuple(sorted(borrowers)), "" if borrowers else unsure)
