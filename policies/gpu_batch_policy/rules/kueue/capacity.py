"""Capacity and gang rules for Kueue: quotas and gangs measured against the node pools.

Kueue never compares quotas with the cluster (its maintainers leave it to the admin,
kubernetes-sigs/kueue#2665), so the classic failures only show at run time: a gang larger than
anything its ClusterQueue can ever hold waits forever ("borrowing limit ... exceeded",
kueue#1344); a ProvisioningRequest for more than one pool can grow fails with "Max nodepool size
reached" (kueue#5129) because GKE queued provisioning scales ONE pool per request (kueue.md §7);
quota above the real GPUs admits pods that sit Pending and disables preemption (kueue#4782,
#1651); a pod asking for more GPUs than any node has never schedules; a flavor selecting a pool
that does not exist strands everything admitted to it (anchors.md §4 failure modes 1, 6, 7).

Counting follows :mod:`workload_kinds.ray` (Kueue 0.19.2's PodSets: head, workers ``replicas × numOfHosts``, the submitter), capacity
:mod:`kueue_capacity` (nominal + borrowable) and :mod:`pools` (three-valued pool selection).
A program that declares no node pools at all (the seed manifests alone, a cluster managed
elsewhere) gets "cannot check", never a violation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TypeVar

from pulumi_policy import EnforcementLevel, Policy, PolicyConfigSchema

from ...facts.demand import CannotTellError, PodSet, pod_request
from ...facts.kueue_capacity import InvalidQuotaError, can_get, gpu_flavors, provisioning_checks, value_of
from ...facts.model import ClusterQueue, Cohort, NodePool, ResourceFlavor, StackModel
from ...facts.model.base import ObjectView
from ...facts.model.gke import NODEPOOL_LABEL
from ...facts.model.kueue import MULTIKUEUE_CONTROLLER, ResourceQuota
from ...facts.model.workloads import GPU_RESOURCE, PodTemplate
from ...facts.pools import (
    PoolCapacity,
    Selection,
    auto_provisioning,
    intersect,
    known_pool_names,
    pins_pool,
    pool_capacity,
    select,
)
from ...facts.workload_kinds.queue_names import kueue_queue_name
from ...facts.workload_kinds.ray import kueue_gangs as ray_kueue_gangs
from ...primitives.tokens import KUEUE_GROUP
from ...primitives.values import Unknown, dig, fmt_num, str_map
from ..kit.builders import stack_policy
from ..kit.report import Reporter, config_value

T = TypeVar("T")
NO_POOLS = "no GKE node pools are declared, so pool capacity is unknown"
AUTO = "node auto-provisioning may create a pool the program does not declare"


# --- shared helpers -----------------------------------------------------------------------------
def workload_queue(model: StackModel, workload: ObjectView, reporter: Reporter) -> ClusterQueue | None:
    """The ClusterQueue behind the workload's ``kueue.x-k8s.io/queue-name`` label, if it resolves.

    A label that does not resolve is the wiring rules' finding; here it just means "no queue".
    The label is read where Kueue reads it for the kind (``workload_kinds.queue_names``).
    """
    label = kueue_queue_name(workload.obj)
    if label is None:
        return None
    if isinstance(label, Unknown) or not workload.obj.identity_known:
        reporter.cannot_check(workload, "its LocalQueue (queue label or namespace unknown until apply)")
        return None
    found, lq = model.find_local_queue(label, workload.obj.namespace or "default", near=workload)
    if found.status == "unknown":
        reporter.cannot_check(workload, f"LocalQueue '{label}' (not known until apply)")
    if lq is None:
        return None
    if isinstance(lq.cluster_queue, Unknown):
        reporter.cannot_check(workload, f"{lq.describe()} spec.clusterQueue")
        return None
    found, cq = model.find_cluster_queue(lq.cluster_queue, near=lq)
    if found.status == "unknown":
        reporter.cannot_check(workload, f"ClusterQueue '{lq.cluster_queue}' (not known until apply)")
    return cq


def _flavor(model: StackModel, name: str, near: ClusterQueue) -> ResourceFlavor | None:
    """The flavor ``near`` (a ClusterQueue) names, on its own cluster."""
    return model.find_resource_flavor(name, near=near)[1]


def flavor_selection(model: StackModel, flavor: ResourceFlavor) -> Selection:
    """Pools of the flavor's own cluster its nodeLabels reach (``node_pools_near``: another
    cluster's pools of the same GKE name are not its); without node labels, every such pool."""
    pools = model.node_pools_near(flavor)
    if not flavor.node_labels_known:
        return Selection((), tuple(pools))
    return select(pools, flavor.node_labels)


