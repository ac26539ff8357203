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

Checked against the code (issue 11 item 6), kubernetes-sigs/kueue v0.19.2
``pkg/cache/scheduler/resource_node.go``: ``potentialAvailable`` (L125-140) -- the most a node can
ever get, assuming no usage -- is ``localQuota`` (nominal minus ``lendingLimit``, 0 without one:
L64-72) plus the parent's potential, capped at ``subtreeQuota + borrowingLimit`` when a
``borrowingLimit`` is set; a root's potential is its ``SubtreeQuota`` (every member's lendable part
plus the cohorts' own quotas).  For a ClusterQueue that is nominal + min(borrowingLimit, what the
rest of the tree lends), which is :func:`can_get`.  Intermediate cohorts' own borrowing/lending
limits can only lower it, so ignoring them keeps this an upper bound ("never" stays certain).
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from ..primitives.tokens import KUEUE_GROUP
from ..primitives.values import Quantity, Unknown
from .demand import CannotTellError
from .model import AdmissionCheck, ClusterQueue, ProvisioningRequestConfig, StackModel
from .model.kueue import PROVISIONING_REQUEST_CONTROLLER, ResourceQuota

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
    return cq.quota_entry(flavor, resource)


@dataclass(frozen=True)
class _Failure:
    """A quota that cannot be summed: the exception ``borrowable`` raises when it counts it."""

    index: int  # position of its ClusterQueue in the model (the order the sum meets them)
    obj_id: int  # id() of its ClusterQueue's object (a queue never lends to itself)
    unknown: bool  # CannotTellError, else InvalidQuotaError
    message: str

    def error(self) -> Exception:
        return CannotTellError(self.message) if self.unknown else InvalidQuotaError(self.message)


class _Cohorts:
    """Every cohort name of the stack with its tree root, resolved once per model.

    Roots follow ``parentName`` (cycle-safe: a cycle's members share the first repeat); a name
    whose chain meets an unknown parent keeps that error.  Walks that end at a root are shared
    by every name on them, so resolving all names costs the size of the forest.
    """

    def __init__(self, model: StackModel) -> None:
        self.parents: dict[str, str | Unknown | None] = {c.name: c.parent for c in model.cohorts()}
        self._roots: dict[str, str | CannotTellError] = {}
        self._shared: dict[str, str | CannotTellError] = {}
        names = set(self.parents)
        names.update(cq.cohort for cq in model.cluster_queues() if isinstance(cq.cohort, str))
        self.members: dict[str, set[str]] = {}
        # The first name (in sorted order, for a stable message) whose chain is unknown: every
        # tree may then gain members at apply, so no tree can be told.
        self.error: CannotTellError | None = None
        for name in sorted(names):
            root = self.root_or_error(name)
            if isinstance(root, CannotTellError):
                self.error = self.error or root
            else:
                self.members.setdefault(root, set()).add(name)

    def root_or_error(self, cohort: str) -> str | CannotTellError:
        if cohort in self._roots:
            return self._roots[cohort]
        path = [cohort]
        seen = {cohort}
        current = cohort
        result: str | CannotTellError
        # Whether the walk ended at a real root or an unknown parent (no cycle): then every name
        # on it has the same answer and later walks may stop there.  A walk into a cycle answers
        # for its start only (the first repeat depends on where the walk entered the cycle).
        shared = True
        while True:
            if current in self._shared:
                result = self._shared[current]
                break
            parent = self.parents.get(current)
            if isinstance(parent, Unknown):
                result = CannotTellError(f"parent of cohort '{current}' is unknown until apply")
                break
            if not parent or parent in seen:
                result = current
                shared = not parent
                break
            seen.add(parent)
            path.append(parent)
            current = parent
        if shared:
            for name in path:
                self._shared[name] = result
                self._roots[name] = result
        else:
            self._roots[cohort] = result
        return result

    def root(self, cohort: str) -> str:
        found = self.root_or_error(cohort)
        if isinstance(found, CannotTellError):
            raise CannotTellError(found.what)
        return found

    def known_root(self, cohort: str) -> str:
        """``cohort``'s root, raising CannotTellError when its tree cannot be told: its own chain
        is unknown, or any chain is (an unknown parent may attach that subtree to any tree)."""
        root = self.root(cohort)
        if self.error is not None:
            raise CannotTellError(self.error.what)
        return root

    def tree(self, cohort: str) -> set[str]:
        return {cohort, *self.members.get(self.known_root(cohort), ())}


def _cohorts(model: StackModel) -> _Cohorts:
    return model.memo("kueue_capacity.cohorts", lambda: _Cohorts(model))


def cohort_root(model: StackModel, cohort: str) -> str:
    """The top of ``cohort``'s tree (cycle-safe: a cycle's members share the first repeat)."""
    return _cohorts(model).root(cohort)


def cohort_tree(model: StackModel, cohort: str) -> set[str]:
    """Every cohort name in the same tree as ``cohort`` (its root's descendants)."""
    return _cohorts(model).tree(cohort)


