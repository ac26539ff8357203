"""KAI Scheduler's proportion plugin: deserved quota, fair share, limits and reclaim rules.

A port of kai-scheduler/KAI-Scheduler at tag ``v0.17.0``, ``pkg/scheduler/plugins/proportion``:

- ``resource_share/resource_share.go`` and ``queue_resource_share.go``: one :class:`Share` per
  queue and resource (``Deserved``, ``FairShare``, ``MaxAllowed``, ``OverQuotaWeight``,
  ``Allocated``, ``AllocatedNotPreemptible``, ``Request``); ``GetRequestableShare``,
  ``GetAllocatableShare``, ``GetDominantResourceShare`` (``noFairShareDrfMultiplier`` 1000);
- ``resource_division/resource_division.go``: ``setResourceShare`` (deserved first, capped by what
  is requested within the limit), ``divideOverQuotaResource`` (over-quota by queue priority, then
  weight, in rounds, fair shares floored to whole units; ``divideRemainingResource`` hands the
  rounded-off remainder out one unit at a time, largest remainder first), applied per level of
  the hierarchy (``proportion.go`` ``setFairShareForQueues``);
- ``capacity_policy/max_allowed_check.go`` ``isOverLimit`` and ``quota_check.go``
  ``isAllocatedNonPreemptibleOverQuota``: a job over its queue's (or an ancestor's) limit, or a
  non-preemptible job over deserved quota, is not allocated;
- ``reclaimable/reclaimable.go`` ``CanReclaimResources`` / ``Reclaimable`` with the saturation
  rule between siblings (``relcaimerSaturationMultiplier`` 1), ``reclaimable/strategies``
  (``MaintainFairShareStrategy``, ``GuaranteeDeservedQuotaStrategy``) and
  ``reclaimable/filter_victims.go``;
- ``queue_order/queue_order.go`` ``GetQueueOrderResult``.

Quantities are float64 as in KAI: CPU in millicores, memory in bytes (a Queue's memory quota and
limit are MB, times 10^6: ``proportion.go`` ``mebibytes``), GPUs in devices (fractions allowed);
-1 is unlimited (``commonconstants.UnlimitedResourceQuantity``).  Historical usage
(``Usage``, the usage database) is 0, and ``kValue`` is the default 1.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

UNLIMITED = -1.0
CPU, MEMORY, GPU = "cpu", "memory", "gpu"
RESOURCES: tuple[str, ...] = (CPU, MEMORY, GPU)  # rs.AllResources order
NO_FAIR_SHARE_DRF_MULTIPLIER = 1000.0
Vector = dict[str, float]


def vector(cpu: float = 0.0, memory: float = 0.0, gpu: float = 0.0) -> Vector:
    return {CPU: cpu, MEMORY: memory, GPU: gpu}


def compare(quantity: float, other: float) -> int:
    """``compareQuantities``: unlimited is above everything but itself."""
    if quantity == UNLIMITED:
        return 0 if other == UNLIMITED else 1
    if other == UNLIMITED:
        return -1
    return (quantity > other) - (quantity < other)


def less_equal(a: Mapping[str, float], b: Mapping[str, float]) -> bool:
    """``ResourceQuantities.LessEqual``."""
    return all(compare(a[r], b[r]) <= 0 for r in RESOURCES)


@dataclass
class Share:
    """``ResourceShare``: one resource of one queue."""

    deserved: float = 0.0
    fair_share: float = 0.0
    max_allowed: float = UNLIMITED
    over_quota_weight: float = 0.0
    allocated: float = 0.0
    allocated_not_preemptible: float = 0.0
    request: float = 0.0
    usage: float = 0.0

    def requestable(self) -> float:
        """``GetRequestableShare``."""
        if self.max_allowed == UNLIMITED:
            return self.request
        return min(self.max_allowed, self.request)

    def allocatable(self) -> float:
        """``GetAllocatableShare``."""
        if self.deserved == UNLIMITED:
            return self.max_allowed
        allocatable = max(self.deserved, self.fair_share)
        if self.max_allowed != UNLIMITED:
            allocatable = min(self.max_allowed, allocatable)
        return allocatable


@dataclass(eq=False)
class QueueAttrs:
    """``QueueAttributes``: a queue's place in the tree and its three shares."""

    name: str
    parent: str | None
    priority: int
    created: int  # creation order (``CreationTimestamp``)
    shares: dict[str, Share] = field(default_factory=lambda: {r: Share() for r in RESOURCES})
    children: list[str] = field(default_factory=list)

    def of(self, resource: str) -> Share:
        return self.shares[resource]

    def quantities(self, what: str) -> Vector:
        return {r: getattr(self.shares[r], what) for r in RESOURCES}

    def fair_share(self) -> Vector:
        return self.quantities("fair_share")

    def deserved(self) -> Vector:
        return self.quantities("deserved")

    def allocated(self) -> Vector:
        return self.quantities("allocated")

    def allocatable(self) -> Vector:
        return {r: self.shares[r].allocatable() for r in RESOURCES}

    def fair_share_less_than_allocated(self) -> bool:
        """``FairShareLessThanAllocated``: strictly below in every resource."""
        return all(s.fair_share < s.allocated for s in self.shares.values())

    def allocated_plus_le_deserved(self, extra: Mapping[str, float]) -> bool:
        """``AllocatedPlusResourcesLessEqualDeserved``."""
        return all(
            compare(self.shares[r].allocated + extra.get(r, 0.0), self.shares[r].deserved) <= 0
            for r in RESOURCES
        )

    def dominant_share(self, total: Mapping[str, float]) -> float:
        """``GetDominantResourceShare``."""
        dominant = 0.0
        for r in RESOURCES:
            share = self.shares[r]
            allocatable = share.allocatable()
            if allocatable == UNLIMITED:
                allocatable = total[r]
            if allocatable == 0:
                value = share.allocated * NO_FAIR_SHARE_DRF_MULTIPLIER
            else:
                value = share.allocated / allocatable
            dominant = max(dominant, value)
        return dominant

    def clone(self) -> QueueAttrs:
        return QueueAttrs(
            self.name,
            self.parent,
            self.priority,
            self.created,
            {r: Share(**vars(s)) for r, s in self.shares.items()},
            list(self.children),
        )


