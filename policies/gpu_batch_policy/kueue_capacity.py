"""What a Kueue ClusterQueue can ever hand out, per flavor and resource, and how it provisions.

*Ever* is the point: the gang rules ask whether a workload can be admitted under the most
favourable conditions, so everything here is an upper bound and a violation means "never".

* A ClusterQueue owns ``nominalQuota`` per (flavor, resource). In a cohort it may borrow up to
  ``borrowingLimit``; with no ``borrowingLimit`` it may borrow everything the rest of the cohort
  lends -- each other member's ``lendingLimit`` (else its whole nominal quota) plus the cohort
  objects' own quotas -- across the whole cohort tree, since hierarchical cohorts are GA
  (kueue.md §2-3; ``borrowingLimit`` is only legal with a cohort).
* An AdmissionCheck whose controller is ``kueue.x-k8s.io/provisioning-request`` applies to a
  flavor when its ``onFlavors`` is empty or names it (kueue.md §2). Its ProvisioningRequestConfig
  class says who provides capacity: with ``queued-provisioning.gke.io`` GKE scales **one** node
  pool per request, all at once in one zone (kueue.md §7 "GKE limitations").
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from .demand import CannotTellError
from .model import AdmissionCheck, ClusterQueue, ProvisioningRequestConfig, StackModel
from .model_kueue import PROVISIONING_REQUEST_CONTROLLER, ResourceQuota
from .tokens import KUEUE_GROUP
from .values import Quantity, Unknown

QUEUED_PROVISIONING_CLASS = "queued-provisioning.gke.io"


class InvalidQuotaError(Exception):
    """A quota is not a valid quantity; the Kueue API rules report it, capacity rules skip."""


def value_of(q: Quantity, where: str) -> Decimal:
    if q.unknown:
        raise CannotTellError(f"{where} is unknown until apply")
    if q.value is None:
        raise InvalidQuotaError(where)
    return q.value


def _entry(cq: ClusterQueue, flavor: str, resource: str) -> ResourceQuota | None:
    for f, r in cq.quotas(resource):
        if f.name == flavor:
            return r
    return None


def _cohort_parents(model: StackModel) -> dict[str, str | Unknown | None]:
    return {c.name: c.parent for c in model.cohorts()}


def cohort_root(model: StackModel, cohort: str) -> str:
    """The top of ``cohort``'s tree (cycle-safe: a cycle's members share the first repeat)."""
    parents = _cohort_parents(model)
    seen = {cohort}
    current = cohort
    while True:
        parent = parents.get(current)
        if isinstance(parent, Unknown):
            raise CannotTellError(f"parent of cohort '{current}' is unknown until apply")
        if not parent or parent in seen:
            return current
        seen.add(parent)
        current = parent


def cohort_tree(model: StackModel, cohort: str) -> set[str]:
    """Every cohort name in the same tree as ``cohort`` (its root's descendants)."""
    root = cohort_root(model, cohort)
    names = {cohort, *_cohort_parents(model)}
    names.update(cq.cohort for cq in model.cluster_queues() if isinstance(cq.cohort, str))
    return {n for n in names if cohort_root(model, n) == root}


def borrowable(model: StackModel, cq: ClusterQueue, flavor: str, resource: str) -> Decimal:
    """Most of (flavor, resource) ``cq`` can borrow from its cohort tree. Raises CannotTellError."""
    if isinstance(cq.cohort, Unknown):
        raise CannotTellError(f"cohort of {cq.describe()} is unknown until apply")
    if not cq.cohort:
        return Decimal(0)
    tree = cohort_tree(model, cq.cohort)
    lendable = Decimal(0)
    for other in model.cluster_queues():
        if other is cq or other.obj is cq.obj:
            continue
        if isinstance(other.cohort, Unknown):
            raise CannotTellError(f"cohort of {other.describe()} is unknown until apply")
        if other.cohort not in tree:
            continue
        entry = _entry(other, flavor, resource)
        if entry is None:
            continue
        if entry.lending_limit is not None:
            lendable += value_of(entry.lending_limit, f"{other.describe()} {entry.path}.lendingLimit")
        else:
            lendable += value_of(entry.nominal_quota, f"{other.describe()} {entry.path}.nominalQuota")
    for cohort in model.cohorts():
        if cohort.name not in tree:
            continue
        for group in cohort.resource_groups:
            for f in group.flavors:
                for r in f.resources:
                    if f.name == flavor and r.name == resource:
                        lendable += value_of(r.nominal_quota, f"{cohort.describe()} {r.path}.nominalQuota")
    entry = _entry(cq, flavor, resource)
    if entry is not None and entry.borrowing_limit is not None:
        return min(lendable, value_of(entry.borrowing_limit, f"{cq.describe()} {entry.path}.borrowingLimit"))
    return lendable


def can_get(model: StackModel, cq: ClusterQueue, flavor: str, resource: str) -> Decimal:
    """nominal + borrowable of (flavor, resource) for ``cq``; 0 when the flavor lacks it."""
    entry = _entry(cq, flavor, resource)
    if entry is None:
        return Decimal(0)
    nominal = value_of(entry.nominal_quota, f"{cq.describe()} {entry.path}.nominalQuota")
    return nominal + borrowable(model, cq, flavor, resource)


@dataclass(frozen=True)
class ProvisioningCheck:
    """A provisioning-request AdmissionCheck on a ClusterQueue, with its class if knowable."""

    check: AdmissionCheck
    config: ProvisioningRequestConfig | None
    provisioning_class: str | None

    @property
    def queued(self) -> bool:
        return self.provisioning_class == QUEUED_PROVISIONING_CLASS


def provisioning_checks(model: StackModel, cq: ClusterQueue, flavor: str) -> list[ProvisioningCheck]:
    """The provisioning-request checks that apply to ``flavor`` of ``cq``. Raises CannotTellError
    when a check's name, controller or class is unknown; a check that does not resolve is
    ignored (the reference rules report it)."""
    out: list[ProvisioningCheck] = []
    for ref in cq.admission_checks:
        if isinstance(ref.name, Unknown) or any(isinstance(f, Unknown) for f in ref.on_flavors):
            raise CannotTellError(f"admission checks of {cq.describe()} are unknown until apply")
        if ref.on_flavors and flavor not in ref.on_flavors:
            continue
        found = model.lookup(KUEUE_GROUP, "AdmissionCheck", ref.name)
        if found.status == "unknown":
            raise CannotTellError(f"AdmissionCheck '{ref.name}' is not known until apply")
        if not found.ok:
            continue
        check: AdmissionCheck = model.view(found.found[0])
        if isinstance(check.controller_name, Unknown):
            raise CannotTellError(f"controllerName of {check.describe()} is unknown until apply")
        if check.controller_name != PROVISIONING_REQUEST_CONTROLLER:
            continue
        out.append(_resolve_config(model, check))
    return out


def _resolve_config(model: StackModel, check: AdmissionCheck) -> ProvisioningCheck:
    params = check.parameters
    if isinstance(params, Unknown) or (params is not None and isinstance(params.name, Unknown)):
        raise CannotTellError(f"parameters of {check.describe()} are unknown until apply")
    if params is None or not params.name:
        return ProvisioningCheck(check, None, None)
    found = model.lookup(KUEUE_GROUP, "ProvisioningRequestConfig", params.name)
    if found.status == "unknown":
        raise CannotTellError(f"ProvisioningRequestConfig '{params.name}' is not known until apply")
    if not found.ok:
        return ProvisioningCheck(check, None, None)
    config: ProvisioningRequestConfig = model.view(found.found[0])
    klass = config.provisioning_class_name
    if isinstance(klass, Unknown):
        raise CannotTellError(f"provisioningClassName of {config.describe()} is unknown until apply")
    return ProvisioningCheck(check, config, klass)


def gpu_flavors(cq: ClusterQueue, resource: str) -> list[str]:
    """Names of the flavors of the resource group(s) covering ``resource``."""
    return [
        f.name
        for group in cq.resource_groups
        if resource in group.covered_resources
        for f in group.flavors
        if isinstance(f.name, str) and f.name
    ]