@dataclass
class _Lending:
    """What each cohort tree lends of one (flavor, resource), summed once per model.

    ``queues[root]`` is Σ over the tree's ClusterQueues of lendingLimit (else nominalQuota);
    ``own[id(obj)]`` each queue's part of it, so one queue's borrowable is the tree's total minus
    its own part -- O(1) per queue instead of a walk over the cohort.  Cohort objects' own quotas
    are summed apart (``cohorts[root]``).  Quotas that cannot be summed are kept in the order the
    walk meets them, so the same exception surfaces as a walk would raise.
    """

    queues: dict[str, Decimal] = field(default_factory=dict)
    own: dict[int, Decimal] = field(default_factory=dict)
    # How many queue terms of each Decimal exponent a tree's sum has (see ``_exponent``).
    exponents: dict[str, dict[int, int]] = field(default_factory=dict)
    queue_failures: dict[str, list[_Failure]] = field(default_factory=dict)
    cohorts: dict[str, Decimal] = field(default_factory=dict)
    cohort_exponent: dict[str, int] = field(default_factory=dict)
    cohort_failure: dict[str, _Failure] = field(default_factory=dict)
    # ClusterQueues whose cohort is unknown: any of them may join any tree.
    unknown_cohort: list[_Failure] = field(default_factory=list)


def _exponent(value: Decimal) -> int:
    exp = value.as_tuple().exponent
    return exp if isinstance(exp, int) else 0  # quotas are finite (value_of)


def _failure(index: int, obj_id: int, exc: Exception) -> _Failure:
    return _Failure(index, obj_id, isinstance(exc, CannotTellError), str(exc))


def _lending(model: StackModel, flavor: str, resource: str) -> _Lending:
    def build() -> _Lending:
        cohorts = _cohorts(model)
        out = _Lending()
        for index, other in enumerate(model.cluster_queues()):
            if isinstance(other.cohort, Unknown):
                message = f"cohort of {other.describe()} is unknown until apply"
                out.unknown_cohort.append(_Failure(index, id(other.obj), True, message))
                continue
            if not other.cohort:
                continue
            root = cohorts.root_or_error(other.cohort)
            if isinstance(root, CannotTellError):
                continue  # every tree is unknown then: borrowable raises before reading this
            entry = _entry(other, flavor, resource)
            if entry is None:
                continue
            try:
                field, lendable = entry.lendable
                amount = value_of(lendable, f"{other.describe()} {entry.path}.{field}")
            except (CannotTellError, InvalidQuotaError) as exc:
                out.queue_failures.setdefault(root, []).append(_failure(index, id(other.obj), exc))
                continue
            out.queues[root] = out.queues.get(root, Decimal(0)) + amount
            out.own[id(other.obj)] = amount
            counts = out.exponents.setdefault(root, {})
            counts[_exponent(amount)] = counts.get(_exponent(amount), 0) + 1
        for index, cohort in enumerate(model.cohorts()):
            root = cohorts.root_or_error(cohort.name)
            if isinstance(root, CannotTellError) or root in out.cohort_failure:
                continue
            for group in cohort.resource_groups:
                for f in group.flavors:
                    for r in f.resources:
                        if f.name != flavor or r.name != resource or root in out.cohort_failure:
                            continue
                        try:
                            amount = value_of(r.nominal_quota, f"{cohort.describe()} {r.path}.nominalQuota")
                        except (CannotTellError, InvalidQuotaError) as exc:
                            out.cohort_failure[root] = _failure(index, id(cohort.obj), exc)
                            continue
                        out.cohorts[root] = out.cohorts.get(root, Decimal(0)) + amount
                        out.cohort_exponent[root] = min(out.cohort_exponent.get(root, 0), _exponent(amount))
        return out

    return model.memo(f"kueue_capacity.lending:{flavor}\0{resource}", build)


def borrowable(model: StackModel, cq: ClusterQueue, flavor: str, resource: str) -> Decimal:
    """Most of (flavor, resource) ``cq`` can borrow from its cohort tree. Raises CannotTellError.

    Everything the rest of the tree lends: the other ClusterQueues' lendingLimit (else nominal
    quota) plus the tree's Cohort objects' own quotas, capped by ``cq``'s borrowingLimit.  The
    per-tree sums are computed once per model (:func:`_lending`).
    """
    if isinstance(cq.cohort, Unknown):
        raise CannotTellError(f"cohort of {cq.describe()} is unknown until apply")
    if not cq.cohort:
        return Decimal(0)
    root = _cohorts(model).known_root(cq.cohort)
    lending = _lending(model, flavor, resource)
    mine = id(cq.obj)
    failures = [f for f in lending.unknown_cohort if f.obj_id != mine]
    failures += [f for f in lending.queue_failures.get(root, []) if f.obj_id != mine]
    if failures:
        raise min(failures, key=lambda f: f.index).error()
    if root in lending.cohort_failure:
        raise lending.cohort_failure[root].error()
    own = lending.own.get(mine)
    lendable = lending.queues.get(root, Decimal(0)) - (own if own is not None else Decimal(0))
    lendable += lending.cohorts.get(root, Decimal(0))
    # The same Decimal a term-by-term sum from Decimal(0) gives: its exponent is the smallest of
    # the terms' (and 0), so '0.5' stays '0.5' and does not become '0.500' after subtracting
    # this queue's own '1.000'.
    exponent = lending.cohort_exponent.get(root, 0)
    for exp, count in lending.exponents.get(root, {}).items():
        if count > 1 or own is None or exp != _exponent(own):
            exponent = min(exponent, exp)
    with suppress(InvalidOperation):  # beyond the context's precision the sum is rounded anyway
        lendable = lendable.quantize(Decimal(1).scaleb(exponent))
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
        found = model.lookup(KUEUE_GROUP, "AdmissionCheck", ref.name, near=cq)
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
    found = model.lookup(KUEUE_GROUP, "ProvisioningRequestConfig", params.name, near=check)
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