# --- resource_division.go -------------------------------------------------------------------


def set_resource_share(total: float, k_value: float, resource: str, queues: Iterable[QueueAttrs]) -> float:
    """``setResourceShare``: deserved quota first, the rest over quota; returns what is left."""
    qs = list(queues)
    remaining = _set_deserved(total, qs, resource)
    if remaining > 0:
        return divide_over_quota(remaining, k_value, qs, resource)
    return 0.0


def _set_deserved(total: float, queues: list[QueueAttrs], resource: str) -> float:
    remaining = total
    for q in queues:
        share = q.of(resource)
        deserved = total if share.deserved == UNLIMITED else share.deserved
        amount = min(deserved, share.requestable())
        share.fair_share += amount
        remaining -= amount
    return remaining


def divide_over_quota(total: float, k_value: float, queues: Iterable[QueueAttrs], resource: str) -> float:
    """``divideOverQuotaResource``: by queue priority (highest first), then the remainders."""
    by_priority: dict[int, list[QueueAttrs]] = {}
    for q in queues:
        by_priority.setdefault(q.priority, []).append(q)
    priorities = sorted(by_priority, reverse=True)
    remaining = total
    leftovers: dict[int, dict[str, tuple[QueueAttrs, float]]] = {}
    for priority in priorities:
        remaining, leftovers[priority] = _divide_up_to_fair_share(
            remaining, k_value, by_priority[priority], resource
        )
    for priority in priorities:
        if remaining <= 0:
            break
        if leftovers.get(priority):
            remaining = _divide_remaining(remaining, leftovers[priority], resource)
    return remaining


def _satisfied(q: QueueAttrs, resource: str) -> bool:
    share = q.of(resource)
    if share.request <= share.fair_share:
        return True
    return share.max_allowed != UNLIMITED and share.max_allowed <= share.fair_share


def _remaining_requested(q: QueueAttrs, resource: str) -> float:
    share = q.of(resource)
    requested = share.requestable()
    return 0.0 if requested < share.fair_share else requested - share.fair_share


def _share_weights(queues: list[QueueAttrs], resource: str, k_value: float) -> tuple[dict[str, float], float]:
    total_weights = sum(
        q.of(resource).over_quota_weight for q in queues if _remaining_requested(q, resource) > 0
    )
    if total_weights == 0:
        return {}, 0.0
    weights: dict[str, float] = {}
    for q in queues:
        if _satisfied(q, resource):
            continue
        share = q.of(resource)
        n_weight = share.over_quota_weight / total_weights
        weights[q.name] = max(0.0, n_weight + k_value * (n_weight - share.usage))
    return weights, sum(weights.values())


