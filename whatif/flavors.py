"""Flavor assignment, ported from Kueue v0.19.2.

Upstream: kubernetes-sigs/kueue@v0.19.2 ``pkg/scheduler/flavorassigner/flavorassigner.go``:
``assignFlavors`` (pod sets in order, each resource group once per pod set, usage of earlier pod
sets counted), ``findFlavorForPodSets`` (flavors in the group's order; the representative mode of
a flavor is the worst over its resources), ``fitsResourceQuota`` (NoFit above the potential
available quota; Fit within what is available; otherwise ask the preemption oracle when the
nominal quota covers it, a higher cohort may reclaim, or borrowWithinCohort allows preempting while
borrowing), ``shouldTryNextFlavor`` and ``isPreferred`` (flavorFungibility whenCanBorrow /
whenCanPreempt / preference; modes noFit < noPreemptionCandidates < preempt < reclaim < fit and a
lower borrowing level is better).

Flavor-scan resumption (``LastTriedFlavorIdx``, ``AssignmentClusterQueueState.
NextFlavorToTryForPodSetResource``): each pod set's scan of a resource group starts after the
flavor its previous attempt stopped at; the index recorded is the last flavor examined, or -1
when that was the group's last flavor (start over).  When the recorded state is dropped is the
scheduler's business (``whatif.scheduler``).

Flavor eligibility (``checkFlavorForPodSets``): a flavor whose Topology-Aware Scheduling setting
does not match the pod set (``tas_flavorassigner.go`` ``checkPodSetAndFlavorMatchForTAS``: a pod
set requesting no topology on a TAS flavor of a queue that is not TAS-only, "Flavor %q supports only
TopologyAwareScheduling"; a topology request on a plain flavor or a level the Topology lacks), whose
blocking taints the pod set's (and the flavor's own) tolerations do not tolerate, or whose
``nodeLabels`` the pod set's nodeSelector / required affinity rule out, is skipped before its quota
is looked at -- but it still counts as examined for ``TriedFlavorIdx``.  The decisions are the
pack's own :func:`gpu_batch_policy.facts.tas.flavor_match.tas_mismatch` and
:func:`gpu_batch_policy.facts.fit.flavor_match.flavor_rejects` (the ``kueue-flavor-eligible``
rule's), not copies.  A TAS flavor that matches is one where Kueue then places the pod set by
topology over the nodes that exist (``TASFlavorSnapshot.FindTopologyAssignmentsForFlavor``), which
the simulator does not model: meeting one stops the simulation with :class:`NotModelledError`.

Scan progress of a pod set that gets no flavor (``assignFlavors``): when ``findFlavorForPodSets``
finds no flavor for one of a pod set's resources, the pod set's flavors are dropped
(``groupFlavors = nil``), ``Assignment.append`` records an empty ``LastTriedFlavorIdx`` entry for
it -- losing the progress of its resource groups that did find a flavor -- and ``assignFlavors``
returns, so the pod sets after it record nothing.  Earlier pod sets keep theirs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Protocol

from whatif.cluster import Cluster, ClusterQueue, Group
from whatif.errors import NotModelledError
from whatif.pack import flavor_rejects, tas_mismatch
from whatif.preemption import NO_CANDIDATES, PREEMPT, RECLAIM
from whatif.tree import (
    FlavorResource,
    cq_available,
    flavor_resource,
    height_of_lowest_subtree_that_fits,
    potential_available,
)
from whatif.workload import PodSet, Workload

NO_FIT, NO_CANDIDATES_MODE, PREEMPT_MODE, RECLAIM_MODE, FIT = range(5)
FIT_MODE_NAME = {
    NO_FIT: "NoFit",
    NO_CANDIDATES_MODE: "Preempt",
    PREEMPT_MODE: "Preempt",
    RECLAIM_MODE: "Preempt",
    FIT: "Fit",
}
_FROM_ORACLE = {NO_CANDIDATES: NO_CANDIDATES_MODE, PREEMPT: PREEMPT_MODE, RECLAIM: RECLAIM_MODE}
WORST = (NO_FIT, 1 << 30)
BEST = (FIT, 0)

GranularMode = tuple[int, int]  # (preemption mode, borrowing level)


# Made on every nomination: ``__init__`` written out (``init=False``) because mypyc compiles an
# explicit one but leaves the one ``dataclasses`` generates interpreted (issue 44 item 3, round 8,
# whatif/README.md).  A choice is never changed after construction.
@dataclass(init=False)
class FlavorChoice:
    flavor: str
    mode: str  # Fit | Preempt
    borrow: int

    def __init__(self, flavor: str, mode: str, borrow: int) -> None:
        self.flavor = flavor
        self.mode = mode
        self.borrow = borrow


@dataclass(init=False)
class Assignment:
    """Per pod set: resource -> flavor; the representative mode and total usage."""

    pod_sets: dict[str, dict[str, FlavorChoice]]
    usage: dict[FlavorResource, int]
    mode: str
    borrowing: int
    reasons: list[str]
    # ``LastState.LastTriedFlavorIdx``: (pod set index, resource) -> last flavor index examined
    tried: dict[tuple[int, str], int]

    def __init__(self) -> None:  # written out: see ``FlavorChoice``
        self.pod_sets = {}
        self.usage = {}
        self.mode = "Fit"
        self.borrowing = 0
        self.reasons = []
        self.tried = {}

    def pending_flavors(self) -> bool:
        """``PendingFlavors``: some pod set's scan stopped before its group's last flavor."""
        return any(idx != -1 for idx in self.tried.values())

    def flavors(self) -> dict[str, dict[str, str]]:
        return {ps: {r: c.flavor for r, c in sorted(res.items())} for ps, res in self.pod_sets.items()}

    def needs_preemption(self) -> set[FlavorResource]:
        """``flavorResourcesNeedPreemption`` (preemption.go)."""
        return {
            flavor_resource(c.flavor, r)
            for res in self.pod_sets.values()
            for r, c in res.items()
            if c.mode == "Preempt"
        }


def is_preferred(a: GranularMode, b: GranularMode, cq: ClusterQueue) -> bool:
    if a[0] == NO_FIT:
        return False
    if b[0] == NO_FIT:
        return True
    a_none, b_none = a[0] == NO_CANDIDATES_MODE, b[0] == NO_CANDIDATES_MODE
    if a_none != b_none:
        return not a_none
    if cq.preference == "PreemptionOverBorrowing":
        if a[1] != b[1]:
            return a[1] < b[1]
        return a[0] > b[0]
    if a[0] != b[0]:
        return a[0] > b[0]
    return a[1] < b[1]


def should_try_next_flavor(mode: GranularMode, cq: ClusterQueue) -> bool:
    if mode[0] in (NO_FIT, NO_CANDIDATES_MODE):
        return True
    if mode[0] in (PREEMPT_MODE, RECLAIM_MODE) and cq.when_can_preempt == "TryNextFlavor":
        return True
    return mode[1] != 0 and cq.when_can_borrow == "TryNextFlavor"


class Oracle(Protocol):
    """``preemptionOracle``: can preemption make ``quantity`` of ``fr`` fit, and borrowing after it."""

    def simulate(
        self, preemptor: Workload, cq: ClusterQueue, fr: FlavorResource, quantity: int
    ) -> tuple[str, int]: ...


def _failed(result: Assignment, ps_idx: int, chosen: dict[str, FlavorChoice]) -> Assignment:
    """Pod set ``ps_idx`` got no flavor for a resource (``assignFlavors``: ``groupFlavors = nil``,
    then ``return``): it records no scan progress, not even for its groups that found a flavor, and
    the pod sets after it record none (they are never reached)."""
    for res in chosen:
        del result.tried[(ps_idx, res)]
    result.mode = "NoFit"
    return result


class FlavorAssigner:
    def __init__(self, cluster: Cluster, oracle: Oracle) -> None:
        self.cluster = cluster
        self.oracle = oracle
        self._rejects: dict[tuple[str, str], str | None] = {}  # (pod spec, flavor) -> Kueue's reason
        # (flavor, ClusterQueue, overlaps) -> ``tas_mismatch`` for a pod set without annotations:
        # its other inputs (the flavor's topology, the queue's TAS-only, the Topology's levels) are
        # the cluster's, fixed for the run.  Every nomination asks; the policy pack's function is
        # interpreted Python even when this module is compiled (issue 44 item 3, round 8).
        self._tas: dict[tuple[object, ...], str | None] = {}

    def rejects(self, ps: PodSet, flavor: str, cq: ClusterQueue, group: Group) -> str | None:
        """``checkFlavorForPodSets``: why ``flavor`` cannot take ``ps``; a TAS flavor it may take
        raises :class:`NotModelledError` (topology placement is not simulated).  With the
        ``TopologyAwareScheduling`` gate off there is no TAS match and a ``topologyName`` is
        ignored, as Kueue's flavor assigner does (``features.Enabled`` around
        ``checkPodSetAndFlavorMatchForTAS``)."""
        view = self.cluster.resource_flavors.get(flavor)
        if view is None:
            return None
        topology = view.topology_name
        if self.cluster.tas_enabled:
            # (not ``isdisjoint``, a method call from compiled code; the key made one object)
            covered = group.covered
            overlaps = any(r in covered for r in ps.requests)
            tas_key: tuple[object, ...] = (flavor, cq.name, overlaps)
            if ps.annotations or tas_key not in self._tas:
                tas = tas_mismatch(
                    flavor,
                    topology,
                    ps.annotations or {},
                    queue_tas_only=cq.tas_only is True,
                    overlaps=overlaps,
                    levels=self.cluster.topology_levels.get(topology) if isinstance(topology, str) else None,
                )
                if not ps.annotations:
                    self._tas[tas_key] = tas
            else:
                tas = self._tas[tas_key]
            if tas is not None:
                return tas
            if topology is not None:
                raise NotModelledError(
                    f"pod set {ps.name} may take flavor {flavor} of ClusterQueue {cq.name}, which places it by "
                    f"Topology-Aware Scheduling (Topology {topology}): topology placement is not modelled"
                )
        if ps.spec is None and not view.node_taints:
            return None
        key = (json.dumps(ps.spec, sort_keys=True), flavor)
        if key not in self._rejects:
            self._rejects[key] = flavor_rejects(ps.spec, view)
        return self._rejects[key]

    def _fits_quota(
        self,
        wl: Workload,
        cq: ClusterQueue,
        fr: FlavorResource,
        *,
        assumed: int,
        request: int,
        reasons: list[str],
    ) -> tuple[int, int]:
        node = cq.node
        val = assumed + request
        if val > potential_available(node, fr):
            reasons.append(f"insufficient quota for {fr[1]} in flavor {fr[0]}: request > maximum capacity")
            return NO_FIT, 0
        borrow, may_reclaim = height_of_lowest_subtree_that_fits(node, fr, val)
        if val <= cq_available(node, fr):
            return FIT, borrow
        reasons.append(f"insufficient unused quota for {fr[1]} in flavor {fr[0]}")
        quota = node.quotas.get(fr)
        nominal = quota.nominal if quota else 0
        if nominal >= val or may_reclaim or self._can_preempt_while_borrowing(cq):
            possibility, borrow_after = self.oracle.simulate(wl, cq, fr, val)
            return _FROM_ORACLE[possibility], borrow_after
        return NO_FIT, borrow

    def _can_preempt_while_borrowing(self, cq: ClusterQueue) -> bool:
        """``canPreemptWhileBorrowing``: borrowWithinCohort, or reclaim under fair sharing."""
        fair = self.cluster.fair_sharing is not None and cq.preemption.reclaim_within_cohort != "Never"
        return cq.preemption.borrow_within_cohort != "Never" or fair

    def _find_flavor(
        self,
        wl: Workload,
        cq: ClusterQueue,
        group: Group,
        ps: PodSet,
        *,
        requests: dict[str, int],
        usage: dict[FlavorResource, int],
        reasons: list[str],
        start: int = 0,
    ) -> tuple[dict[str, FlavorChoice] | None, int, bool]:
        """The chosen flavor's resources, the ``TriedFlavorIdx`` to record (-1: start over), and
        whether the group's status is Fit: the chosen flavor's representative mode is ``fit``
        (``findFlavorForPodSets`` then returns a nil status).  Under ``preference:
        PreemptionOverBorrowing`` that mode is the worst by borrowing level first
        (``isPreferred``), so a flavor where one resource needs preemption and another fits by
        borrowing deeper is ``fit``: the pod set is Fit although a resource is assigned in
        Preempt mode (``PodSetAssignment.RepresentativeMode``: a Fit status wins).
        ``requests`` is in resource-name order (``PodSet.totals``)."""
        covered = group.covered
        wanted = [(r, v) for r, v in requests.items() if r in covered]
        flavors = group.flavors
        known = self.cluster.flavors
        best: dict[str, FlavorChoice] | None = None
        best_mode = WORST
        attempted = -1
        for idx in range(start, len(flavors)):
            attempted = idx
            fname = flavors[idx]
            if fname not in known:
                reasons.append(f"flavor {fname} not found")
                continue
            rejected = self.rejects(ps, fname, cq, group)
            if rejected is not None:
                reasons.append(rejected)
                continue
            choices: dict[str, FlavorChoice] = {}
            rep = BEST
            for res, request in wanted:
                fr = flavor_resource(fname, res)
                mode, borrow = self._fits_quota(
                    wl, cq, fr, assumed=usage.get(fr, 0), request=request, reasons=reasons
                )
                if is_preferred(rep, (mode, borrow), cq):
                    rep = (mode, borrow)
                if rep[0] == NO_FIT:
                    continue
                choices[res] = FlavorChoice(fname, FIT_MODE_NAME[mode], borrow)
            if not should_try_next_flavor(rep, cq):
                best, best_mode = choices, rep
                break
            if is_preferred(rep, best_mode, cq):
                best, best_mode = choices, rep
        return best, -1 if attempted == len(flavors) - 1 else attempted, best_mode[0] == FIT

    def assign(
        self, wl: Workload, cq: ClusterQueue, last: dict[tuple[int, str], int] | None = None
    ) -> Assignment:
        """``Assign``; ``last`` is the workload's ``LastTriedFlavorIdx`` when still valid."""
        result = Assignment()
        counts_pods = cq.group_of("pods") is not None
        for ps_idx, ps in enumerate(wl.pod_sets):
            requests = ps.totals  # in resource-name order; read only
            if counts_pods:
                requests = dict(sorted({**requests, "pods": ps.count * 1000}.items()))
            chosen: dict[str, FlavorChoice] = {}
            status_fit = True  # every group's ``findFlavorForPodSets`` returned a Fit status
            for res in requests:
                group = cq.group_of(res)
                if group is None:
                    if requests[res] == 0:
                        continue
                    result.reasons.append(f"resource {res} unavailable in ClusterQueue")
                    return _failed(result, ps_idx, chosen)
                if res in chosen:
                    continue
                start = last.get((ps_idx, res), -1) + 1 if last else 0
                found, tried, fit = self._find_flavor(
                    wl,
                    cq,
                    group,
                    ps,
                    requests=requests,
                    usage=result.usage,
                    reasons=result.reasons,
                    start=start,
                )
                if not found:
                    return _failed(result, ps_idx, chosen)
                chosen.update(found)
                status_fit = status_fit and fit
                for r in found:
                    result.tried[(ps_idx, r)] = tried
            result.pod_sets[ps.name] = chosen
            for res, choice in chosen.items():
                fr = flavor_resource(choice.flavor, res)
                result.usage[fr] = result.usage.get(fr, 0) + requests[res]
                result.borrowing = max(result.borrowing, choice.borrow)
            # ``PodSetAssignment.RepresentativeMode``: Fit with a Fit status, else the worst
            # flavor's mode; the assignment's is the worst pod set's (``Assignment.RepresentativeMode``)
            if not status_fit and any(c.mode == "Preempt" for c in chosen.values()):
                result.mode = "Preempt"
        return result
