"""Cross-key checks of ``gpu-batch:kueueQueues`` that Kueue itself would enforce too late.

Kueue accepts a ClusterQueue whose flavor or admission check does not exist and leaves it
*inactive* (reference/kueue.md §2), and its CEL/webhook rules (borrowing without a cohort,
lendingLimit > nominalQuota, resources out of order) only run once the CRDs and webhook are
installed -- after a long ``pulumi up``.  Each rule below is one of those, or a GKE
queued-provisioning fact (kueue.md §7-8), checked before anything is created.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from decimal import Decimal

from stacks.config.queues import (
    MAX_RUN_DURATION_SECONDS,
    QUEUED_PROVISIONING_CLASS,
    ClusterQueueConfig,
    CohortConfig,
    KueueQueuesConfig,
    ResourceGroupConfig,
)
from stacks.errors import ConfigIssue
from stacks.quantity import amount
from stacks.references import unknown_reference

QUEUES_KEY = "gpu-batch:kueueQueues"
# ResourceFlavor spec.nodeLabels holds at most 8 entries (CRD maxProperties).
MAX_FLAVOR_NODE_LABELS = 8
# common.go: a positive fair-sharing weight must exceed this.
MIN_POSITIVE_WEIGHT = Decimal("1e-9")


def check_queues(
    queues: KueueQueuesConfig, pool_modes: Mapping[str, str], cpu_pools: Sequence[str]
) -> Iterator[ConfigIssue]:
    """``pool_modes``: GPU pool name -> provisioning mode; ``cpu_pools``: the CPU pools' names
    (the system pool, and the tenant pool when there is one)."""
    yield from _unique(queues)
    yield from _check_parameters(queues)
    yield from _check_flavors(queues, pool_modes, cpu_pools)
    yield from _check_cohorts(queues)
    flavor_pools = {f.name: f.pool for f in queues.resource_flavors}
    for index, cq in enumerate(queues.cluster_queues):
        at = f"{QUEUES_KEY}.clusterQueues[{index}]"
        yield from _check_groups(
            at, cq.resource_groups, flavor_pools, has_cohort=cq.cohort is not None, owner="cohort"
        )
        yield from _check_cluster_queue(at, cq, queues, {**pool_modes, **dict.fromkeys(cpu_pools, "system")})


def _unique(queues: KueueQueuesConfig) -> Iterator[ConfigIssue]:
    lists: dict[str, Iterable[str]] = {
        "resourceFlavors": (f.name for f in queues.resource_flavors),
        "admissionChecks": (c.name for c in queues.admission_checks),
        "cohorts": (c.name for c in queues.cohorts),
        "clusterQueues": (q.name for q in queues.cluster_queues),
        "priorityClasses": (p.name for p in queues.priority_classes),
    }
    for key, names in lists.items():
        seen: set[str] = set()
        for index, name in enumerate(names):
            if name in seen:
                yield ConfigIssue(
                    f"{QUEUES_KEY}.{key}[{index}].name", f"a name not used by another of {key}", name
                )
            seen.add(name)


def _check_parameters(queues: KueueQueuesConfig) -> Iterator[ConfigIssue]:
    """ProvisioningRequest ``*Seconds`` parameters are whole seconds; maxRunDurationSeconds is at
    most GKE's 7 days (kueue.md §7)."""
    for index, check in enumerate(queues.admission_checks):
        for key, value in check.parameters.items():
            at = f"{QUEUES_KEY}.admissionChecks[{index}].parameters.{key}"
            if key.endswith("Seconds") and not (value.isascii() and value.isdigit() and int(value) > 0):
                yield ConfigIssue(at, "a positive whole number of seconds as a string, e.g. '86400'", value)
            elif key == "maxRunDurationSeconds" and int(value) > MAX_RUN_DURATION_SECONDS:
                yield ConfigIssue(at, f"at most {MAX_RUN_DURATION_SECONDS} (GKE's 7-day cap)", value)


def _check_flavors(
    queues: KueueQueuesConfig, pool_modes: Mapping[str, str], cpu_pools: Sequence[str]
) -> Iterator[ConfigIssue]:
    pools = [*pool_modes, *cpu_pools]
    for index, flavor in enumerate(queues.resource_flavors):
        at = f"{QUEUES_KEY}.resourceFlavors[{index}]"
        if flavor.pool is not None and flavor.pool not in pools:
            yield unknown_reference(f"{at}.pool", flavor.pool, "a node pool of this stack", pools)
        labels = len(flavor.node_labels) + (1 if flavor.pool is not None else 0)
        if labels > MAX_FLAVOR_NODE_LABELS:
            yield ConfigIssue(
                f"{at}.nodeLabels",
                f"at most {MAX_FLAVOR_NODE_LABELS} node labels in all (the pool adds one)",
                flavor.node_labels,
            )
        if flavor.pool is not None and "cloud.google.com/gke-nodepool" in flavor.node_labels:
            yield ConfigIssue(
                f"{at}.nodeLabels",
                "no cloud.google.com/gke-nodepool label: pool already selects the node pool",
                flavor.node_labels,
            )