def _divide_up_to_fair_share(
    total: float, k_value: float, queues: list[QueueAttrs], resource: str
) -> tuple[float, dict[str, tuple[QueueAttrs, float]]]:
    """``divideUpToFairShare``: rounds of weighted shares, floored to whole units."""
    leftovers: dict[str, tuple[QueueAttrs, float]] = {}
    while True:
        another_round = False
        this_round = total
        weights, weights_sum = _share_weights(queues, resource, k_value)
        if weights_sum == 0:
            break
        for q in queues:
            if total == 0:
                break
            if _satisfied(q, resource):
                continue
            share = q.of(resource)
            requested = _remaining_requested(q, resource)
            if share.over_quota_weight == 0:
                continue
            fair = this_round * (weights.get(q.name, 0.0) / weights_sum)
            give = 0.0
            if requested <= fair:
                give = requested
                leftovers.pop(q.name, None)
            else:
                rounded = math.floor(fair)
                if rounded > 0:
                    give = rounded
                if fair - give > 0:
                    leftovers[q.name] = (q, fair - give)
            if give == 0:
                continue
            share.fair_share += give
            total -= give
            another_round = another_round or requested < fair
        if not another_round or total == 0:
            break
    return total, leftovers


def _divide_remaining(total: float, leftovers: dict[str, tuple[QueueAttrs, float]], resource: str) -> float:
    """``divideRemainingResource``: one unit (or what is left) each, largest remainder first,
    then older queue, then name (``remainingRequestedOrderFn``)."""
    for q, _ in sorted(leftovers.values(), key=lambda item: (-item[1], item[0].created, item[0].name)):
        if total == 0:
            break
        give = min(1.0, total)
        q.of(resource).fair_share += give
        total -= give
    return total


def set_fair_shares(
    queues: Mapping[str, QueueAttrs], total: Mapping[str, float], k_value: float = 1.0
) -> None:
    """``setFairShareForQueues``: the top queues divide the cluster, each queue its fair share."""

    def level(amounts: Mapping[str, float], members: list[QueueAttrs]) -> None:
        if not members:
            return
        for r in RESOURCES:
            set_resource_share(amounts[r], k_value, r, members)
        for q in members:
            level(q.fair_share(), [queues[c] for c in q.children])

    level(total, [q for q in queues.values() if q.parent is None])


# --- capacity_policy ------------------------------------------------------------------------


def chain(queues: Mapping[str, QueueAttrs], leaf: str) -> Iterable[QueueAttrs]:
    """The queue and its ancestors, leaf first."""
    q = queues.get(leaf)
    while q is not None:
        yield q
        q = queues.get(q.parent) if q.parent else None


def over_limit(queues: Mapping[str, QueueAttrs], leaf: str, requested: Mapping[str, float]) -> str | None:
    """``resultsOverLimit`` / ``isOverLimit``: the first queue (leaf upwards) whose limit the
    request would pass, as ``queue resource``; None when within every limit."""
    for q in chain(queues, leaf):
        for r in RESOURCES:
            share = q.of(r)
            if share.max_allowed == UNLIMITED or not requested.get(r):
                continue
            if share.max_allowed < share.allocated + requested[r]:
                return f"{q.name} {r}"
    return None


def non_preemptible_over_quota(
    queues: Mapping[str, QueueAttrs], leaf: str, requested: Mapping[str, float]
) -> str | None:
    """``isAllocatedNonPreemptibleOverQuota`` on the leaf and every ancestor."""
    for q in chain(queues, leaf):
        for r in RESOURCES:
            share = q.of(r)
            if share.deserved == UNLIMITED or not requested.get(r):
                continue
            if share.deserved < share.allocated_not_preemptible + requested[r]:
                return f"{q.name} {r}"
    return None


# --- reclaimable ----------------------------------------------------------------------------


def can_reclaim(queue: QueueAttrs, requested: Mapping[str, float], preemptible: bool) -> bool:
    """``CanReclaimResources``: the reclaimer's queue stays within its fair share (and, for a
    non-preemptible reclaimer, its non-preemptible usage within deserved quota)."""
    allocated = {r: queue.of(r).allocated + requested.get(r, 0.0) for r in RESOURCES}
    if not less_equal(allocated, queue.fair_share()):
        return False
    if preemptible:
        return True
    non_preemptible = {r: queue.of(r).allocated_not_preemptible + requested.get(r, 0.0) for r in RESOURCES}
    return less_equal(non_preemptible, queue.deserved())


