"""Checks of ``gpuPools[].network: gpudirect`` against the machine type and the cluster keys.

From GoogleCloudPlatform/cluster-toolkit v1.95.0:

- ``modules/compute/gke-node-pool/gpu_direct.tf`` ``gpu_direct_settings``: only the machine types
  with GPU NICs have a profile (the table is the pack's ``gpu_batch_policy.gpudirect.profiles``);
- ``modules/scheduler/gke-cluster/main.tf`` preconditions: "'enable_dataplane_v2' cannot be false
  when enabling multi networking" and "'enable_multi_networking' cannot be false when using
  multivpc module, which passes additional_networks";
- ``examples/gke-a3-ultragpu/gke-a3-ultragpu.yaml`` / ``examples/gke-a4/gke-a4.yaml``: the RoCE VPC's
  network profile is zonal (``<zone>-vpc-roce``) and the pool runs in ``zones: [$(vars.zone)]``, so
  an RDMA pool sits in exactly one zone.
"""

from __future__ import annotations

from collections.abc import Iterator

from stacks.config.cluster import ClusterConfig, GpuPoolConfig
from stacks.errors import ConfigIssue
from stacks.quantity import POLICIES_DIR

assert POLICIES_DIR  # importing stacks.quantity put the pack's package on sys.path

from gpu_batch_policy.gpudirect.profiles import PROFILES, profile_for  # noqa: E402
from gpu_batch_policy.model.gke import is_zone  # noqa: E402

CLUSTER_KEY = "gpu-batch:cluster"
POOLS_KEY = "gpu-batch:gpuPools"


def gpudirect_pools(pools: list[GpuPoolConfig]) -> list[GpuPoolConfig]:
    return [p for p in pools if p.network == "gpudirect"]


def pool_zones(cluster: ClusterConfig, pool: GpuPoolConfig) -> list[str]:
    """Where the pool's nodes run: its own zones, else the cluster's, else the zonal cluster's zone."""
    if pool.node_locations:
        return list(pool.node_locations)
    if cluster.node_locations:
        return list(cluster.node_locations)
    return [cluster.location] if is_zone(cluster.location) else []


def check_gpudirect(cluster: ClusterConfig, pools: list[GpuPoolConfig]) -> Iterator[ConfigIssue]:
    direct = gpudirect_pools(pools)
    for index, pool in enumerate(pools):
        if pool.network != "gpudirect":
            continue
        at = f"{POOLS_KEY}[{index}]"
        profile = profile_for(pool.machine_type)
        if profile is None:
            yield ConfigIssue(
                f"{at}.network",
                f"none for {pool.machine_type} (GPUDirect profiles exist for {', '.join(sorted(PROFILES))})",
                pool.network,
            )
            continue
        zones = pool_zones(cluster, pool)
        if profile.needs_roce_zone and len(zones) != 1:
            yield ConfigIssue(
                f"{at}.nodeLocations",
                f"exactly one zone for {profile.stack} (the RoCE network profile <zone>-vpc-roce is zonal)",
                zones,
            )
    if cluster.multi_networking and not cluster.dataplane_v2:
        yield ConfigIssue(
            f"{CLUSTER_KEY}.dataplaneV2", "true: multiNetworking is on, and it needs Dataplane V2", False
        )
    if not direct:
        return
    rdma_zones = {
        z
        for p in direct
        if (prof := profile_for(p.machine_type)) is not None and prof.needs_roce_zone
        for z in pool_zones(cluster, p)
    }
    if len(rdma_zones) > 1:
        yield ConfigIssue(
            f"{POOLS_KEY}[].nodeLocations",
            "one zone for every RDMA pool (they share one RoCE VPC, whose network profile is zonal)",
            sorted(rdma_zones),
        )
    names = ", ".join(p.name for p in direct)
    if cluster.multi_networking is False:
        yield ConfigIssue(
            f"{CLUSTER_KEY}.multiNetworking",
            f"true or unset: GPUDirect pool(s) {names} attach extra NICs, which needs multi-networking",
            False,
        )
    if not cluster.dataplane_v2 and cluster.multi_networking is not True:
        yield ConfigIssue(
            f"{CLUSTER_KEY}.dataplaneV2",
            f"true: GPUDirect pool(s) {names} need multi-networking, which needs Dataplane V2 (cluster-toolkit "
            "derives it; here it is yours to set, as it also turns on team network isolation)",
            cluster.dataplane_v2,
        )