def _check_cohorts(queues: KueueQueuesConfig) -> Iterator[ConfigIssue]:
    declared = [c.name for c in queues.cohorts]
    flavor_pools = {f.name: f.pool for f in queues.resource_flavors}
    parents: dict[str, str | None] = {c.name: c.parent for c in queues.cohorts}
    for index, cohort in enumerate(queues.cohorts):
        at = f"{QUEUES_KEY}.cohorts[{index}]"
        if cohort.parent is not None and cohort.parent not in declared:
            yield _undeclared_cohort(f"{at}.parent", cohort.parent, declared)
        elif _in_cycle(cohort.name, parents):
            yield ConfigIssue(
                f"{at}.parent",
                "a parent chain that ends at a root cohort (Kueue deactivates every member of a cycle)",
                cohort.parent,
            )
        yield from _check_groups(
            at,
            cohort.resource_groups,
            flavor_pools,
            has_cohort=cohort.parent is not None,
            owner="parent cohort",
        )
        yield from _check_weight(at, cohort)


def _in_cycle(start: str, parents: Mapping[str, str | None]) -> bool:
    seen = {start}
    current = parents.get(start)
    while current is not None:
        if current in seen:
            return True
        seen.add(current)
        current = parents.get(current)
    return False


def _undeclared_cohort(path: str, name: str, declared: list[str]) -> ConfigIssue:
    return unknown_reference(
        path, name, "a Cohort declared under cohorts", declared, "Kueue would silently start an empty cohort"
    )


def _check_groups(
    at: str,
    groups: list[ResourceGroupConfig],
    flavor_pools: Mapping[str, str | None],
    *,
    has_cohort: bool,
    owner: str,
) -> Iterator[ConfigIssue]:
    """Rules 1-6 of kueue.md §4 (non-negative quotas are the Quantity type's job).

    ``owner`` is what borrowing needs: a "cohort" for a ClusterQueue, a "parent cohort" for a
    Cohort; lendingLimit <= nominalQuota is a ClusterQueue rule only (the Cohort webhook has none).
    """
    seen_flavors: set[str] = set()
    seen_resources: set[str] = set()
    for g_index, group in enumerate(groups):
        g_at = f"{at}.resourceGroups[{g_index}]"
        for r_index, resource in enumerate(group.covered_resources):
            if resource in seen_resources:
                yield ConfigIssue(
                    f"{g_at}.coveredResources[{r_index}]",
                    "a resource covered by no other resource group of this queue",
                    resource,
                )
            seen_resources.add(resource)
        for f_index, flavor in enumerate(group.flavors):
            f_at = f"{g_at}.flavors[{f_index}]"
            if flavor.name not in flavor_pools:
                yield unknown_reference(
                    f"{f_at}.name", flavor.name, "a flavor declared under resourceFlavors", flavor_pools
                )
            if flavor.name in seen_flavors:
                yield ConfigIssue(
                    f"{f_at}.name", "a flavor listed once per queue (one group only)", flavor.name
                )
            seen_flavors.add(flavor.name)
            missing = [r for r in group.covered_resources if r not in flavor.resources]
            extra = [r for r in flavor.resources if r not in group.covered_resources]
            if missing or extra:
                yield ConfigIssue(
                    f"{f_at}.resources",
                    f"exactly the covered resources {', '.join(group.covered_resources)}"
                    + (f"; missing {', '.join(missing)}" if missing else "")
                    + (f"; not covered: {', '.join(extra)}" if extra else ""),
                    sorted(flavor.resources),
                )
            for resource, quota in flavor.resources.items():
                q_at = f"{f_at}.resources.{resource}"
                for key, limit in (
                    ("borrowingLimit", quota.borrowing_limit),
                    ("lendingLimit", quota.lending_limit),
                ):
                    if limit is not None and not has_cohort:
                        yield ConfigIssue(
                            f"{q_at}.{key}",
                            f"no {key} unless the queue has a {owner} (Kueue rejects it)",
                            limit,
                        )
                lending = quota.lending_limit
                if (
                    owner == "cohort"
                    and lending is not None
                    and amount(lending) > amount(quota.nominal_quota)
                ):
                    yield ConfigIssue(
                        f"{q_at}.lendingLimit",
                        f"at most nominalQuota ({quota.nominal_quota})",
                        lending,
                    )


