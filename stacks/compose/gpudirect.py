"""The GPUDirect layer of a stack: extra VPCs before the pools, Networks and DaemonSets after the
provider (see :mod:`components.gpudirect`).  Only pools with ``network: gpudirect`` take part."""

from __future__ import annotations

import pulumi

from components.gpudirect.cluster_objects import GpuDirectClusterObjects
from components.gpudirect.vpcs import GpuDirectVpcs, GpuDirectVpcsArgs
from components.network import region_of
from stacks.checks.gpudirect import gpudirect_pools, pool_zones
from stacks.config import StackConfig
from stacks.config.cluster import ClusterConfig, GpuPoolConfig
from stacks.quantity import POLICIES_DIR

assert POLICIES_DIR

from gpu_batch_policy.facts.gpudirect.profiles import GpuDirectProfile, profile_for  # noqa: E402


def _profiles(config: StackConfig) -> list[tuple[GpuPoolConfig, GpuDirectProfile]]:
    found = []
    for pool in gpudirect_pools(config.gpu_pools):
        profile = profile_for(pool.machine_type)
        assert profile is not None  # stacks.checks.gpudirect refused the pool otherwise
        found.append((pool, profile))
    return found


def multi_networking(cluster: ClusterConfig, pools: list[GpuPoolConfig]) -> bool:
    """The user's ``multiNetworking``, else on exactly when a pool is GPUDirect (cluster-toolkit
    gke-cluster ``derived_enable_multi_networking``)."""
    return cluster.multi_networking if cluster.multi_networking is not None else bool(gpudirect_pools(pools))


def build_vpcs(config: StackConfig, project: str) -> GpuDirectVpcs | None:
    """One set of extra VPCs for every GPUDirect pool; None without any."""
    profiles = _profiles(config)
    if not profiles:
        return None
    rdma_zones = sorted(
        {z for pool, p in profiles if p.needs_roce_zone for z in pool_zones(config.cluster, pool)}
    )
    return GpuDirectVpcs(
        f"{config.cluster.name}-gpudirect",
        GpuDirectVpcsArgs(
            project=project,
            cluster_name=config.cluster.name,
            region=region_of(config.cluster.location),
            zone=rdma_zones[0] if rdma_zones else None,
            profiles=tuple(p for _, p in profiles),
        ),
    )


def pool_networks(
    vpcs: GpuDirectVpcs | None, pool: GpuPoolConfig
) -> tuple[tuple[pulumi.Input[str], pulumi.Input[str]], ...]:
    """(VPC, subnet) of each extra NIC of ``pool``, in NIC order; none for a plain pool."""
    profile = profile_for(pool.machine_type) if pool.network == "gpudirect" else None
    if vpcs is None or profile is None:
        return ()
    return tuple((a.network, a.subnetwork) for a in vpcs.attachments_for(profile))


def install_gpudirect(
    config: StackConfig, vpcs: GpuDirectVpcs | None, provider: pulumi.ProviderResource
) -> GpuDirectClusterObjects | None:
    """The Networks of every extra NIC in use and the DaemonSets of every profile in use."""
    profiles = _profiles(config)
    if vpcs is None or not profiles:
        return None
    manifests = [m for _, p in profiles for m in p.manifests]
    pulumi.export(
        "gpuDirect",
        {pool.name: {"stack": p.stack, "nics": p.nic_count} for pool, p in profiles},
    )
    return GpuDirectClusterObjects(
        f"{config.cluster.name}-gpudirect",
        tuple(vpcs.attachments.values()),
        manifests,
        opts=pulumi.ResourceOptions(provider=provider),
    )
