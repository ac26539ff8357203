"""Kueue API rules the API server (CRD CEL, webhooks) would reject or silently prune.

A fresh-cluster ``pulumi preview`` cannot ask the API server — the CRDs are not installed yet —
so the pack re-states the rules (kueue.md §4, CRD files in shared/schemas/kueue, Kueue
``pkg/webhooks/clusterqueue_webhook.go``, ``cohort_webhook.go``, ``common.go``):

* CRD CEL: "borrowingLimit must be nil when cohort is empty"; the webhook adds the same for
  ``lendingLimit``; for a Cohort "… when parent is empty".
* webhook: ``lendingLimit`` "must be less than or equal to the nominalQuota" (ClusterQueue only).
* quantities ≥ 0 and parseable (``nominalQuota`` is required).
* CRD CEL "flavors must have the same number of resources as the coveredResources"; webhook
  "must match the name in coveredResources" (same order).
* flavor and resource names unique across all resourceGroups (a flavor lives in one group).
* CRD CEL: ``reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never`` is rejected;
  ``preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor``.
* fields that do not exist in the object's apiVersion (v1beta1 → v1beta2 renames, kueue.md §1).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from pulumi_policy import Policy

from ...facts.model import AdmissionCheck, ClusterQueue, Cohort, WorkloadPriorityClass
from ...facts.model.base import KubeObject
from ...facts.model.kueue import DEFAULT_WHEN_CAN_BORROW, DEFAULT_WHEN_CAN_PREEMPT, ResourceGroup
from ...primitives.values import Quantity, Unknown, dig, fmt_num
from ..kit.builders import resource_policy
from ..kit.report import Reporter

QuotaOwner = ClusterQueue | Cohort


# The view classes each resource rule judges (builders.resource_policy skips others by type).
QUOTA_OWNERS = (ClusterQueue, Cohort)


def _groups(owner: QuotaOwner) -> tuple[ResourceGroup, ...]:
    return owner.resource_groups


def _container(owner: QuotaOwner) -> tuple[str, str | Unknown | None]:
    """(what the limits need, its value): cohort for a ClusterQueue, parent for a Cohort."""
    if isinstance(owner, ClusterQueue):
        field = "cohortName" if owner.obj.version != "v1beta1" else "cohort"
        return field, owner.cohort
    return "parentName", owner.parent


def check_limits_need_cohort(owner: QuotaOwner, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    field, value = _container(owner)
    if isinstance(value, Unknown):
        reporter.cannot_check(owner, f"spec.{field} is unknown until apply")
        return
    if value:
        return
    noun = "cohort" if isinstance(owner, ClusterQueue) else "parent"
    for group in _groups(owner):
        for flavor in group.flavors:
            for res in flavor.resources:
                for limit_name, limit in (
                    ("borrowingLimit", res.borrowing_limit),
                    ("lendingLimit", res.lending_limit),
                ):
                    if limit is not None:
                        reporter.violation(
                            owner,
                            f"{res.path}.{limit_name} is set but spec.{field} is empty "
                            f"('{limit_name} must be nil when {noun} is empty')",
                            f"set `spec.{field}` or remove `{limit_name}`",
                        )


def check_lending_within_nominal(cq: ClusterQueue, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for group in cq.resource_groups:
        for flavor in group.flavors:
            for res in flavor.resources:
                lending = res.lending_limit
                if lending is None:
                    continue
                if lending.unknown or res.nominal_quota.unknown:
                    reporter.cannot_check(cq, f"{res.path} lendingLimit/nominalQuota is unknown until apply")
                    continue
                if lending.value is None or res.nominal_quota.value is None:
                    continue  # reported by kueue-quota-quantities
                if lending.value > res.nominal_quota.value:
                    reporter.violation(
                        cq,
                        f"{res.path}.lendingLimit {lending} exceeds nominalQuota {res.nominal_quota} "
                        "('must be less than or equal to the nominalQuota')",
                        f"lower lendingLimit to at most {res.nominal_quota} or raise nominalQuota",
                    )


def _check_quantity(
    owner: QuotaOwner, reporter: Reporter, path: str, name: str, q: Quantity | None, *, required: bool
) -> None:
    if q is None:
        return
    if q.unknown:
        reporter.cannot_check(owner, f"{path}.{name} is unknown until apply")
    elif q.raw is None and required:
        reporter.violation(owner, f"{path}.{name} is missing (required)", f"set `{name}` (0 if none)")
    elif q.error is not None:
        reporter.violation(
            owner,
            f"{path}.{name}: {q.error}",
            f'write a Kubernetes quantity such as 8, "500m" or "64Gi" for `{name}`',
        )
    elif q.value is not None and q.value < Decimal(0):
        reporter.violation(owner, f"{path}.{name} is negative ({q})", f"use a value ≥ 0 for `{name}`")


def check_quantities(owner: QuotaOwner, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for group in _groups(owner):
        for flavor in group.flavors:
            for res in flavor.resources:
                _check_quantity(owner, reporter, res.path, "nominalQuota", res.nominal_quota, required=True)
                _check_quantity(
                    owner, reporter, res.path, "borrowingLimit", res.borrowing_limit, required=False
                )
                _check_quantity(owner, reporter, res.path, "lendingLimit", res.lending_limit, required=False)


def check_flavor_resources_match(owner: QuotaOwner, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for group in _groups(owner):
        covered = list(group.covered_resources)
        if not group.covered_known or any(isinstance(c, Unknown) for c in covered):
            reporter.cannot_check(owner, f"{group.path}.coveredResources is unknown until apply")
            continue
        for flavor in group.flavors:
            names = [r.name for r in flavor.resources]
            if not flavor.resources_known or any(isinstance(n, Unknown) for n in names):
                reporter.cannot_check(owner, f"{flavor.path} resource names are unknown until apply")
                continue
            if names == covered:
                continue
            if len(names) != len(covered):
                problem = (
                    f"{flavor.path} lists {len(names)} resources {names} but coveredResources has "
                    f"{len(covered)} {covered} ('flavors must have the same number of resources as the "
                    "coveredResources')"
                )
            else:
                problem = (
                    f"{flavor.path} lists resources {names} but coveredResources is {covered} "
                    "(each resource 'must match the name in coveredResources', in the same order)"
                )
            reporter.violation(
                owner,
                problem,
                f"list exactly {covered} under flavor '{flavor.name}', in that order (0 for none)",
            )


def check_group_uniqueness(owner: QuotaOwner, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    flavor_group: dict[str, int] = {}
    resource_group: dict[str, int] = {}
    for gi, group in enumerate(_groups(owner)):
        for res_name in group.covered_resources:
            if not isinstance(res_name, str):
                continue
            if res_name in resource_group:
                where = (
                    "twice in"
                    if resource_group[res_name] == gi
                    else f"in resourceGroups[{resource_group[res_name]}] and"
                )
                reporter.violation(
                    owner,
                    f"resource '{res_name}' is covered {where} {group.path}; a resource may be covered "
                    "by one resource group only",
                    f"merge the groups covering '{res_name}' or drop it from one of them",
                )
            else:
                resource_group[res_name] = gi
        for flavor in group.flavors:
            if not isinstance(flavor.name, str) or not flavor.name:
                continue
            if flavor.name in flavor_group:
                where = (
                    "twice in"
                    if flavor_group[flavor.name] == gi
                    else f"in resourceGroups[{flavor_group[flavor.name]}] and"
                )
                reporter.violation(
                    owner,
                    f"flavor '{flavor.name}' appears {where} {group.path}; a flavor may appear in one "
                    "resource group only",
                    f"list flavor '{flavor.name}' once, in the group that covers all its resources",
                )
            else:
                flavor_group[flavor.name] = gi


def check_preemption(cq: ClusterQueue, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    pre = cq.preemption
    reclaim = pre.get("reclaimWithinCohort", "Never")
    borrow = dig(pre, "borrowWithinCohort")
    borrow_policy = dig(borrow, "policy") if isinstance(borrow, dict) else None
    if isinstance(reclaim, Unknown) or isinstance(borrow, Unknown) or isinstance(borrow_policy, Unknown):
        reporter.cannot_check(cq, "spec.preemption is unknown until apply")
    elif isinstance(borrow, dict) and reclaim == "Never" and (borrow_policy or "Never") != "Never":
        reporter.violation(
            cq,
            f"preemption.borrowWithinCohort.policy is {borrow_policy} while reclaimWithinCohort is "
            "Never (the default) — the CRD rejects 'reclaimWithinCohort=Never and "
            "borrowWithinCohort.Policy!=Never'",
            "set `preemption.reclaimWithinCohort: LowerPriority` (or Any), or borrowWithinCohort.policy: Never",
        )
    ff = cq.flavor_fungibility
    if "preference" in ff:
        when_borrow = ff.get("whenCanBorrow", DEFAULT_WHEN_CAN_BORROW)
        when_preempt = ff.get("whenCanPreempt", DEFAULT_WHEN_CAN_PREEMPT)
        if isinstance(when_borrow, Unknown) or isinstance(when_preempt, Unknown):
            reporter.cannot_check(cq, "spec.flavorFungibility is unknown until apply")
        elif not (when_borrow == "TryNextFlavor" and when_preempt == "TryNextFlavor"):
            reporter.violation(
                cq,
                f"flavorFungibility.preference is set with whenCanBorrow={when_borrow}, "
                f"whenCanPreempt={when_preempt} ('preference can only be set when both "
                "whenCanBorrow and whenCanPreempt are TryNextFlavor')",
                "set both `whenCanBorrow` and `whenCanPreempt` to TryNextFlavor, or remove `preference`",
            )


# Fields a version does not define: (kind, version) → {spec path: fix}.  Checked against the CRD
# schemas in shared/schemas/kueue by tests/policies/rules/test_kueue_api.py.
_WRONG_VERSION_FIELDS: dict[tuple[str, str], dict[str, str]] = {
    ("ClusterQueue", "v1beta2"): {
        "cohort": "rename `spec.cohort` to `spec.cohortName` (v1beta2)",
        "admissionChecks": "use `spec.admissionChecksStrategy: {admissionChecks: [{name: <check>}]}` (v1beta2)",
    },
    ("ClusterQueue", "v1beta1"): {
        "cohortName": "use `spec.cohort` in v1beta1, or switch the object to kueue.x-k8s.io/v1beta2",
        "concurrentAdmissionPolicy": "switch the object to kueue.x-k8s.io/v1beta2",
    },
    ("AdmissionCheck", "v1beta2"): {
        "retryDelayMinutes": "remove `spec.retryDelayMinutes` (removed in v1beta2; retries are "
        "configured on the ProvisioningRequestConfig's retryStrategy)",
    },
    ("Cohort", "v1beta1"): {"parent": "rename `spec.parent` to `spec.parentName`"},
    ("Cohort", "v1beta2"): {"parent": "rename `spec.parent` to `spec.parentName`"},
}
# flavorFungibility values removed in v1beta2 (replaced by MayStopSearch).
_REMOVED_FUNGIBILITY = {"whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt"}


def wrong_version_fields(obj: KubeObject) -> dict[str, str]:
    return _WRONG_VERSION_FIELDS.get((obj.kind, obj.version), {})


VERSIONED_KUEUE = (ClusterQueue, Cohort, AdmissionCheck, WorkloadPriorityClass)


def check_api_version_fields(subject: Any, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    obj: KubeObject = subject.obj
    spec = obj.spec
    spec_keys = set(spec.keys()) if isinstance(spec, dict) else set()
    for field, fix in wrong_version_fields(obj).items():
        if field in spec_keys:
            reporter.violation(
                subject,
                f"spec.{field} does not exist in {obj.api_version} (the API server rejects or prunes it, "
                "so it has no effect)",
                fix,
            )
    if isinstance(subject, ClusterQueue) and obj.version == "v1beta2":
        for key, removed in _REMOVED_FUNGIBILITY.items():
            if subject.flavor_fungibility.get(key) == removed:
                reporter.violation(
                    subject,
                    f"flavorFungibility.{key}: {removed} was removed in v1beta2",
                    f"use `{key}: MayStopSearch` (the v1beta2 replacement for {removed})",
                )
    if isinstance(subject, WorkloadPriorityClass):
        _check_priority_class_shape(subject, reporter)


def _check_priority_class_shape(wpc: WorkloadPriorityClass, reporter: Reporter) -> None:
    if wpc.misplaced_under_spec:
        fields = ", ".join(wpc.misplaced_under_spec)
        reporter.violation(
            wpc,
            f"{fields} is written under spec, but WorkloadPriorityClass has no spec: the fields are "
            "top-level (spec is pruned)",
            f"move {fields} to the top level of the object (next to metadata)",
        )
    if isinstance(wpc.value, Unknown):
        reporter.cannot_check(wpc, "value is unknown until apply")
    elif wpc.value is None:
        reporter.violation(
            wpc,
            "top-level `value` (int32, required) is missing",
            "set `value:` at the top level, e.g. 1000 for prod and 100 for dev",
        )
    elif not -(2**31) <= wpc.value < 2**31:
        reporter.violation(wpc, f"value {fmt_num(wpc.value)} is outside int32", "use a value within int32")


@dataclass(frozen=True)
class ApiCheck:
    """One rule the API server (CRD CEL) or Kueue's webhooks enforce: a rejected object."""

    name: str
    description: str
    applies_to: type | tuple[type, ...]
    check: Callable[[Any, Reporter, Mapping[str, Any]], None]