def pod_selection(model: StackModel, template: PodTemplate) -> Selection:
    """Pools a pod's ``spec.nodeSelector`` allows (affinity is not evaluated: it can only narrow)."""
    raw = dig(template.raw, "spec", "nodeSelector")
    pools = model.node_pools()
    if isinstance(raw, Unknown):
        return Selection((), tuple(pools))
    return select(pools, str_map(raw))


def _union(selections: Sequence[Selection]) -> Selection:
    matched: dict[int, NodePool] = {}
    possible: dict[int, NodePool] = {}
    for s in selections:
        matched.update((id(p), p) for p in s.matched)
        possible.update((id(p), p) for p in s.possible)
    return Selection(tuple(matched.values()), tuple(p for k, p in possible.items() if k not in matched))


def _pool_list(pools: Sequence[NodePool]) -> str:
    return ", ".join(f"'{p.name}'" for p in pools) or "none"


def _describe_caps(caps: Sequence[PoolCapacity]) -> str:
    gpu_caps = [c for c in caps if c.gpus_per_node] or list(caps)
    return ", ".join(f"'{c.pool.name}' ({c.gpus_per_node} per node)" for c in gpu_caps)


def amount(resource: str, value: Decimal) -> str:
    """A resource amount as people write it: memory in Gi/Mi, everything else as a number."""
    if resource in ("memory", "ephemeral-storage"):
        for unit, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20)):
            if value >= size:
                return f"{fmt_num((value / size).quantize(Decimal('0.01')))}{unit} {resource}"
        return f"{fmt_num(value)} bytes {resource}"
    return f"{fmt_num(value)} {resource}"


# --- gpu-pod-fits-a-node ------------------------------------------------------------------------
@dataclass(frozen=True)
class _Reach:
    """Pools a workload's Kueue flavors reach, how to say so, and whether they pin named pools."""

    selection: Selection
    where: str
    pinned: bool


def _queue_pools(model: StackModel, workload: ObjectView, reporter: Reporter) -> _Reach:
    """Pools the workload's Kueue flavors can use (all pools when it has no resolvable flavor)."""
    all_pools = _Reach(Selection(tuple(model.node_pools_near(workload))), "the declared pools", False)
    cq = workload_queue(model, workload, reporter)
    if cq is None:
        return all_pools
    flavors = [f for f in (_flavor(model, n, cq) for n in gpu_flavors(cq, GPU_RESOURCE)) if f is not None]
    if not flavors:
        return all_pools
    names = ", ".join(f"'{f.name}'" for f in flavors)
    return _Reach(
        _union([flavor_selection(model, f) for f in flavors]),
        f"the pools of {cq.describe()} flavor(s) {names}",
        all(pins_pool(f.node_labels) for f in flavors),
    )