def _path(queues: Mapping[str, QueueAttrs], name: str) -> list[QueueAttrs]:
    return list(reversed(list(chain(queues, name))))


def leveled(
    queues: Mapping[str, QueueAttrs], reclaimer: str, reclaimee: str
) -> tuple[QueueAttrs, QueueAttrs]:
    """``getLeveledQueues``: the two queues just below the lowest common ancestor."""
    a, b = _path(queues, reclaimer), _path(queues, reclaimee)
    pair = (a[0], b[0])
    for i in range(min(len(a), len(b))):
        pair = (a[i], b[i])
        if a[i].name != b[i].name:
            break
    return pair


def fits_maintain_fair_share(reclaimee: QueueAttrs, remaining: Mapping[str, float]) -> bool:
    """``FitsMaintainFairShare``: the reclaimee stays above its allocatable share."""
    return not all(compare(remaining[r], reclaimee.of(r).allocatable()) <= 0 for r in RESOURCES)


def reclaimer_fits_deserved_quota(requested: Mapping[str, float], reclaimer: QueueAttrs) -> bool:
    """``ReclaimerFitsDeservedQuota``: the reclaimer's queue stays within deserved quota in
    every resource once it has ``requested``."""
    return reclaimer.allocated_plus_le_deserved(requested)


def reclaimee_exceeds_deserved_quota(reclaimee: QueueAttrs, remaining: Mapping[str, float]) -> bool:
    """``ReclaimeeExceedsDeservedQuota``: what the reclaimee keeps is above its deserved quota in
    at least one resource."""
    return not less_equal(remaining, reclaimee.deserved())


def guarantee_deserved_quota(
    requested: Mapping[str, float],
    reclaimer: QueueAttrs,
    reclaimee: QueueAttrs,
    remaining: Mapping[str, float],
) -> bool:
    """``GuaranteeDeservedQuotaStrategy.Reclaimable``."""
    return reclaimer_fits_deserved_quota(requested, reclaimer) and reclaimee_exceeds_deserved_quota(
        reclaimee, remaining
    )


def fits_reclaim_strategy(
    requested: Mapping[str, float],
    reclaimer: QueueAttrs,
    reclaimee: QueueAttrs,
    remaining: Mapping[str, float],
) -> bool:
    """``FitsReclaimStrategy``: MaintainFairShare, else GuaranteeDeservedQuota."""
    return fits_maintain_fair_share(reclaimee, remaining) or guarantee_deserved_quota(
        requested, reclaimer, reclaimee, remaining
    )


def victim_filter(
    queues: Mapping[str, QueueAttrs], reclaimer_queue: str, requested: Mapping[str, float], victim_queue: str
) -> bool:
    """``FilterVictim`` (``filter_victims.go``)."""
    mine, theirs = leveled(queues, reclaimer_queue, victim_queue)
    if not mine.allocated_plus_le_deserved(requested):
        return fits_maintain_fair_share(theirs, theirs.allocated())
    under = False
    for r in RESOURCES:
        if requested.get(r, 0.0) <= 0:
            continue
        share = theirs.of(r)
        if share.deserved == UNLIMITED:
            continue
        if share.allocated > share.deserved:
            return True
        if share.allocated < share.deserved:
            under = True
    return not under


def _involved(vectors: Iterable[Mapping[str, float]]) -> set[str]:
    return {r for v in vectors for r in RESOURCES if v.get(r, 0.0) > 0}


def _saturation(allocated: float, fair: float) -> float:
    if fair == 0:
        return math.inf if allocated > 0 else 0.0
    if fair == UNLIMITED:
        return 0.0
    return allocated / fair