# Every rule of this module, once: the pack's policies below and the what-if's refusal of objects
# Kueue would never run (``whatif.refusal``) both read this list.
API_CHECKS: tuple[ApiCheck, ...] = (
    ApiCheck(
        "kueue-limits-need-cohort",
        "borrowingLimit/lendingLimit need a cohort (ClusterQueue) or a parent (Cohort).",
        QUOTA_OWNERS,
        check_limits_need_cohort,
    ),
    ApiCheck(
        "kueue-lending-limit-within-nominal",
        "A ClusterQueue's lendingLimit must not exceed its nominalQuota.",
        ClusterQueue,
        check_lending_within_nominal,
    ),
    ApiCheck(
        "kueue-quota-quantities",
        "Kueue quotas must be valid, non-negative Kubernetes quantities (nominalQuota is required).",
        QUOTA_OWNERS,
        check_quantities,
    ),
    ApiCheck(
        "kueue-flavor-resources-match-covered",
        "Each flavor must list exactly the group's coveredResources, in the same order.",
        QUOTA_OWNERS,
        check_flavor_resources_match,
    ),
    ApiCheck(
        "kueue-resource-group-uniqueness",
        "A flavor or a resource may appear in only one resource group of a ClusterQueue or Cohort.",
        QUOTA_OWNERS,
        check_group_uniqueness,
    ),
    ApiCheck(
        "kueue-preemption-combinations",
        "ClusterQueue preemption and flavorFungibility must avoid the combinations the CRD rejects.",
        ClusterQueue,
        check_preemption,
    ),
    ApiCheck(
        "kueue-api-version-fields",
        "Kueue objects must only use fields their apiVersion defines (v1beta1 vs v1beta2 renames; "
        "WorkloadPriorityClass value/description are top-level).",
        VERSIONED_KUEUE,
        check_api_version_fields,
    ),
)

POLICIES: list[Policy] = [resource_policy(c.name, c.description, c.applies_to, c.check) for c in API_CHECKS]
