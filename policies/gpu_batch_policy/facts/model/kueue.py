"""Kueue objects normalised across the served API versions (v1beta1 and v1beta2).

Kueue 0.19 serves v1beta1 and v1beta2 of every kind (kueue.md §1).  The renames that matter to the
rules: ClusterQueue ``spec.cohort`` (v1beta1) → ``spec.cohortName`` (v1beta2); the v1beta1 list
``spec.admissionChecks: [name]`` → ``spec.admissionChecksStrategy.admissionChecks[{name,
onFlavors}]`` (v1beta1 also accepts the strategy form); Cohort ``spec.parent`` (v1alpha1, ≤0.12)
→ ``spec.parentName``.  The views below read whichever form the object's apiVersion defines and
expose one shape, so rules never branch on the version — except the rule that checks the version's
fields themselves, which reads ``obj.spec``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ...primitives.values import (
    Quantity,
    Unknown,
    as_int,
    as_list,
    as_str,
    dig,
    quantity,
    str_map,
    unknowns_in,
)
from .base import KubeObject, ObjectView

PROVISIONING_REQUEST_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"
QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"


@dataclass(frozen=True)
class ResourceQuota:
    """One ``flavors[].resources[]`` entry."""

    name: str | Unknown
    nominal_quota: Quantity
    borrowing_limit: Quantity | None
    lending_limit: Quantity | None
    path: str

    @property
    def lendable(self) -> tuple[str, Quantity]:
        """What this entry lends its cohort, and the field that says so: ``lendingLimit`` when set,
        else the whole ``nominalQuota`` (Kueue v0.19.2 ``pkg/cache/scheduler/resource_node.go``
        ``localQuota``: only quota above a lendingLimit stays local; without one none does)."""
        if self.lending_limit is not None:
            return "lendingLimit", self.lending_limit
        return "nominalQuota", self.nominal_quota


@dataclass(frozen=True)
class FlavorQuotas:
    """One ``resourceGroups[].flavors[]`` entry."""

    name: str | Unknown
    resources: tuple[ResourceQuota, ...]
    path: str
    # False when the resources list (or the whole flavor entry) is unknown until apply.
    resources_known: bool = True


@dataclass(frozen=True)
class ResourceGroup:
    covered_resources: tuple[str | Unknown, ...]
    flavors: tuple[FlavorQuotas, ...]
    path: str
    # False when coveredResources / the flavors list is unknown until apply.
    covered_known: bool = True
    flavors_known: bool = True


def _opt_quantity(raw: Any) -> Quantity | None:
    return None if raw is None else quantity(raw)


def parse_resource_groups(spec: Any) -> tuple[ResourceGroup, ...]:
    """``spec.resourceGroups`` of a ClusterQueue or Cohort (same type in both, kueue.md §3).

    An unknown list leaves an empty tuple with its ``*_known`` flag False, so shape rules can say
    "cannot check yet" instead of seeing an empty list.
    """
    groups: list[ResourceGroup] = []
    raw_groups = dig(spec, "resourceGroups")
    for gi, group in enumerate(raw_groups if isinstance(raw_groups, list) else []):
        gpath = f"spec.resourceGroups[{gi}]"
        covered_raw = dig(group, "coveredResources")
        covered = tuple(
            c if isinstance(c, (str, Unknown)) else str(c)
            for c in (covered_raw if isinstance(covered_raw, list) else [])
        )
        flavors: list[FlavorQuotas] = []
        flavors_raw = dig(group, "flavors")
        for fi, flavor in enumerate(flavors_raw if isinstance(flavors_raw, list) else []):
            fpath = f"{gpath}.flavors[{fi}]"
            resources: list[ResourceQuota] = []
            res_raw = dig(flavor, "resources")
            for ri, res in enumerate(res_raw if isinstance(res_raw, list) else []):
                name = as_str(dig(res, "name"))
                resources.append(
                    ResourceQuota(
                        name=name if name is not None else "",
                        nominal_quota=quantity(dig(res, "nominalQuota")),
                        borrowing_limit=_opt_quantity(dig(res, "borrowingLimit")),
                        lending_limit=_opt_quantity(dig(res, "lendingLimit")),
                        path=f"{fpath}.resources[{ri}]",
                    )
                )
            fname = as_str(dig(flavor, "name"))
            flavors.append(
                FlavorQuotas(
                    name=fname if fname is not None else "",
                    resources=tuple(resources),
                    path=fpath,
                    resources_known=not isinstance(res_raw, Unknown),
                )
            )
        groups.append(
            ResourceGroup(
                covered,
                tuple(flavors),
                gpath,
                covered_known=not isinstance(covered_raw, Unknown),
                flavors_known=not isinstance(flavors_raw, Unknown),
            )
        )
    return tuple(groups)


@dataclass(frozen=True)
class AdmissionCheckRef:
    """A ClusterQueue's use of an AdmissionCheck; empty ``on_flavors`` = all flavors."""

    name: str | Unknown
    on_flavors: tuple[str | Unknown, ...]
    path: str


