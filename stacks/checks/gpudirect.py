"""Checks of ``gpuPools[].network: gpudirect`` against the machine type and the cluster keys.

From GoogleCloudPlatform/cluster-toolkit v1.95.0:

- ``modules/compute/gke-node-pool/gpu_direct.tf`` ``gpu_direct_settings``: only the machine types
  with GPU NICs have a profile (the table is the pack's ``gpu_batch_policy.facts.gpudirect.profiles``);
- ``modules/scheduler/gke-cluster/main.tf`` preconditions: "'enable_dataplane_v2' cannot be false
  when enabling multi networking" and "'enable_multi_networking' cannot be false when using
  multivpc module, which passes additional_networks";
- ``examples/gke-a3-ultragpu/gke-a3-ultragpu.yaml`` / ``examples/gke-a4/gke-a4.yaml``: the RoCE VPC's
  network profile is zonal (``<zone>-vpc-roce``) and the pool runs in ``zones: [$(vars.zone)]``, so
  an RDMA pool sits in exactly one zone.
"""

from __future__ import annotations

from collections.abc import Iterator

from stacks.config import StackConfig
from stacks.config.cluster import ClusterConfig, GpuPoolConfig
from stacks.config.workloads import WorkloadConfig
from stacks.errors import ConfigIssue
from stacks.quantity import POLICIES_DIR

assert POLICIES_DIR  # importing stacks.quantity put the pack's package on sys.path

from gpu_batch_policy.facts.gpudirect.profiles import PROFILES, GpuDirectProfile, profile_for  # noqa: E402
from gpu_batch_policy.facts.gpudirect.wiring import single_profile  # noqa: E402
from gpu_batch_policy.facts.model.gke import is_zone  # noqa: E402
from gpu_batch_policy.facts.tas.placement import compact_refusal  # noqa: E402

CLUSTER_KEY = "gpu-batch:cluster"
POOLS_KEY = "gpu-batch:gpuPools"
TEAMS_KEY = "gpu-batch:teams"
STACK_REFUSED = {
    "a4x-highgpu-4g": "none for a4x-highgpu-4g: cluster-toolkit's gke-a4x blueprint also needs a HIGH_THROUGHPUT "
    "workload policy (accelerator topology 1x72), arm64 tolerations and IMEX ComputeDomain claims, which "
    "gpu-batch does not declare (the pack judges A4X programs with the profile)"
}
"""Machine types with a pack profile that the stack cannot yet build completely."""
GPU = "nvidia.com/gpu"


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
                f"none for {pool.machine_type} (GPUDirect profiles exist for "
                f"{', '.join(sorted(set(PROFILES) - set(STACK_REFUSED)))})",
                pool.network,
            )
            continue
        if profile.machine_type in STACK_REFUSED:
            yield ConfigIssue(f"{at}.network", STACK_REFUSED[profile.machine_type], pool.network)
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


def workload_profile(config: StackConfig, workload: WorkloadConfig) -> GpuDirectProfile | None:
    """The GPUDirect profile of every pool a Kueue workload's GPU pods may land on; None when any
    of them is a plain pool, the profiles differ, or the workload is not Kueue's.

    Kueue injects the admitted flavor's node labels into the pod (kueue v0.19.2 ``pkg/podset``), and
    a flavor of the team's ClusterQueue covering ``nvidia.com/gpu`` is the only way a GPU pod gets
    in, so those flavors' GPU pools are where it lands (a flavor on the system or tenant pool has no
    GPUs) -- the same set the pack's ``gke-gpudirect-pod-wiring`` derives from the rendered objects."""
    if workload.scheduler != "kueue":
        return None
    team = next((t for t in config.teams if t.name == workload.team), None)
    cq = next((q for q in config.kueue_queues.cluster_queues if team and q.name == team.cluster_queue), None)
    if cq is None:
        return None
    flavors = {f.name: f for f in config.kueue_queues.resource_flavors}
    pools = {p.name: p for p in config.gpu_pools}
    names = {f.name for g in cq.resource_groups if GPU in g.covered_resources for f in g.flavors}
    profiles: list[GpuDirectProfile | None] = []
    for name in sorted(names):
        flavor = flavors.get(name)
        if flavor is None or flavor.pool is None:
            return None  # node labels only: which nodes they select is not known here
        pool = pools.get(flavor.pool)
        if pool is None:
            continue  # the system or tenant CPU pool: no GPUs, so no GPU pod lands there
        profiles.append(profile_for(pool.machine_type) if pool.network == "gpudirect" else None)
    return single_profile(profiles)


def check_gpudirect_workloads(config: StackConfig) -> Iterator[ConfigIssue]:
    """A workload wired for GPUDirect needs a privileged namespace: Google's wiring mounts hostPath
    volumes (and adds NET_ADMIN to the TCPX/TCPXO RxDM sidecar), which Pod Security ``baseline``
    refuses (kubernetes pod-security-admission ``check_hostPathVolumes.go``, ``check_capabilities_baseline.go``)."""
    teams = {t.name: (i, t) for i, t in enumerate(config.teams)}
    for workload in config.workloads:
        if not any(g.gpu for g in workload.worker_groups) or workload.team not in teams:
            continue
        profile = workload_profile(config, workload)
        index, team = teams[workload.team]
        if profile is not None and team.pod_security != "privileged":
            yield ConfigIssue(
                f"{TEAMS_KEY}[{index}].podSecurity",
                f"privileged: workload {workload.name} runs on GPUDirect-{profile.stack} nodes, and "
                "Google's pod wiring mounts hostPath volumes baseline refuses",
                team.pod_security,
            )


def _compact_refusal(cluster: ClusterConfig, pool: GpuPoolConfig) -> str | None:
    return compact_refusal(
        pool.machine_type,
        queued=pool.provisioning == "queued",
        flex_start=pool.provisioning == "flex-start",
        zones=len(pool_zones(cluster, pool)),  # none known: cluster-toolkit refuses (zones must be one)
    )


def compact_placement(cluster: ClusterConfig, pool: GpuPoolConfig) -> bool:
    """Whether the pool gets ``placementPolicy.type: COMPACT``: as written, else on for a GPUDirect
    pool where GKE allows it (:mod:`gpu_batch_policy.facts.tas.placement`) that consumes no reservation
    (cluster-toolkit's reservation blueprints, ``examples/gke-a3-ultragpu``, ``gke-a4``, set no
    placement policy: GCE already places a dense reservation's blocks)."""
    if pool.compact_placement is not None:
        return pool.compact_placement
    return (
        pool.network == "gpudirect" and pool.reservation is None and _compact_refusal(cluster, pool) is None
    )


def check_compact_placement(cluster: ClusterConfig, pools: list[GpuPoolConfig]) -> Iterator[ConfigIssue]:
    """``compactPlacement: true`` where GKE refuses it (queued pools: ``stacks.checks.cluster``)."""
    for index, pool in enumerate(pools):
        if pool.compact_placement is not True or pool.provisioning == "queued":
            continue
        refusal = _compact_refusal(cluster, pool)
        if refusal is not None:
            yield ConfigIssue(f"{POOLS_KEY}[{index}].compactPlacement", f"false ({refusal})", True)
