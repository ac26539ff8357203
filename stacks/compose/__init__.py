"""Turn a validated :class:`StackConfig` into components, in the order one ``pulumi up`` needs.

cluster -> system pool -> GPU pools -> Kubernetes provider -> (operators -> queue objects).
This package is the only place that knows both the config model and the component arguments:
:func:`build` here, one module per layer beside it (``network``, ``schedulers``, ``readiness``,
``queues``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import pulumi

from components.cluster_access import grant_cluster_access, iam_member
from components.gke import GkeCluster, GkeClusterArgs, MaintenanceExclusion, MaintenanceWindow, SystemPoolArgs
from components.gpu_catalog import gpu_machine
from components.gpu_pool import GpuNodePool, GpuNodePoolArgs, GpuSharing
from components.k8s_provider import cluster_provider, kubeconfig_for
from components.node_identity import NodeServiceAccount, NodeServiceAccountArgs, node_account_id
from stacks.checks.gpudirect import compact_placement
from stacks.compose.gateway import build_gateway
from stacks.compose.gpu_operator import GpuOperatorLayer, install_gpu_operator
from stacks.compose.gpudirect import (
    build_vpcs,
    install_gpudirect,
    multi_networking,
    pool_networks,
)
from stacks.compose.identity import build_team_identities
from stacks.compose.monitoring import DashboardLayer, MonitoringLayer, build_dashboards, build_monitoring
from stacks.compose.network import NetworkLayer, build_network
from stacks.compose.queues import QueueLayer, build_queues, has_kueue_objects, workload_needs
from stacks.compose.readiness import readiness_gates
from stacks.compose.schedulers import Schedulers, install_schedulers
from stacks.config import StackConfig
from stacks.config.cluster import SystemPoolConfig, TenantPoolConfig
from stacks.config.maintenance import MaintenanceConfig
from stacks.config.tenancy import skypilot_teams
from stacks.gke_versions import check_channel_default


@dataclass(frozen=True)
class Platform:
    """What later layers (operators, queues) build on."""

    cluster: GkeCluster
    gpu_pools: dict[str, GpuNodePool]
    network: NetworkLayer
    provider: pulumi.ProviderResource
    schedulers: Schedulers
    queues: QueueLayer
    gpu_operator: GpuOperatorLayer | None = None
    kubeconfig: pulumi.Output[str] | None = None
    channel_default: str | None = None
    # Kueue's webhooks serve (the readiness gate), when the cluster declares Kueue objects.
    kueue_ready: pulumi.Resource | None = None
    monitoring: MonitoringLayer | None = None
    dashboards: DashboardLayer | None = None


def team_iam_members(config: StackConfig) -> list[str]:
    """Every team member as an IAM member: they need to reach the cluster, RBAC does the rest."""
    return [
        *(iam_member("group", g) for t in config.teams for g in t.members.groups),
        *(iam_member("user", u) for t in config.teams for u in t.members.users),
    ]


def build(config: StackConfig, project: str) -> Platform:
    """Declare every resource of the stack and export what reviewers and users need.

    With ``multiKueue`` the stack is a manager and its workers (``stacks.compose.multikueue``)."""
    if config.multi_kueue is not None:
        from stacks.compose.multikueue import build_multikueue  # imports this module

        return build_multikueue(config, project).manager
    platform = build_cluster(config, project)
    export_cluster(config, platform)
    return platform


def build_cluster(
    config: StackConfig,
    project: str,
    *,
    prefix: str = "",
    access: bool = True,
    extra_checks: tuple[str, ...] = (),
    fleet_labels: Mapping[str, str] | None = None,
) -> Platform:
    """One cluster and everything on it.  ``prefix`` starts the Pulumi name of every top-level
    resource whose name is not the cluster's own (pools, operators, gates, queues, teams), so a
    second cluster of the same program gets its own URNs ("" keeps a single cluster's names);
    ``access``: grant the teams' project IAM (once per project, not per cluster); ``extra_checks``:
    see :func:`stacks.compose.queues.build_queues`; ``fleet_labels``: register the cluster in the
    project's GKE fleet with these resource labels (None: no fleet membership)."""
    spec = config.cluster
    channel_default = check_channel_default(spec, config.gpu_pools, project)
    nodes = NodeServiceAccount(
        f"{spec.name}-nodes", NodeServiceAccountArgs(project=project, account_id=node_account_id(spec.name))
    )
    cluster_args = GkeClusterArgs(
        project=project,
        name=spec.name,
        location=spec.location,
        node_locations=tuple(spec.node_locations),
        release_channel=spec.release_channel,
        # The user's minimum, else the channel default GKE reported and the program checked
        # (stacks/gke_versions.py); never a fixed version that may have left the channel.
        min_master_version=spec.min_master_version or channel_default,
        master_version_from_channel=spec.min_master_version is None and channel_default is not None,
        deletion_protection=spec.deletion_protection,
        private_nodes=spec.private_nodes,
        master_ipv4_cidr_block=spec.master_ipv4_cidr_block,
        network=spec.network,
        subnetwork=spec.subnetwork,
        system_pool=_cpu_pool(spec.system_pool),
        tenant_pool=_cpu_pool(spec.tenant_pool) if spec.tenant_pool is not None else None,
        master_authorized_networks=None
        if spec.master_authorized_networks is None
        else tuple(spec.master_authorized_networks),
        node_service_account=nodes.email,
        protect=spec.protect,
        maintenance=_maintenance(spec.maintenance),
        security_group=spec.security_group,
        dns_endpoint=spec.dns_endpoint,
        # GKE's managed DCGM exporter where GKE installs the drivers; GPU Operator pools run the
        # operator's own dcgm-exporter (stacks/compose/monitoring.py).
        dcgm=any(p.gpu_stack == "gke" for p in config.gpu_pools),
        dataplane_v2=spec.dataplane_v2,
        multi_networking=multi_networking(spec, config.gpu_pools),
        # GKE's Gateway controller for the SkyPilot servers' Gateway (components.gateway).
        gateway_api=bool(skypilot_teams(config.teams)),
        gcs_fuse=any(
            b.mount
            for t in config.teams
            if t.workload_identity is not None
            for b in t.workload_identity.buckets
        ),
    )
    if fleet_labels is not None:
        cluster_args = replace(cluster_args, fleet=True, resource_labels=dict(fleet_labels))
    cluster = GkeCluster(spec.name, cluster_args)
    network = build_network(config, cluster_args)
    gpudirect_vpcs = build_vpcs(config, project)
    pools: dict[str, GpuNodePool] = {}
    for pool in config.gpu_pools:
        machine = gpu_machine(pool.machine_type)
        assert machine is not None  # config validation rejected unknown machine types
        pools[pool.name] = GpuNodePool(
            f"{prefix}{pool.name}",
            GpuNodePoolArgs(
                project=project,
                cluster_name=cluster.cluster.name,
                location=spec.location,
                name=pool.name,
                machine_type=pool.machine_type,
                accelerator_type=machine.accelerator_type,
                gpus_per_node=machine.gpus_per_node,
                max_nodes=pool.max_nodes,
                min_nodes=pool.min_nodes,
                provisioning=pool.provisioning,
                driver_version=pool.driver_version or "LATEST",
                gpu_stack=pool.gpu_stack,
                sharing=GpuSharing(pool.gpu_sharing.strategy, pool.gpu_sharing.max_shared_clients_per_gpu)
                if pool.gpu_sharing
                else None,
                reservation=pool.reservation,
                auto_repair=pool.auto_repair,
                node_locations=tuple(pool.node_locations),
                disk_size_gb=pool.disk_size_gb,
                max_run_duration=pool.max_run_duration,
                compact_placement=compact_placement(spec, pool),
                service_account=nodes.email,
                network_tags=(cluster_args.node_tag,),
                protect=spec.protect,
                additional_networks=pool_networks(gpudirect_vpcs, pool),
            ),
            opts=pulumi.ResourceOptions(depends_on=[cluster.system_pool]),
        )
    kubeconfig = kubeconfig_for(cluster.cluster, dns_endpoint=spec.dns_endpoint)
    if access:
        grant_cluster_access(project, team_iam_members(config))
    # Operators install through this provider: on private nodes they need NAT to pull images and
    # the webhook firewall for the control plane to reach them, so both come first.
    provider = cluster_provider(
        f"{spec.name}-k8s", cluster.cluster, kubeconfig, depends_on=[cluster.system_pool, *network.resources]
    )
    # Retained objects (the CRDs) are re-created by upsert: they outlive their resources.
    retained_provider = (
        cluster_provider(
            f"{spec.name}-k8s-retained",
            cluster.cluster,
            kubeconfig,
            depends_on=[cluster.system_pool, *network.resources],
            retained_objects=True,
        )
        if config.kueue.enabled or config.kuberay.enabled
        else None
    )
    gpu_operator = install_gpu_operator(config, provider, kubeconfig, prefix=prefix)
    install_gpudirect(config, gpudirect_vpcs, provider)
    schedulers = install_schedulers(
        config,
        provider,
        workload_needs(config),
        cdi=gpu_operator is not None,
        retained_provider=retained_provider,
        prefix=prefix,
    )
    monitoring = build_monitoring(
        provider,
        schedulers,
        gpu_operator.install.release if gpu_operator is not None else None,
        ray_workloads=bool(config.workloads),
        prefix=prefix,
    )
    # The project's dashboard and alert policies (fixed names): once, with the first cluster.
    dashboards = build_dashboards(config, project) if access else None
    gates = readiness_gates(
        kubeconfig,
        schedulers,
        kueue_objects=has_kueue_objects(config),
        kai_objects=bool(config.kai_queues),
        prefix=prefix,
    )
    queues = build_queues(
        config,
        provider,
        schedulers,
        gates,
        gpu_runtime=gpu_operator.runtime_class_ready if gpu_operator else None,
        prefix=prefix,
        extra_checks=extra_checks,
    )
    build_gateway(config, cluster_args, provider, queues, prefix)
    if access:
        # Team Workload Identity is project-level (a Google service account per team): declared
        # once, with the manager (multiKueue refuses it on workers, stacks/checks/multikueue.py).
        build_team_identities(config, project, provider, queues.teams)
    return Platform(
        cluster=cluster,
        gpu_pools=pools,
        network=network,
        provider=provider,
        schedulers=schedulers,
        queues=queues,
        gpu_operator=gpu_operator,
        kubeconfig=kubeconfig,
        channel_default=channel_default,
        kueue_ready=gates.kueue,
        monitoring=monitoring,
        dashboards=dashboards,
    )


def export_cluster(config: StackConfig, platform: Platform) -> None:
    """The single-cluster stack's outputs."""
    spec, cluster, pools = config.cluster, platform.cluster, platform.gpu_pools
    channel_default, kubeconfig = platform.channel_default, platform.kubeconfig
    pulumi.export("clusterName", cluster.cluster.name)
    pulumi.export(
        "gkeVersion",
        {
            "releaseChannel": spec.release_channel,
            "minMasterVersion": spec.min_master_version,
            "channelDefault": channel_default,
        },
    )
    pulumi.export("kubeconfig", kubeconfig)
    pulumi.export(
        "gpuPools",
        {
            name: {
                "machineType": p.machine_type,
                "gpuCapacity": pools[name].gpu_capacity,
                "gpuStack": p.gpu_stack,
            }
            for name, p in ((p.name, p) for p in config.gpu_pools)
        },
    )
    pulumi.export("gpuCapacity", sum(p.gpu_capacity for p in pools.values()))


def _maintenance(config: MaintenanceConfig | None) -> MaintenanceWindow | None:
    if config is None:
        return None
    return MaintenanceWindow(
        days=tuple(config.days),
        start_time=config.start_time,
        hours=config.hours,
        exclusions=tuple(MaintenanceExclusion(e.name, e.start, e.end, e.scope) for e in config.exclusions),
    )


def _cpu_pool(pool: SystemPoolConfig | TenantPoolConfig) -> SystemPoolArgs:
    return SystemPoolArgs(
        name=pool.name,
        machine_type=pool.machine_type,
        min_nodes=pool.min_nodes,
        max_nodes=pool.max_nodes,
        disk_size_gb=pool.disk_size_gb,
    )
