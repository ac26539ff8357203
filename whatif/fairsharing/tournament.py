"""The order of a cycle's entries under fair sharing, ported from Kueue v0.19.2.

Upstream: kubernetes-sigs/kueue@v0.19.2 ``pkg/scheduler/fair_sharing_iterator.go``:
``fairSharingIterator.pop`` (an entry of a ClusterQueue without a cohort is taken as is; otherwise
a tournament over its root cohort), ``computeDRS`` (for each entry, the share of its ClusterQueue
and of every cohort on its path *with the entry's usage added*, recomputed at every pop so that
entries admitted earlier in the cycle count), ``runTournament`` (child cohorts' winners, then the
child ClusterQueues' entries; the best per cohort bubbles up) and ``entryComparer.less``:
not borrowing on the requested FlavorResources first (gate ``FairSharingPrioritizeNonBorrowing``,
on by default), lower share, higher priority (``PrioritySortingWithinCohort``, on), older.
``PrioritizePreemptorWorkloads`` is off by default and not modelled.  Which root cohort goes
first is arbitrary in Kueue (a map); trees share no quota, so here it is ClusterQueue name order.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from whatif.fairsharing.share import DRS, compare, share
from whatif.tree import FlavorResource, Node, add_all, remove_all
from whatif.workload import Workload


class Entry(Protocol):
    @property
    def workload(self) -> Workload: ...
    @property
    def node(self) -> Node: ...
    @property
    def usage(self) -> dict[FlavorResource, int]: ...


class _Item:
    """An entry with what the tournament reads of it, read once per cycle: compiled, every read
    through the ``Entry`` protocol is a Python attribute lookup, and ``_less`` reads them at every
    comparison (issue 44 item 3, round 9).  ``usage`` is the entry's own dictionary, not a copy."""

    __slots__ = ("entry", "key", "node", "priority", "seq", "usage")

    def __init__(self, entry: Entry) -> None:
        self.entry = entry
        self.node = entry.node
        self.usage = entry.usage
        wl = entry.workload
        self.key = wl.key
        self.priority = wl.priority
        self.seq = wl.seq


def fair_order(entries: list[Entry]) -> Iterator[Entry]:
    """Yield ``entries`` in fair-sharing order; the caller processes each before the next."""
    items = sorted([_Item(e) for e in entries], key=lambda i: i.node.name)
    left: dict[Node, _Item] = {i.node: i for i in items}
    trees: dict[Node, dict[Node, _Item]] = {}  # root -> its entries still left
    for node, i in left.items():
        trees.setdefault(node.root(), {})[node] = i
    kept: dict[Node, _Kept] = {}
    while left:
        node = next(iter(left))
        root = node.root()
        tree = trees[root]
        if len(tree) == 1:  # the tree's last entry (or one without a cohort): no tournament
            del tree[node]
            yield left.pop(node).entry
            continue
        winner = _tournament(root, tree, _shares(tree, kept))
        assert winner is not None
        del left[winner.node], tree[winner.node]
        yield winner.entry


Shares = dict[tuple[str, str], DRS]  # (parent cohort, workload key) -> share below it
_Kept = tuple[int, DRS]  # a flat entry's share with its usage added, and its queue's version then


def _shares(tree: dict[Node, _Item], kept: dict[Node, _Kept]) -> Shares:
    """``computeDRS``: each node's share on the entry's path, with the entry admitted.

    Recomputed at every pop as Kueue does; an entry right under the root whose ClusterQueue's
    usage has not changed since (its ``version``) keeps the share it had.  Deeper entries are
    computed again: adding and removing their usage moves their ancestors' versions."""
    out: Shares = {}
    for node, e in tree.items():
        root = node.root()
        if node.parent is root:  # flat: the share with its usage added, the tree untouched
            found = kept.get(node)
            if found is None or found[0] != node.version:
                found = kept[node] = (node.version, share(node, {fr: -v for fr, v in e.usage.items()}))
            out[(root.name, e.key)] = found[1]
            continue
        add_all(node, e.usage)
        drs = share(node)
        for ancestor in node.ancestors():
            out[(ancestor.name, e.key)] = drs
            drs = share(ancestor)
        remove_all(node, e.usage)
    return out


def _less(a: _Item, b: _Item, parent: str, shares: Shares) -> bool:
    a_drs, b_drs = shares[(parent, a.key)], shares[(parent, b.key)]
    a_borrows, b_borrows = a_drs.borrowing_on(a.usage), b_drs.borrowing_on(b.usage)
    if a_borrows != b_borrows:
        return not a_borrows
    order = compare(a_drs, b_drs)
    if order != 0:
        return order == -1
    if a.priority != b.priority:
        return a.priority > b.priority
    return a.seq < b.seq


def _tournament(cohort: Node, left: dict[Node, _Item], shares: Shares) -> _Item | None:
    candidates: list[_Item] = []
    for child in cohort.child_cohorts():
        winner = _tournament(child, left, shares)
        if winner is not None:
            candidates.append(winner)
    candidates += [left[cq] for cq in cohort.child_cluster_queues() if cq in left]
    if not candidates:
        return None
    best = candidates[0]
    for current in candidates[1:]:
        if _less(current, best, cohort.name, shares):
            best = current
    return best