# spec.flavorFungibility when a field is omitted (kueue v0.19.2 pkg/cache/scheduler/clusterqueue.go
# defaultFlavorFungibility): stay on a flavor that fits by borrowing, try the next on preemption.
DEFAULT_WHEN_CAN_BORROW = "MayStopSearch"
DEFAULT_WHEN_CAN_PREEMPT = "TryNextFlavor"


@dataclass(frozen=True)
class ClusterQueue(ObjectView):
    cohort: str | Unknown | None
    resource_groups: tuple[ResourceGroup, ...]
    admission_checks: tuple[AdmissionCheckRef, ...]
    preemption: dict[str, Any]
    flavor_fungibility: dict[str, Any]
    # None = field omitted (no namespace may submit); {} = every namespace (kueue.md §2).
    namespace_selector: dict[str, Any] | Unknown | None
    # Every unknown marker anywhere in spec: totals over this queue are incomplete if non-empty.
    unknowns: tuple[Unknown, ...]

    def flavors(self) -> list[FlavorQuotas]:
        return [f for g in self.resource_groups for f in g.flavors]

    def flavor_names(self) -> list[str]:
        return [f.name for f in self.flavors() if isinstance(f.name, str) and f.name]

    def quotas(self, resource: str) -> list[tuple[FlavorQuotas, ResourceQuota]]:
        """Every (flavor, quota) pair for ``resource`` across all resource groups."""
        return [(f, r) for f in self.flavors() for r in f.resources if r.name == resource]

    def quota_entry(self, flavor: str, resource: str) -> ResourceQuota | None:
        """The first quota of ``resource`` under flavor ``flavor`` (what Kueue reads), in O(1).

        Rules ask this per (flavor, resource) of every resource group; scanning all groups per
        question made a ClusterQueue with 3,000 groups take minutes (issue 12)."""
        return self._quota_index.get((flavor, resource))

    @cached_property
    def _quota_index(self) -> dict[tuple[str | Unknown, str | Unknown], ResourceQuota]:
        index: dict[tuple[str | Unknown, str | Unknown], ResourceQuota] = {}
        for f in self.flavors():
            for r in f.resources:
                index.setdefault((f.name, r.name), r)
        return index


def preempts(cq: ClusterQueue) -> bool | None:
    """Whether the ClusterQueue preempts at all (any of its preemption policies is not ``Never``);
    None while a policy is unknown until apply."""
    if isinstance(dig(cq.obj.spec, "preemption"), Unknown):
        return None
    pre = cq.preemption
    borrow = pre.get("borrowWithinCohort")
    values = [
        pre.get("withinClusterQueue", "Never"),
        pre.get("reclaimWithinCohort", "Never"),
        borrow.get("policy", "Never") if isinstance(borrow, dict) else "Never",
    ]
    if any(isinstance(v, Unknown) for v in values):
        return None
    return any(v != "Never" for v in values)


def cluster_queue(obj: KubeObject) -> ClusterQueue:
    """Read the fields *the object's apiVersion defines*, as the API server would keep them.

    A v1beta2 object's ``cohort``/``admissionChecks`` (v1beta1 names) and a v1beta1 object's
    ``cohortName`` are not in that version's schema: the API server rejects or prunes them, so
    they neither join a cohort nor attach a check.  The api-version rule reports them; every
    other rule sees what Kueue would see.  Unrecognised versions accept either spelling.
    """
    spec = obj.spec
    version = obj.version
    cohort: str | Unknown | None = None
    if version != "v1beta1":
        cohort = as_str(dig(spec, "cohortName"))
    if cohort is None and version != "v1beta2":
        cohort = as_str(dig(spec, "cohort"))
    checks: list[AdmissionCheckRef] = []
    legacy = dig(spec, "admissionChecks") if version != "v1beta2" else None
    for i, name in enumerate(legacy if isinstance(legacy, list) else []):
        checks.append(
            AdmissionCheckRef(
                name if isinstance(name, (str, Unknown)) else str(name),
                (),
                f"spec.admissionChecks[{i}]",
            )
        )
    strategy = dig(spec, "admissionChecksStrategy", "admissionChecks")
    for i, entry in enumerate(strategy if isinstance(strategy, list) else []):
        name = as_str(dig(entry, "name"))
        on = as_list(dig(entry, "onFlavors"))
        checks.append(
            AdmissionCheckRef(
                name if name is not None else "",
                tuple(
                    f if isinstance(f, (str, Unknown)) else str(f)
                    for f in (on if isinstance(on, list) else [])
                ),
                f"spec.admissionChecksStrategy.admissionChecks[{i}]",
            )
        )
    selector = dig(spec, "namespaceSelector")
    preemption = dig(spec, "preemption")
    fungibility = dig(spec, "flavorFungibility")
    return ClusterQueue(
        obj=obj,
        cohort=cohort,
        resource_groups=parse_resource_groups(spec),
        admission_checks=tuple(checks),
        preemption=preemption if isinstance(preemption, dict) else {},
        flavor_fungibility=fungibility if isinstance(fungibility, dict) else {},
        namespace_selector=selector if isinstance(selector, (dict, Unknown)) else None,
        unknowns=tuple(unknowns_in(spec)),
    )