def check_pod_fits_node(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    """Each pod's ``nvidia.com/gpu`` request fits the GPUs of one node of a pool it may use.

    A pod cannot span nodes, so a 4-GPU pod on 1-GPU nodes never schedules, whatever the quota.
    The pools it may use are those its Kueue flavors select (or all pools), narrowed by its own
    ``nodeSelector``.
    """
    for workload in model.ray_workloads():
        groups = [g for g in (workload.groups() if workload.workers_known else []) if g.template.raw != {}]
        pods_fit_node(model, workload, groups, reporter)


def pods_fit_node(model: StackModel, workload: ObjectView, groups: Sequence[Any], reporter: Reporter) -> None:
    """Judge one workload's pod groups (anything with ``.name`` and ``.template``: Ray groups,
    ``demand.PodSet``) against the GPUs per node of the pools it may reach."""
    needs: list[tuple[Any, Decimal]] = []
    for group in groups:
        try:
            gpus = pod_request(group.template, GPU_RESOURCE)
        except CannotTellError as why:
            reporter.cannot_check(workload, why.what)
            continue
        if gpus > 0:
            needs.append((group, gpus))
    if not needs:
        return
    if not model.node_pools():
        reporter.cannot_check(workload, f"per-pod GPU fit: {NO_POOLS}")
        return
    reach = _queue_pools(model, workload, reporter)
    auto = auto_provisioning(model)
    for group, gpus in needs:
        selection = intersect(reach.selection, pod_selection(model, group.template))
        if not selection.possible:
            continue  # the flavor rules report selectors that reach no pool
        caps = [pool_capacity(model, p) for p in selection.possible]
        if any(c.gpus_per_node is None for c in caps):
            reporter.cannot_check(workload, f"GPUs per node of the pools {group.name} pods may use")
            continue
        if any((c.gpus_per_node or 0) >= gpus for c in caps):
            continue
        biggest = max((c.gpus_per_node or 0 for c in caps), default=0)
        pinned = reach.pinned or pins_pool(str_map(dig(group.template.raw, "spec", "nodeSelector")))
        if auto is not False and not pinned:
            reporter.cannot_check(workload, f"{group.name} pods need {fmt_num(gpus)} GPUs per node: {AUTO}")
            continue
        reporter.violation(
            workload,
            f"{group.name} pods request {fmt_num(gpus)} GPUs each, but the nodes of {reach.where} (after "
            f"the pod's nodeSelector) have at most {biggest}: {_describe_caps(caps)}; a pod cannot span "
            "nodes, so it never schedules",
            f"request at most {biggest} GPUs per pod (use more workers instead), or add/select a pool "
            f"whose machine type has at least {fmt_num(gpus)} GPUs per node",
        )


# --- kueue-gang-fits-queue ----------------------------------------------------------------------
@dataclass(frozen=True)
class _Need:
    pod_set: PodSet
    per_resource: dict[str, Decimal]


PODS = "pods"


def _per_pod(pod_set: PodSet, resource: str) -> Decimal:
    """One pod's quota use of ``resource``.  ``pods``: each pod counts one when its ClusterQueue
    covers ``pods`` (kubernetes-sigs/kueue v0.19.2 ``pkg/scheduler/flavorassigner/flavorassigner.go``
    ``assignFlavors``: ``if a.cq.RGByResource(corev1.ResourcePods) != nil`` the pod set's requests get
    ``pods = Count``), whatever its containers ask."""
    return Decimal(1) if resource == PODS else pod_request(pod_set.template, resource)


def _needs(pod_sets: Sequence[PodSet], resources: Sequence[str]) -> list[_Need]:
    return [_Need(p, {r: p.count * _per_pod(p, r) for r in resources}) for p in pod_sets if p.count > 0]


def gang_vs_quota(
    model: StackModel, workload: ObjectView, cq: ClusterQueue, pod_sets: Sequence[PodSet], reporter: Reporter
) -> None:
    for group in cq.resource_groups:
        resources = [r for r in group.covered_resources if isinstance(r, str)]
        needs = _needs(pod_sets, resources)
        requested = [r for r in resources if sum((n.per_resource[r] for n in needs), Decimal(0)) > 0]
        flavors = [f.name for f in group.flavors if isinstance(f.name, str) and f.name]
        if not requested or not flavors:
            continue
        cap = {f: {r: can_get(model, cq, f, r) for r in requested} for f in flavors}
        for need in needs:
            if not any(need.per_resource[r] > 0 for r in requested):
                continue
            if any(all(need.per_resource[r] <= cap[f][r] for r in requested) for f in flavors):
                continue
            short = [r for r in requested if all(need.per_resource[r] > cap[f][r] for f in flavors)]
            shown = short or [r for r in requested if need.per_resource[r]]
            wanted = ", ".join(amount(r, need.per_resource[r]) for r in shown)
            offered = "; ".join(f"'{f}': " + ", ".join(amount(r, cap[f][r]) for r in shown) for f in flavors)
            reporter.violation(
                workload,
                f"its {need.pod_set.name} pods ({need.pod_set.count}) need {wanted} in one flavor, but "
                f"{cq.describe()} can ever get at most {offered} (nominal + borrowable), so Kueue never "
                "admits it",
                f"raise nominalQuota (or borrowingLimit within a cohort) of {cq.name} to cover the gang, or "
                "shrink the gang",
            )
            return
        for r in requested:
            total_need = sum((n.per_resource[r] for n in needs), Decimal(0))
            total_cap = sum((cap[f][r] for f in flavors), Decimal(0))
            if total_need > total_cap:
                reporter.violation(
                    workload,
                    f"needs {amount(r, total_need)} as one gang, but {cq.describe()} can ever get at most "
                    f"{amount(r, total_cap)} across flavor(s) {', '.join(flavors)} (nominal + borrowable), "
                    "so Kueue never admits it",
                    f"raise the {r} nominalQuota (or borrowingLimit within a cohort) of {cq.name} to at "
                    f"least {amount(r, total_need)}, or shrink the gang",
                )
                return


def nodes_needed(gpu_sets: Sequence[tuple[PodSet, Decimal]], per_node: int) -> int | None:
    """Fewest nodes of ``per_node`` GPUs that hold the pods (None: a pod does not fit a node).

    A lower bound, so "more than the pool's maximum" is certain: the larger of the GPU total over
    per-node GPUs and each pod set's pods over the pods of that size one node holds.
    """
    if per_node <= 0:
        return None
    total = Decimal(0)
    nodes = 0
    for pod_set, gpus in gpu_sets:
        if gpus > per_node:
            return None
        per = int(Decimal(per_node) // gpus)
        nodes = max(nodes, -(-pod_set.count // per))
        total += pod_set.count * gpus
    return max(nodes, math.ceil(total / per_node))


def _holds(cap: PoolCapacity, gpu_sets: Sequence[tuple[PodSet, Decimal]]) -> bool | None:
    """Whether the pool can hold the gang; None when a pod does not even fit one of its nodes
    (gpu-pod-fits-a-node reports that)."""
    needed = nodes_needed(gpu_sets, cap.gpus_per_node or 0)
    return None if needed is None else needed <= (cap.max_nodes or 0)


def gang_vs_queued_pool(
    model: StackModel, workload: ObjectView, cq: ClusterQueue, pod_sets: Sequence[PodSet], reporter: Reporter
) -> None:
    gpu_sets = [(p, pod_request(p.template, GPU_RESOURCE)) for p in pod_sets if p.count > 0]
    gpu_sets = [(p, g) for p, g in gpu_sets if g > 0]
    if not gpu_sets:
        return
    queued = [
        f for f in gpu_flavors(cq, GPU_RESOURCE) if any(c.queued for c in provisioning_checks(model, cq, f))
    ]
    if not queued:
        return
    if not model.node_pools():
        reporter.cannot_check(workload, f"queued-provisioning pool size: {NO_POOLS}")
        return
    flavors = [f for f in (_flavor(model, n, cq) for n in queued) if f is not None]
    if auto_provisioning(model) is not False and not (
        flavors and all(pins_pool(f.node_labels) for f in flavors)
    ):
        reporter.cannot_check(workload, f"queued-provisioning pool size: {AUTO}")
        return
    selections = [flavor_selection(model, f) for f in flavors]
    reach = _union(selections) if selections else Selection(tuple(model.node_pools_near(cq)))
    for pod_set, _ in gpu_sets:
        reach = intersect(reach, pod_selection(model, pod_set.template))
    if not reach.possible:
        return  # selects no pool at all: the flavor rules report it (or node auto-provisioning)
    sure = [p for p in reach.matched if p.queued_provisioning is True]
    maybe = [
        p
        for p in reach.possible
        if p.queued_provisioning is True or isinstance(p.queued_provisioning, Unknown)
    ]
    if not maybe:
        _, complete = known_pool_names(model)
        if complete:
            reporter.violation(
                workload,
                f"{cq.describe()} provisions flavor(s) {', '.join(queued)} through queued provisioning "
                "(queued-provisioning.gke.io), but the pools they select "
                f"({_pool_list(reach.possible)}) have no queued provisioning, so the ProvisioningRequest "
                "can never be satisfied",
                "enable queuedProvisioning on the GPU pool the flavor selects, or point the flavor's "
                "nodeLabels (cloud.google.com/gke-nodepool) at a queued-provisioning pool",
            )
        else:
            reporter.cannot_check(workload, "which queued-provisioning pool serves it (pool names unknown)")
        return
    caps = [pool_capacity(model, p) for p in maybe]
    if any(c.gpus_per_node is None or c.max_nodes is None for c in caps):
        reporter.cannot_check(workload, f"size of queued-provisioning pool(s) {_pool_list(maybe)}")
        return
    if len(sure) != len(maybe):
        reporter.cannot_check(
            workload, "which queued-provisioning pool serves it (labels unknown until apply)"
        )
    verdicts = [_holds(c, gpu_sets) for c in caps]
    if len(sure) != len(maybe) or any(v is not False for v in verdicts):
        return
    total = sum((p.count * g for p, g in gpu_sets), Decimal(0))
    sizes = ", ".join(f"'{c.pool.name}': {c.max_nodes} nodes x {c.gpus_per_node} GPUs" for c in caps)
    reporter.violation(
        workload,
        f"its gang needs {fmt_num(total)} GPUs from one ProvisioningRequest, and queued provisioning "
        f"scales ONE node pool per request, but no single pool can hold it ({sizes}); the request "
        "fails with 'max nodepool size reached'",
        "raise the pool's max node count (totalMaxNodeCount) or its GPUs per node so one pool holds "
        "the whole gang, or shrink the gang",
    )


def check_gang_fits_queue(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    """A Kueue gang fits what its ClusterQueue can ever get, and one queued-provisioning pool."""
    for workload in model.ray_workloads():
        cq = workload_queue(model, workload, reporter)
        if cq is None:
            continue
        try:
            gangs = ray_kueue_gangs(workload)
            pod_sets = list(gangs[0].pod_sets) if gangs else []
            gang_vs_quota(model, workload, cq, pod_sets, reporter)
            gang_vs_queued_pool(model, workload, cq, pod_sets, reporter)
        except CannotTellError as why:
            reporter.cannot_check(workload, why.what)
        except InvalidQuotaError:
            continue  # kueue-quota-quantities reports invalid quantities


# --- kueue-quota-within-capacity ----------------------------------------------------------------
def _dispatches(model: StackModel, cq: ClusterQueue) -> bool:
    """The ClusterQueue carries a MultiKueue check: what it admits runs on a worker, whose own
    queues and pools back it (Kueue v0.19.2 ``site/content/en/docs/concepts/multikueue.md``),
    not on this cluster's nodes."""
    for ref in cq.admission_checks:
        found = model.lookup(KUEUE_GROUP, "AdmissionCheck", ref.name, near=cq)
        if found.ok and model.view(found.found[0]).controller_name == MULTIKUEUE_CONTROLLER:
            return True
    return False


def _near(entries: Mapping[tuple[str, Any], list[T]], here: str, name: Any) -> list[T]:
    """The entries for flavor ``name`` on cluster ``here``; from the default provider's cluster
    (``""``), every cluster's, and the default provider's are seen from every cluster (as
    ``StackModel.lookup`` resolves names)."""
    if not here:
        return [e for (_, n), found in entries.items() if n == name for e in found]
    return [*entries.get((here, name), []), *entries.get(("", name), [])]


def check_quota_within_capacity(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    """Σ nominal GPU quota per flavor ≤ the GPUs its pools can ever have, where no provisioning
    admission check stands between admission and capacity.

    Advisory by default, mandatory where a stack's config raises it (``config.prod.json``): quota
    the nodes cannot back makes Kueue admit gangs whose pods then sit Pending, and since Kueue sees free quota it never preempts lower priorities for them
    (kueue#4782, #1651, #1530) -- priorities and gang admission both stop meaning anything.
    ``maxOvercommit`` (default 1.0) allows deliberate overcommit; a ProvisioningRequest check
    (queued provisioning, check-capacity) exempts a flavor because it gates admission on capacity.
    """
    ratio = Decimal(str(config_value(config, "maxOvercommit", 1.0)))
    # Every GPU quota entry by cluster and flavor name, in stack order: one pass, not one per
    # flavor.  Per cluster (``cluster_key``): each cluster's Kueue counts only its own queues.
    queue_entries: dict[tuple[str, str | Unknown], list[tuple[ClusterQueue, ResourceQuota]]] = {}
    for cq in model.cluster_queues():
        for f, entry in cq.quotas(GPU_RESOURCE):
            queue_entries.setdefault((model.cluster_key(cq.obj), f.name), []).append((cq, entry))
    cohort_entries: dict[tuple[str, str | Unknown], list[tuple[Cohort, ResourceQuota]]] = {}
    for cohort in model.cohorts():
        for group in cohort.resource_groups:
            for f in group.flavors:
                for r in f.resources:
                    if r.name == GPU_RESOURCE:
                        cohort_entries.setdefault((model.cluster_key(cohort.obj), f.name), []).append(
                            (cohort, r)
                        )
    for flavor in model.resource_flavors():
        contributions: list[tuple[str, Decimal]] = []
        here = model.cluster_key(flavor.obj)
        try:
            for cq, entry in _near(queue_entries, here, flavor.name):
                if provisioning_checks(model, cq, flavor.name) or _dispatches(model, cq):
                    continue
                contributions.append(
                    (cq.name, value_of(entry.nominal_quota, f"{cq.describe()} {entry.path}"))
                )
            for cohort, r in _near(cohort_entries, here, flavor.name):
                contributions.append((f"cohort {cohort.name}", value_of(r.nominal_quota, r.path)))
        except CannotTellError as why:
            reporter.cannot_check(flavor, why.what)
            continue
        except InvalidQuotaError:
            continue
        quota = sum((q for _, q in contributions), Decimal(0))
        if quota <= 0:
            continue
        if not model.node_pools():
            reporter.cannot_check(flavor, f"GPU quota vs capacity: {NO_POOLS}")
            continue
        if auto_provisioning(model) is not False and not pins_pool(flavor.node_labels):
            reporter.cannot_check(flavor, f"GPU quota vs capacity: {AUTO}")
            continue
        selection = flavor_selection(model, flavor)
        if selection.undecided:
            reporter.cannot_check(
                flavor, f"which pools its nodeLabels select ({_pool_list(selection.undecided)})"
            )
            continue
        caps = [pool_capacity(model, p) for p in selection.matched]
        if any(c.max_gpus is None for c in caps):
            reporter.cannot_check(flavor, "; ".join(u for c in caps for u in c.unknown))
            continue
        capacity = sum((c.max_gpus or 0 for c in caps), 0)
        if quota <= ratio * capacity:
            continue
        parts = ", ".join(f"{name} {fmt_num(q)}" for name, q in contributions)
        pools = ", ".join(f"'{c.pool.name}' {c.max_nodes}x{c.gpus_per_node}" for c in caps) or "no pool"
        reporter.violation(
            flavor,
            f"carries {fmt_num(quota)} nominal {GPU_RESOURCE} quota ({parts}) with no provisioning admission "
            f"check, but the pools it selects can hold at most {capacity} GPUs ({pools}); Kueue will "
            "admit gangs whose pods stay Pending and preemption stops working",
            f"lower the nominalQuota to at most {fmt_num(ratio * capacity)}, add GPU nodes to the selected "
            "pools, or add a ProvisioningRequest admission check (queued-provisioning.gke.io) for the flavor",
        )


# --- kueue-flavor-nodepool-exists / kueue-flavor-selects-pool -----------------------------------
def _missing_nodepool(model: StackModel, flavor: ResourceFlavor) -> str | Unknown | None:
    """The gke-nodepool the flavor names if no declared pool has it; Unknown if undecidable."""
    name = flavor.node_labels.get(NODEPOOL_LABEL)
    if name is None:
        return None
    if isinstance(name, Unknown):
        return name
    names, complete = known_pool_names(model)
    if name in names:
        return None
    return name if complete else Unknown(f"names of the declared node pools ({name})")


def check_flavor_nodepool_exists(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    """A flavor's ``cloud.google.com/gke-nodepool`` names a pool the stack declares: GKE gives that
    label only to the pool's nodes, so a wrong name strands every workload admitted to the flavor."""
    if not model.node_pools() and not model.gke_clusters():
        return
    for flavor in model.resource_flavors():
        missing = _missing_nodepool(model, flavor)
        if isinstance(missing, Unknown):
            reporter.cannot_check(flavor, f"its {NODEPOOL_LABEL} label ({missing.path})")
        elif missing is not None:
            names, _ = known_pool_names(model)
            reporter.violation(
                flavor,
                f"selects {NODEPOOL_LABEL}={missing}, but the stack declares no such node pool "
                f"(pools: {', '.join(sorted(names)) or 'none'}), so pods admitted to this flavor never schedule",
                f"set nodeLabels.{NODEPOOL_LABEL} to one of the declared pools, or declare pool '{missing}'",
            )


def check_flavor_selects_pool(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    """A flavor's node labels as a whole match at least one declared pool.

    Advisory: GKE node auto-provisioning can create a pool for an accelerator or machine-type
    label on demand, and node labels can be applied outside the program, so a mismatch is not
    proof -- but it is usually a typo (``nvidia-l4`` vs ``nvidia-tesla-l4``).
    """
    if not model.node_pools():
        return
    for flavor in model.resource_flavors():
        if not flavor.node_labels or not flavor.node_labels_known:
            continue
        missing = _missing_nodepool(model, flavor)
        if missing is not None:
            continue  # kueue-flavor-nodepool-exists owns that finding
        selection = flavor_selection(model, flavor)
        if selection.possible:
            continue
        labels = ", ".join(f"{k}={v}" for k, v in flavor.node_labels.items())
        reporter.violation(
            flavor,
            f"has nodeLabels {labels}, which no declared node pool's nodes carry "
            f"(pools: {_pool_list(model.node_pools())})",
            "match the labels to a declared pool (its nodeConfig.labels, gke-accelerator type or "
            "name), or rely on node auto-provisioning knowingly",
        )


POLICIES: list[Policy] = [
    stack_policy(
        "gpu-pod-fits-a-node",
        "Each Ray pod's nvidia.com/gpu request fits the GPUs of one node of a pool its Kueue flavor "
        "(or, without one, the stack) can use.",
        check_pod_fits_node,
    ),
    stack_policy(
        "kueue-gang-fits-queue",
        "A Kueue-queued Ray gang (head + workers at replicas) fits its ClusterQueue's nominal + "
        "borrowable quota, and, under queued provisioning, one node pool's maximum.",
        check_gang_fits_queue,
    ),
    stack_policy(
        "kueue-quota-within-capacity",
        "Without a provisioning admission check, a flavor's total nominal GPU quota does not exceed "
        "what the node pools it selects can ever hold.",
        check_quota_within_capacity,
        config_schema=PolicyConfigSchema(
            properties={
                "maxOvercommit": {
                    "type": "number",
                    "minimum": 0,
                    "default": 1.0,
                    "description": "Allowed ratio of nominal GPU quota to pool GPU capacity (1.0 = none).",
                }
            }
        ),
        # A hazard (admitted gangs sit Pending and priorities stop preempting), not a stack that
        # cannot work: workloads within capacity run (issue 18 item 7); config.prod.json raises it.
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
    stack_policy(
        "kueue-flavor-nodepool-exists",
        "A ResourceFlavor's cloud.google.com/gke-nodepool label names a node pool the stack declares.",
        check_flavor_nodepool_exists,
    ),
    stack_policy(
        "kueue-flavor-selects-pool",
        "A ResourceFlavor's node labels match at least one declared node pool (advisory: node "
        "auto-provisioning may create one).",
        check_flavor_selects_pool,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
]
