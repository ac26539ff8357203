"""GKE node pools for Dynamic Workload Scheduler: queued provisioning and flex-start.

GKE's own rules (kueue.md §8, "Required flags" and "Combinations that are rejected"; cluster-toolkit
``gke-node-pool/main.tf`` preconditions; anchors.md §3 items 1-7 and §4 failure mode 2): a
queued-provisioning pool is created with ``--enable-autoscaling --num-nodes=0 --total-max-nodes N
--location-policy=ANY --reservation-affinity=none --no-enable-autorepair``, never spot, never
COMPACT placement; flex-start forbids spot, reservations, auto-repair and a static node count, and
BALANCED location policy.  Queued provisioning needs GKE ≥ 1.28.3-gke.1098000 (Standard).
The GKE API (or, worse, a silently idle pool) rejects these only at apply time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, Policy

from ...facts.model import NodePool, StackModel
from ...facts.model.gke import GkeCluster
from ...primitives.gke_version import satisfies
from ...primitives.values import Unknown
from ..kit.builders import resource_policy, stack_policy
from ..kit.report import Reporter

QUEUED_PROVISIONING_MIN_VERSION = "1.28.3-gke.1098000"


def _unknown(reporter: Reporter, pool: NodePool, value: object, what: str) -> bool:
    if isinstance(value, Unknown):
        reporter.cannot_check(pool, what)
        return True
    return False


def check_queued_pool(pool: NodePool, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    if _unknown(reporter, pool, pool.queued_provisioning, "queuedProvisioning.enabled"):
        return
    if not pool.is_queued:
        return
    auto = pool.autoscaling
    if isinstance(auto, Unknown):
        reporter.cannot_check(pool, "autoscaling")
    elif auto is None:
        reporter.violation(
            pool,
            "queued provisioning needs autoscaling, but the pool has no `autoscaling` block",
            "add `autoscaling: {totalMinNodeCount: 0, totalMaxNodeCount: <N>, locationPolicy: ANY}`",
        )
    else:
        for field, value in (
            ("totalMinNodeCount", auto.total_min_node_count),
            ("minNodeCount", auto.min_node_count),
        ):
            if not _unknown(reporter, pool, value, f"autoscaling.{field}") and value not in (None, 0):
                reporter.violation(
                    pool,
                    f"queued provisioning requires a minimum of 0 nodes, but autoscaling.{field} is {value}",
                    f"set `autoscaling.{field}: 0` (GKE creates nodes only for ProvisioningRequests)",
                )
        if (
            not _unknown(reporter, pool, auto.location_policy, "autoscaling.locationPolicy")
            and auto.location_policy != "ANY"
        ):
            reporter.violation(
                pool,
                "queued provisioning requires location policy ANY, "
                f"but autoscaling.locationPolicy is {auto.location_policy or 'unset (BALANCED)'}",
                'set `autoscaling.locationPolicy: "ANY"`',
            )
    for field, value in (("initialNodeCount", pool.initial_node_count), ("nodeCount", pool.node_count)):
        if not _unknown(reporter, pool, value, field) and value not in (None, 0):
            reporter.violation(
                pool,
                f"queued provisioning pools start empty, but {field} is {value}",
                f"set `{field}: 0` or leave it unset",
            )
    _check_dws_common(pool, reporter, "queued provisioning")
    if (
        not _unknown(reporter, pool, pool.placement_policy_type, "placementPolicy.type")
        and pool.placement_policy_type == "COMPACT"
    ):
        reporter.violation(
            pool,
            "queued provisioning does not support COMPACT placement for GPUs",
            "remove `placementPolicy` (DWS already places the nodes of one request in one zone)",
        )


def _check_dws_common(pool: NodePool, reporter: Reporter, feature: str) -> None:
    """Rules shared by queued provisioning and flex-start: no reservations, no spot, no auto-repair."""
    if (
        not _unknown(reporter, pool, pool.reservation_affinity, "reservationAffinity")
        and pool.reservation_affinity != "NO_RESERVATION"
    ):
        reporter.violation(
            pool,
            f"{feature} cannot consume reservations, but nodeConfig.reservationAffinity."
            f"consumeReservationType is {pool.reservation_affinity or 'unset'}",
            'set `nodeConfig.reservationAffinity.consumeReservationType: "NO_RESERVATION"`',
        )
    for field, value in (("spot", pool.spot), ("preemptible", pool.preemptible)):
        if not _unknown(reporter, pool, value, f"nodeConfig.{field}") and value is True:
            reporter.violation(
                pool,
                f"{feature} cannot be combined with nodeConfig.{field}",
                f"remove `nodeConfig.{field}` (DWS VMs already use preemptible quota) or use a separate spot pool",
            )
    if (
        not _unknown(reporter, pool, pool.auto_repair, "management.autoRepair")
        and pool.auto_repair is not False
    ):
        reporter.violation(
            pool,
            f"{feature} requires auto-repair off, but management.autoRepair is "
            f"{'unset (GKE enables it)' if pool.auto_repair is None else 'true'}",
            "set `management: {autoRepair: false}` (repairs would disrupt provisioned gangs)",
        )


def check_flex_start_pool(pool: NodePool, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    if _unknown(reporter, pool, pool.flex_start, "nodeConfig.flexStart") or pool.flex_start is not True:
        return
    if pool.is_queued:
        # The queued-provisioning rule already checks the shared constraints.
        return
    _check_dws_common(pool, reporter, "flex-start")
    auto = pool.autoscaling
    if isinstance(auto, Unknown):
        reporter.cannot_check(pool, "autoscaling")
    elif auto is not None and auto.location_policy == "BALANCED":
        reporter.violation(
            pool,
            "flex-start does not support location policy BALANCED",
            'set `autoscaling.locationPolicy: "ANY"`',
        )
    if auto is None and not _unknown(reporter, pool, pool.node_count, "nodeCount") and pool.node_count:
        reporter.violation(
            pool,
            f"flex-start pools cannot have a static node count (nodeCount is {pool.node_count})",
            "remove `nodeCount` and add `autoscaling` with a minimum of 0",
        )


def _version_findings(cluster: GkeCluster, pools: list[NodePool], reporter: Reporter) -> None:
    pinned = False
    for field, version, subject in [
        ("minMasterVersion", cluster.min_master_version, cluster),
        ("nodeVersion", cluster.node_version, cluster),
    ] + [("version", _pool_version(p), p) for p in pools]:
        if isinstance(version, Unknown):
            reporter.cannot_check(subject, f"{field} is unknown until apply")
            continue
        if not version or version == "-":
            continue
        pinned = True
        verdict = satisfies(version, QUEUED_PROVISIONING_MIN_VERSION)
        if verdict == "no":
            reporter.violation(
                subject,
                f"{field} {version} is older than {QUEUED_PROVISIONING_MIN_VERSION}, the first GKE "
                f"version with queued provisioning (used by pool(s) {', '.join(p.name for p in pools)})",
                f'set `{field}` to "{QUEUED_PROVISIONING_MIN_VERSION}" or newer (e.g. "1.33")',
            )
        elif verdict == "unparseable":
            reporter.cannot_check(subject, f"{field} {version!r} is not a GKE version")
    if not pinned:
        channel = cluster.release_channel
        how = (
            f"release channel {channel} picks the version"
            if isinstance(channel, str)
            else "GKE's default version applies"
        )
        reporter.cannot_check(
            cluster,
            f"no minMasterVersion/nodeVersion; {how}, so queued provisioning's minimum "
            f"{QUEUED_PROVISIONING_MIN_VERSION} cannot be verified — pin `minMasterVersion`",
        )


def _pool_version(pool: NodePool) -> str | Unknown | None:
    value = pool.res.get("version")
    return value if isinstance(value, (str, Unknown)) else None


def check_queued_version(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    by_cluster: dict[int, tuple[GkeCluster, list[NodePool]]] = {}
    for pool in model.node_pools():
        if not pool.is_queued:
            continue
        cluster = model.cluster_of(pool)
        if cluster is None:
            continue
        by_cluster.setdefault(id(cluster.res), (cluster, []))[1].append(pool)
    for cluster, pools in by_cluster.values():
        _version_findings(cluster, pools, reporter)


POLICIES: list[Policy] = [
    resource_policy(
        "gke-queued-provisioning-pool",
        "GKE node pools with queued provisioning (DWS) must use autoscaling from 0 with location "
        "policy ANY, no reservations, no spot/preemptible, no COMPACT placement and auto-repair off.",
        NodePool,
        check_queued_pool,
    ),
    resource_policy(
        "gke-flex-start-pool",
        "GKE flex-start node pools must not use spot, reservations, auto-repair, a static node "
        "count or BALANCED location policy.",
        NodePool,
        check_flex_start_pool,
    ),
    stack_policy(
        "gke-queued-provisioning-version",
        f"Clusters with queued-provisioning pools must run GKE {QUEUED_PROVISIONING_MIN_VERSION} or newer.",
        check_queued_version,
        enforcement_level=EnforcementLevel.MANDATORY,
    ),
]