@dataclass(frozen=True)
class Cohort(ObjectView):
    parent: str | Unknown | None
    resource_groups: tuple[ResourceGroup, ...]
    unknowns: tuple[Unknown, ...]


def cohort(obj: KubeObject) -> Cohort:
    spec = obj.spec
    parent = as_str(dig(spec, "parentName"))
    if parent is None:  # v1alpha1 (≤0.12) named it spec.parent
        parent = as_str(dig(spec, "parent"))
    return Cohort(obj, parent, parse_resource_groups(spec), tuple(unknowns_in(spec)))


@dataclass(frozen=True)
class LocalQueue(ObjectView):
    cluster_queue: str | Unknown | None


def local_queue(obj: KubeObject) -> LocalQueue:
    return LocalQueue(obj, as_str(dig(obj.spec, "clusterQueue")))


@dataclass(frozen=True)
class ResourceFlavor(ObjectView):
    node_labels: dict[str, str | Unknown]
    node_labels_known: bool
    node_taints: tuple[dict[str, Any], ...]
    tolerations: tuple[dict[str, Any], ...]
    topology_name: str | Unknown | None


def resource_flavor(obj: KubeObject) -> ResourceFlavor:
    spec = obj.spec
    labels = dig(spec, "nodeLabels")
    taints = dig(spec, "nodeTaints")
    tolerations = dig(spec, "tolerations")
    return ResourceFlavor(
        obj=obj,
        node_labels=str_map(labels),
        node_labels_known=not isinstance(labels, Unknown),
        node_taints=tuple(t for t in (taints if isinstance(taints, list) else []) if isinstance(t, dict)),
        tolerations=tuple(
            t for t in (tolerations if isinstance(tolerations, list) else []) if isinstance(t, dict)
        ),
        topology_name=as_str(dig(spec, "topologyName")),
    )


@dataclass(frozen=True)
class ParametersRef:
    api_group: str | Unknown | None
    kind: str | Unknown | None
    name: str | Unknown | None


@dataclass(frozen=True)
class AdmissionCheck(ObjectView):
    controller_name: str | Unknown | None
    parameters: ParametersRef | Unknown | None

    @property
    def is_provisioning_request(self) -> bool:
        return self.controller_name == PROVISIONING_REQUEST_CONTROLLER


def admission_check(obj: KubeObject) -> AdmissionCheck:
    params = dig(obj.spec, "parameters")
    ref: ParametersRef | Unknown | None
    if isinstance(params, Unknown):
        ref = params
    elif isinstance(params, dict):
        ref = ParametersRef(
            as_str(params.get("apiGroup")), as_str(params.get("kind")), as_str(params.get("name"))
        )
    else:
        ref = None
    return AdmissionCheck(obj, as_str(dig(obj.spec, "controllerName")), ref)


@dataclass(frozen=True)
class ProvisioningRequestConfig(ObjectView):
    provisioning_class_name: str | Unknown | None
    # Empty = every resource counts (kueue.md §3).
    managed_resources: tuple[str | Unknown, ...]
    managed_resources_known: bool
    parameters: dict[str, str | Unknown]
    pod_set_merge_policy: str | Unknown | None


def provisioning_request_config(obj: KubeObject) -> ProvisioningRequestConfig:
    spec = obj.spec
    managed = dig(spec, "managedResources")
    return ProvisioningRequestConfig(
        obj=obj,
        provisioning_class_name=as_str(dig(spec, "provisioningClassName")),
        managed_resources=tuple(
            m if isinstance(m, (str, Unknown)) else str(m)
            for m in (managed if isinstance(managed, list) else [])
        ),
        managed_resources_known=not isinstance(managed, Unknown),
        parameters=str_map(dig(spec, "parameters")),
        pod_set_merge_policy=as_str(dig(spec, "podSetMergePolicy")),
    )


@dataclass(frozen=True)
class WorkloadPriorityClass(ObjectView):
    # Top-level ``value`` (the CRD has no spec); ``None`` when absent.
    value: int | Unknown | None
    description: str | Unknown | None
    # The common mistake: value/description written under ``spec`` (pruned by the API server).
    misplaced_under_spec: tuple[str, ...]


def workload_priority_class(obj: KubeObject) -> WorkloadPriorityClass:
    spec = obj.spec
    misplaced = tuple(k for k in ("value", "description") if isinstance(spec, dict) and k in spec)
    return WorkloadPriorityClass(
        obj=obj,
        value=as_int(obj.props.get("value")),
        description=as_str(obj.props.get("description")),
        misplaced_under_spec=misplaced,
    )
