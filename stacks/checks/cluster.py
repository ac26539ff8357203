"""Checks across cluster and pool keys that GKE would refuse at create time.

Each is a rule GKE (or its cluster autoscaler) enforces only after a long API round-trip, or
never enforces and simply never provisions; reference/kueue.md §8 and the cluster-toolkit
preconditions (reference/anchors.md §2.1) list them.  They run before any resource exists.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from components.gpu_catalog import GPU_MACHINES, gpu_machine
from stacks.config.cluster import (
    QUEUED_FLEX_START_MIN_VERSION,
    QUEUED_PROVISIONING_MIN_VERSION,
    ClusterConfig,
    GpuPoolConfig,
)
from stacks.errors import ConfigIssue, suggest

CLUSTER_KEY = "gpu-batch:cluster"
POOLS_KEY = "gpu-batch:gpuPools"
_DWS_MODES = ("queued", "flex-start")


def gke_version(text: str) -> tuple[int, ...]:
    """``1.28.3-gke.1098000`` -> (1, 28, 3, 1098000); missing parts count as 0 (a prefix such
    as ``1.28`` may resolve to 1.28.0, so it is judged by its lowest member)."""
    numbers = [int(n) for n in re.findall(r"\d+", text)]
    return tuple(numbers + [0] * (4 - len(numbers)))


def check_cluster(cluster: ClusterConfig, pools: list[GpuPoolConfig]) -> Iterator[ConfigIssue]:
    system = cluster.system_pool
    if system.min_nodes > system.max_nodes:
        yield ConfigIssue(
            f"{CLUSTER_KEY}.systemPool.minNodes",
            f"at most systemPool.maxNodes ({system.max_nodes})",
            system.min_nodes,
        )
    if system.max_nodes < 1:
        yield ConfigIssue(f"{CLUSTER_KEY}.systemPool.maxNodes", "at least 1", system.max_nodes)
    tenant = cluster.tenant_pool
    if tenant is not None:
        if tenant.min_nodes > tenant.max_nodes:
            yield ConfigIssue(
                f"{CLUSTER_KEY}.tenantPool.minNodes",
                f"at most tenantPool.maxNodes ({tenant.max_nodes})",
                tenant.min_nodes,
            )
        taken = [system.name, *(p.name for p in pools)]
        if tenant.name in taken:
            yield ConfigIssue(
                f"{CLUSTER_KEY}.tenantPool.name",
                f"a name no other pool has ({', '.join(taken)})",
                tenant.name,
            )
    queued = [p.name for p in pools if p.provisioning == "queued"]
    version = cluster.min_master_version
    if queued and version is not None:
        if not re.fullmatch(r"\d+\.\d+(\.\d+(-gke\.\d+)?)?", version):
            yield ConfigIssue(
                f"{CLUSTER_KEY}.minMasterVersion", "a GKE version such as 1.33 or 1.33.5-gke.1080000", version
            )
        elif gke_version(version) < gke_version(QUEUED_PROVISIONING_MIN_VERSION):
            yield ConfigIssue(
                f"{CLUSTER_KEY}.minMasterVersion",
                f"{QUEUED_PROVISIONING_MIN_VERSION} or newer: pool(s) {', '.join(queued)} use queued provisioning",
                version,
            )
        elif gke_version(version) < gke_version(QUEUED_FLEX_START_MIN_VERSION):
            # Queued pools are created with flex-start too (components/gpu_pool.py), which GKE
            # supports with queued provisioning from this version (how-to/provisioningrequest).
            yield ConfigIssue(
                f"{CLUSTER_KEY}.minMasterVersion",
                f"{QUEUED_FLEX_START_MIN_VERSION} or newer: pool(s) {', '.join(queued)} use flex-start "
                "with queued provisioning",
                version,
            )


def check_pools(pools: list[GpuPoolConfig]) -> Iterator[ConfigIssue]:
    seen: set[str] = set()
    for index, pool in enumerate(pools):
        at = f"{POOLS_KEY}[{index}]"
        if pool.name in seen:
            yield ConfigIssue(f"{at}.name", "a pool name not used by another GPU pool", pool.name)
        seen.add(pool.name)
        yield from _check_machine(at, pool)
        yield from _check_mode(at, pool)


def _check_machine(at: str, pool: GpuPoolConfig) -> Iterator[ConfigIssue]:
    machine = gpu_machine(pool.machine_type)
    if machine is None:
        hint = suggest(pool.machine_type, GPU_MACHINES)
        yield ConfigIssue(
            f"{at}.machineType",
            f"a GPU machine type{hint}; known: g2-standard-*, a2-highgpu-*, a2-ultragpu-*, "
            "a3-highgpu-*, a3-megagpu-8g, a3-ultragpu-8g, a4-highgpu-8g, a4x-highgpu-4g",
            pool.machine_type,
        )
        return
    if pool.accelerator_type is not None and pool.accelerator_type != machine.accelerator_type:
        yield ConfigIssue(
            f"{at}.acceleratorType",
            f"'{machine.accelerator_type}', the accelerator {pool.machine_type} carries (or leave it out)",
            pool.accelerator_type,
        )
    if pool.accelerator_count is not None and pool.accelerator_count != machine.gpus_per_node:
        yield ConfigIssue(
            f"{at}.acceleratorCount",
            f"{machine.gpus_per_node}, the GPUs {pool.machine_type} carries (or leave it out)",
            pool.accelerator_count,
        )


def _check_mode(at: str, pool: GpuPoolConfig) -> Iterator[ConfigIssue]:
    mode = pool.provisioning
    if pool.min_nodes > pool.max_nodes:
        yield ConfigIssue(f"{at}.minNodes", f"at most maxNodes ({pool.max_nodes})", pool.min_nodes)
    if mode in _DWS_MODES:
        refused = f"GKE refuses it on a {mode} pool"
        if pool.min_nodes != 0:
            yield ConfigIssue(
                f"{at}.minNodes",
                f"0 ({refused}: capacity comes only from ProvisioningRequests)",
                pool.min_nodes,
            )
        if pool.auto_repair:
            yield ConfigIssue(f"{at}.autoRepair", f"false ({refused})", pool.auto_repair)
        if pool.reservation is not None:
            yield ConfigIssue(
                f"{at}.reservation",
                f"no reservation ({refused}; use provisioning: reservation)",
                pool.reservation,
            )
        if pool.compact_placement and mode == "queued":
            yield ConfigIssue(f"{at}.compactPlacement", f"false ({refused})", pool.compact_placement)
    if mode != "flex-start" and pool.max_run_duration is not None:
        yield ConfigIssue(
            f"{at}.maxRunDuration",
            "no value: only flex-start nodes take a run duration (queued pools get it per "
            "ProvisioningRequest, maxRunDurationSeconds)",
            pool.max_run_duration,
        )
    if mode not in _DWS_MODES:
        if mode == "reservation" and pool.reservation is None:
            yield ConfigIssue(
                f"{at}.reservation",
                "the name of the specific reservation to consume (provisioning: reservation)",
            )
        if mode != "reservation" and pool.reservation is not None:
            yield ConfigIssue(
                f"{at}.reservation", "no value unless provisioning is reservation", pool.reservation
            )