def reclaimable(
    queues: Mapping[str, QueueAttrs],
    reclaimer_queue: str,
    requested: Mapping[str, float],
    *,
    preemptible: bool,
    victims: Mapping[str, list[Vector]],
    saturation_multiplier: float = 1.0,
) -> bool:
    """``Reclaimable``: every victim's removal fits a reclaim strategy, and the reclaiming queue
    (at every level) stays less saturated than each sibling it takes from."""
    involved: dict[str, set[str]] = {}
    remaining: dict[str, Vector] = {}
    for victim_queue, vectors in victims.items():
        mine, theirs = leveled(queues, reclaimer_queue, victim_queue)
        involved[victim_queue] = _involved(vectors)
        remaining.setdefault(theirs.name, theirs.allocated())
        for vec in vectors:
            if not fits_reclaim_strategy(requested, mine, theirs, remaining[theirs.name]):
                return False
            for q in chain(queues, victim_queue):
                left = remaining.setdefault(q.name, q.allocated())
                for r in RESOURCES:
                    left[r] -= vec.get(r, 0.0)
                involved.setdefault(q.name, set()).update(involved[victim_queue])
    mine_involved = _involved([requested])
    for q in chain(queues, reclaimer_queue):
        left = dict(remaining.get(q.name) or q.allocated())
        for r in RESOURCES:
            left[r] += requested.get(r, 0.0)
        for sibling_name, sibling_left in remaining.items():
            sibling = queues[sibling_name]
            if sibling.parent != q.parent or sibling.name == q.name:
                continue
            for r in involved.get(sibling_name, set()) | mine_involved:
                fair_mine, fair_theirs = q.of(r).fair_share, sibling.of(r).fair_share
                if fair_mine == UNLIMITED and fair_theirs == UNLIMITED:
                    continue
                ratio_mine = _saturation(left[r], fair_mine)
                ratio_theirs = _saturation(sibling_left[r], fair_theirs)
                if ratio_mine > 1 and fair_theirs > 0 and ratio_mine * saturation_multiplier >= ratio_theirs:
                    return False
        if preemptible:
            continue
        non_preemptible = {r: q.of(r).allocated_not_preemptible + requested.get(r, 0.0) for r in RESOURCES}
        if not less_equal(non_preemptible, q.deserved()):
            return False
    return True


# --- queue_order.go -------------------------------------------------------------------------


def queue_order(
    left: QueueAttrs,
    right: QueueAttrs,
    left_job: Mapping[str, float] | None,
    right_job: Mapping[str, float] | None,
    total: Mapping[str, float],
    *,
    left_victims: Mapping[str, float] | None = None,
    right_victims: Mapping[str, float] | None = None,
) -> int:
    """``GetQueueOrderResult``: -1 when ``left`` goes first.  Jobs are the pending job's
    resources (allocation order) or, for victim ordering, the victims' summed resources."""
    a_over, b_over = left.fair_share_less_than_allocated(), right.fair_share_less_than_allocated()
    if a_over != b_over:
        return 1 if a_over else -1
    zero = vector()
    a_starved = left.allocated_plus_le_deserved(left_job or zero)
    b_starved = right.allocated_plus_le_deserved(right_job or zero)
    if a_starved != b_starved:
        return -1 if a_starved else 1
    if left.priority != right.priority:
        return -1 if left.priority > right.priority else 1
    a_violation = _zero_share_violation(left, left_job or zero)
    b_violation = _zero_share_violation(right, right_job or zero)
    if a_violation != b_violation:
        return 1 if a_violation else -1
    a_share = _share_with(left, left_job or zero, left_victims or zero, total)
    b_share = _share_with(right, right_job or zero, right_victims or zero, total)
    if a_share != b_share:
        return -1 if a_share < b_share else 1
    a_share, b_share = left.dominant_share(total), right.dominant_share(total)
    if a_share != b_share:
        return -1 if a_share < b_share else 1
    a_alloc, b_alloc = left.allocatable(), right.allocatable()
    if not less_equal(b_alloc, a_alloc) and less_equal(a_alloc, b_alloc):
        return -1
    if not less_equal(a_alloc, b_alloc) and less_equal(b_alloc, a_alloc):
        return 1
    return -1 if left.created < right.created else 1


def _zero_share_violation(q: QueueAttrs, job: Mapping[str, float]) -> bool:
    allocatable = q.allocatable()
    return any(allocatable[r] == 0 and q.of(r).allocated + job.get(r, 0.0) > 0 for r in RESOURCES)


def _share_with(
    q: QueueAttrs, job: Mapping[str, float], victims: Mapping[str, float], total: Mapping[str, float]
) -> float:
    saved = q.allocated()
    for r in RESOURCES:
        q.of(r).allocated += job.get(r, 0.0) - victims.get(r, 0.0)
    share = q.dominant_share(total)
    for r in RESOURCES:
        q.of(r).allocated = saved[r]
    return share