def _check_weight(at: str, queue: ClusterQueueConfig | CohortConfig) -> Iterator[ConfigIssue]:
    weight = queue.fair_sharing_weight
    if weight is not None and 0 < amount(weight) <= MIN_POSITIVE_WEIGHT:
        yield ConfigIssue(f"{at}.fairSharingWeight", "0, or a weight above 1e-9", weight)


def _check_cluster_queue(
    at: str, cq: ClusterQueueConfig, queues: KueueQueuesConfig, pool_modes: Mapping[str, str]
) -> Iterator[ConfigIssue]:
    declared_cohorts = [c.name for c in queues.cohorts]
    if cq.cohort is not None and cq.cohort not in declared_cohorts:
        yield _undeclared_cohort(f"{at}.cohort", cq.cohort, declared_cohorts)
    yield from _check_weight(at, cq)
    preemption = cq.preemption
    if preemption.reclaim_within_cohort == "Never" and preemption.borrow_within_cohort != "Never":
        yield ConfigIssue(
            f"{at}.preemption.borrowWithinCohort",
            "Never while reclaimWithinCohort is Never (Kueue rejects the combination)",
            preemption.borrow_within_cohort,
        )
    if preemption.max_priority_threshold is not None and preemption.borrow_within_cohort != "LowerPriority":
        yield ConfigIssue(
            f"{at}.preemption.maxPriorityThreshold",
            "no value unless borrowWithinCohort is LowerPriority",
            preemption.max_priority_threshold,
        )
    yield from _check_admission_checks(at, cq, queues, pool_modes)


def _check_admission_checks(
    at: str, cq: ClusterQueueConfig, queues: KueueQueuesConfig, pool_modes: Mapping[str, str]
) -> Iterator[ConfigIssue]:
    """``pool_modes`` holds every pool of the stack (CPU pools as "system"); a flavor
    naming an unknown pool is reported once, by the flavor, and not judged here."""
    checks = {c.name: c for c in queues.admission_checks}
    flavor_pools = {f.name: f.pool for f in queues.resource_flavors}
    cq_flavors = [f.name for g in cq.resource_groups for f in g.flavors]
    queued_covered: set[str] = set()
    seen: set[str] = set()
    for index, use in enumerate(cq.admission_checks):
        u_at = f"{at}.admissionChecks[{index}]"
        if use.name in seen:
            yield ConfigIssue(f"{u_at}.name", "an admission check listed once per queue", use.name)
        seen.add(use.name)
        check = checks.get(use.name)
        if check is None:
            yield unknown_reference(
                f"{u_at}.name", use.name, "an admission check declared under admissionChecks", checks
            )
            continue
        for f_index, flavor in enumerate(use.on_flavors):
            if flavor not in cq_flavors:
                yield ConfigIssue(
                    f"{u_at}.onFlavors[{f_index}]",
                    f"a flavor of this queue ({', '.join(cq_flavors)})",
                    flavor,
                )
        applies_to = use.on_flavors or cq_flavors
        if check.provisioning_class_name != QUEUED_PROVISIONING_CLASS:
            continue
        queued_covered.update(applies_to)
        for flavor in applies_to:
            pool = flavor_pools.get(flavor)
            if flavor in flavor_pools and (pool is None or pool_modes.get(pool, "queued") != "queued"):
                yield ConfigIssue(
                    f"{u_at}.onFlavors" if use.on_flavors else f"{u_at}.name",
                    f"a check that applies only to flavors of queued pools: {QUEUED_PROVISIONING_CLASS} "
                    f"provisions nothing for flavor {flavor} (pool: {pool or 'none'}); list the queued "
                    "flavors under onFlavors",
                    use.name,
                )
    for flavor in cq_flavors:
        pool = flavor_pools.get(flavor)
        if pool is not None and pool_modes.get(pool) == "queued" and flavor not in queued_covered:
            yield ConfigIssue(
                f"{at}.admissionChecks",
                f"a {QUEUED_PROVISIONING_CLASS} admission check covering flavor {flavor}: queued pool {pool} "
                "gets nodes only through ProvisioningRequests",
                [u.name for u in cq.admission_checks],
            )
