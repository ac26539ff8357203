"""Dominant resource share (DRS) of a ClusterQueue or Cohort, ported from Kueue v0.19.2.

Upstream: kubernetes-sigs/kueue@v0.19.2 ``pkg/cache/scheduler/fair_sharing.go``:
``dominantResourceShare`` (per resource, the usage above the node's subtree quota summed over
flavors, over what the parent could lend -- ``calculateLendable``: ``potentialAvailable`` of the
parent for every FlavorResource of the root, summed per resource -- times 1000; the largest
ratio, ties to the alphabetically first resource), ``DRS.PreciseWeightedShare`` (ratio / weight;
+Inf for a borrowing node of weight 0), ``CompareDRS`` (two zero-weight borrowers compare by
unweighted ratio, one zero-weight borrower is above everything else) and ``DRS.IsBorrowingOn``.
A node without a parent has share 0.
"""

from __future__ import annotations

import math

from whatif.tree import FlavorResource, Node, potential_available


class DRS:
    """One node's share.  A plain slotted class: it is built for every share computed (millions
    in a long run), and a frozen dataclass's generated ``__init__`` costs several times more."""

    __slots__ = ("borrowed", "borrowing", "dominant", "rank", "ratio", "value", "weight")

    def __init__(
        self,
        weight: float,
        ratio: float,  # unweighted, per mille of what the parent can lend
        dominant: str = "",
        borrowing: bool = False,
        borrowed: tuple[FlavorResource, ...] = (),
    ) -> None:
        self.weight = weight
        self.ratio = ratio
        self.dominant = dominant
        self.borrowing = borrowing
        # the FlavorResources it borrows, in its quota's order: a tuple, not a frozenset, because
        # only ``borrowing_on`` walks it and a frozenset hashed every key of every share built
        # (issue 44 item 3, round 13); equality and hashing compare it as a set
        self.borrowed = borrowed
        # what ``compare`` orders by, ``rank`` first: (1, ratio) for a zero-weight borrower, else
        # (0, weighted share); two fields, not a tuple, so compiled ``compare`` compares C numbers
        # (issue 44 item 3, round 8)
        zero_weight = self.zero_weight_borrows()
        self.rank = 1 if zero_weight else 0
        self.value = ratio if zero_weight else self.precise()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DRS):
            return NotImplemented
        return (self.weight, self.ratio, self.dominant, self.borrowing, frozenset(self.borrowed)) == (
            other.weight,
            other.ratio,
            other.dominant,
            other.borrowing,
            frozenset(other.borrowed),
        )

    def __hash__(self) -> int:
        return hash((self.weight, self.ratio, self.dominant, self.borrowing, frozenset(self.borrowed)))

    def __repr__(self) -> str:
        return f"DRS(weight={self.weight}, ratio={self.ratio}, dominant={self.dominant!r}, borrowing={self.borrowing})"

    def is_zero(self) -> bool:
        return self.ratio == 0

    def zero_weight_borrows(self) -> bool:
        return self.weight == 0 and not self.is_zero()

    def precise(self) -> float:
        """``PreciseWeightedShare``."""
        if self.is_zero():
            return 0.0
        if self.weight == 0:
            return math.inf
        return self.ratio / self.weight

    def rounded(self) -> tuple[int, str]:
        """``roundedWeightedShare``: the ceiling of the weighted share; MaxInt64 for a zero-weight
        borrower.  What Kueue reports in ClusterQueue and Cohort status (``weightedShare``)."""
        if self.zero_weight_borrows():
            return 2**63 - 1, self.dominant
        return math.ceil(self.precise()), self.dominant

    def borrowing_on(self, requested: dict[FlavorResource, int]) -> bool:
        """``IsBorrowingOn``: borrows on a FlavorResource the workload requests."""
        return any(requested.get(fr, 0) > 0 for fr in self.borrowed)


NEGATIVE = DRS(1.0, -1.0)  # ``NegativeDRS``: below every real share


def compare(a: DRS, b: DRS) -> int:
    """``CompareDRS``: -1 when ``a`` is preferred for scheduling, 1 when it is for preemption.

    Two zero-weight borrowers compare by unweighted ratio, one is above everything else, the
    rest compare by weighted share: ``rank`` then ``value``, as the tuples (rank, value) order."""
    if a.rank != b.rank:
        return 1 if a.rank > b.rank else -1
    return (a.value > b.value) - (a.value < b.value)


def lendable(parent: Node) -> dict[str, int]:
    """``calculateLendable``: per resource, what ``parent`` could provide if nothing else used any.

    It depends on quotas only (``potentialAvailable``), never on usage, so the node keeps it."""
    if parent.lendable is None:
        out: dict[str, int] = {}
        for fr in parent.root().subtree_quota:
            out[fr[1]] = out.get(fr[1], 0) + potential_available(parent, fr)
        parent.lendable = out
    return parent.lendable


def share(node: Node, less: dict[FlavorResource, int] | None = None) -> DRS:
    """``dominantResourceShare(node, nil)``; ``less``: as if that usage were removed from ``node``
    (a ClusterQueue -- what ``SimulateUsageRemoval`` then the share would give, without the
    tree being touched)."""
    if less is None:
        cached = node.share_cache
        if cached is not None and cached[0] == node.version:
            drs: DRS = cached[1]
            return drs
        drs = _share(node, None)
        node.share_cache = (node.version, drs)
        return drs
    return _share(node, less)


def _share(node: Node, less: dict[FlavorResource, int] | None) -> DRS:
    if node.parent is None:
        return DRS(node.fair_weight, 0.0)
    borrowing: dict[str, int] = {}
    borrowed: list[FlavorResource] = []
    for fr, quota in node.subtree_quota.items():
        above = node.usage.get(fr, 0) - (less.get(fr, 0) if less else 0) - quota
        if above > 0:
            borrowing[fr[1]] = borrowing.get(fr[1], 0) + above
            borrowed.append(fr)
    if not borrowing:
        return DRS(node.fair_weight, 0.0)
    can_lend = lendable(node.parent)
    ratio, dominant = 0.0, ""
    for resource, amount in borrowing.items():
        lr = can_lend.get(resource, 0)
        if lr > 0:
            r = amount * 1000.0 / lr
            if r > ratio or (r == ratio and resource < dominant):
                ratio, dominant = r, resource
    return DRS(node.fair_weight, ratio, dominant, True, tuple(borrowed))
