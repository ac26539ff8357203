"""The GKE cluster and the CPU system pool the operators run on.

What it deliberately does: removes GKE's default node pool (its settings cannot be changed
later without recreating the cluster) and replaces it with a managed, autoscaled CPU
*system pool*.  Kueue, KAI, KubeRay and SkyPilot run there, so no GPU node is ever kept up
just to host an operator, and GKE adds the ``nvidia.com/gpu=present:NoSchedule`` taint to
GPU pools automatically only when such a non-GPU pool exists (reference/kueue.md §8).

What it deliberately does not do: create networks (pass ``network``/``subnetwork``), or pick
a Kubernetes version for you beyond the release channel; a minimum version is only set when
asked, or when queued provisioning needs one (that decision lives in the caller, which knows
the pools).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import MappingProxyType

import pulumi
import pulumi_gcp as gcp

# The scope GKE recommends with a least-privilege node service account: IAM roles, not scopes,
# limit what the nodes may do (components.node_identity); workloads use Workload Identity.
NODE_OAUTH_SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]

# Node-pool inputs the engine keeps from the old state on `pulumi up`.  `initialNodeCount` is
# ForceNew ("Changing this will force recreation of the resource": terraform-provider-google
# google/services/container/resource_container_node_pool.go, schemaNodePool, bridged by
# pulumi-gcp 10.2.0), and the pools derive it from minNodes; without this an edit of
# minNodes would replace the pool and every node with it (prod: a protected pool, so the update
# fails).  The autoscaler owns the node count after creation; cluster-toolkit ignores the same
# field (modules/compute/gke-node-pool/main.tf, lifecycle.ignore_changes).
POOL_IGNORED_INPUTS = ("initialNodeCount",)
# The node label on the system pool; operators select it so they never land on GPU nodes.
SYSTEM_POOL_SELECTOR = {"gpu-batch/pool-role": "system"}
# The taint on the system pool when the stack has a tenant pool: only the platform's operators
# (their chart values carry SYSTEM_POOL_TOLERATIONS) and GKE's own managed components schedule
# there.  GKE's system Deployments (kube-dns, metrics-server, event-exporter ...) tolerate this
# key; cluster-toolkit taints its system pool with it by default and gives Kueue/JobSet the
# matching toleration (GoogleCloudPlatform/cluster-toolkit v1.95.0
# modules/scheduler/gke-cluster/variables.tf ``system_node_pool_taints``,
# modules/management/kubectl-apply/kueue/kueue-helm-values.yaml ``controllerManager.tolerations``),
# and Managed Prometheus' gmp-system operator, collector, rule-evaluator and alertmanager carry
# the toleration (GoogleCloudPlatform/prometheus-engine v0.17.2 manifests/operator.yaml).
# A taint change is an in-place node-pool update, not a replacement (``nodeConfig.taints``:
# "update" in preview/replacement_facts/gcp.json, derived from terraform-provider-google).
# Without a tenant pool the system pool stays untainted: tenant pods without GPUs have no
# other CPU node to run on.
SYSTEM_POOL_TAINT_KEY = "components.gke.io/gke-managed-components"
SYSTEM_POOL_TAINT = gcp.container.NodePoolNodeConfigTaintArgs(
    key=SYSTEM_POOL_TAINT_KEY, value="true", effect="NO_SCHEDULE"
)
# The toleration for it, in the form every chart's ``tolerations`` value takes (core/v1 Toleration).
SYSTEM_POOL_TOLERATIONS: tuple[dict[str, str], ...] = (
    {"key": SYSTEM_POOL_TAINT_KEY, "operator": "Equal", "value": "true", "effect": "NoSchedule"},
)
# The node label on the tenant CPU pool (Ray heads, launchers: tenant pods without GPUs), which
# keeps them off the nodes the operators run on (issue 27).
TENANT_POOL_SELECTOR = {"gpu-batch/pool-role": "tenant"}
# The cluster's datapathProvider for Dataplane V2 (terraform-provider-google
# resource_container_cluster.go: DATAPATH_PROVIDER_UNSPECIFIED, LEGACY_DATAPATH, ADVANCED_DATAPATH).
GATEWAY_API_CHANNEL = "CHANNEL_STANDARD"
ADVANCED_DATAPATH = "ADVANCED_DATAPATH"


@dataclass(frozen=True)
class SystemPoolArgs:
    """The CPU pool for operators and system pods."""

    name: str = "system"
    machine_type: str = "e2-standard-4"
    min_nodes: int = 1
    max_nodes: int = 3
    disk_size_gb: int = 100


@dataclass(frozen=True)
class MaintenanceExclusion:
    name: str
    start: str  # RFC 3339 UTC
    end: str
    scope: str  # NO_UPGRADES, NO_MINOR_UPGRADES or NO_MINOR_OR_NODE_UPGRADES


@dataclass(frozen=True)
class MaintenanceWindow:
    """One recurring window: UTC weekdays (empty: daily), a HH:MM start and a length in hours."""

    days: tuple[str, ...]
    start_time: str
    hours: int
    exclusions: tuple[MaintenanceExclusion, ...] = ()

    # A recurring window is anchored on a past date; only its time of day and recurrence matter
    # (GKE docs, "Configure maintenance windows": --maintenance-window-start/-end/-recurrence).
    ANCHOR_DATE = "2026-01-01"

    def policy(self) -> gcp.container.ClusterMaintenancePolicyArgs:
        start = datetime.fromisoformat(f"{self.ANCHOR_DATE}T{self.start_time}:00+00:00")
        end = start + timedelta(hours=self.hours)
        recurrence = f"FREQ=WEEKLY;BYDAY={','.join(self.days)}" if self.days else "FREQ=DAILY"
        return gcp.container.ClusterMaintenancePolicyArgs(
            recurring_window=gcp.container.ClusterMaintenancePolicyRecurringWindowArgs(
                start_time=start.strftime("%Y-%m-%dT%H:%M:%SZ"),
                end_time=end.strftime("%Y-%m-%dT%H:%M:%SZ"),
                recurrence=recurrence,
            ),
            maintenance_exclusions=[
                gcp.container.ClusterMaintenancePolicyMaintenanceExclusionArgs(
                    exclusion_name=e.name,
                    start_time=e.start,
                    end_time=e.end,
                    exclusion_options=gcp.container.ClusterMaintenancePolicyMaintenanceExclusionExclusionOptionsArgs(
                        scope=e.scope
                    ),
                )
                for e in self.exclusions
            ]
            or None,
        )


@dataclass(frozen=True)
class GkeClusterArgs:
    """Inputs of :class:`GkeCluster`.  Defaults are the dev-friendly ones; prod hardens them."""

    project: str
    name: str
    # A zone (``us-west1-b``: zonal cluster) or a region (``us-west1``: regional cluster).
    location: str
    node_locations: tuple[str, ...] = ()
    release_channel: str = "REGULAR"
    min_master_version: str | None = None
    # True when min_master_version is the channel default the program looked up, not the user's
    # own: then it is set once, at creation, and later runs keep it (see _cluster_ignored).
    master_version_from_channel: bool = False
    deletion_protection: bool = False
    private_nodes: bool = False
    master_ipv4_cidr_block: str = "172.16.0.32/28"
    network: str | None = None
    subnetwork: str | None = None
    system_pool: SystemPoolArgs = SystemPoolArgs()
    # A CPU pool for tenant pods without GPUs; None: none (they share the system pool).
    tenant_pool: SystemPoolArgs | None = None
    # CIDRs allowed to reach the public endpoint; None: not restricted; (): closed to all but
    # Google (GKE docs, how-to/authorized-networks).
    master_authorized_networks: tuple[str, ...] | None = None
    # Google Groups for RBAC: gke-security-groups@<domain> (see _authenticator_groups).
    security_group: str | None = None
    # Only GKE's DNS-based control-plane endpoint, IAM-checked; IP endpoints off (see _endpoints).
    dns_endpoint: bool = False
    # GKE Dataplane V2 (eBPF, Cilium-based), which enforces NetworkPolicy; ForceNew on the
    # cluster (terraform-provider-google resource_container_cluster.go ``datapath_provider``).
    dataplane_v2: bool = False
    # The nodes' service account (components.node_identity); None: the Compute Engine default.
    node_service_account: pulumi.Input[str] | None = None
    # GKE's maintenance policy (see maintenance_policy); None: GKE maintains whenever it chooses.
    maintenance: MaintenanceWindow | None = None
    # GKE's managed Prometheus collection, which PodMonitoring objects need (components/monitoring.py).
    managed_prometheus: bool = True
    # GKE's managed DCGM exporter (``DCGM`` in ``enable_components``); only for GKE-installed drivers.
    dcgm: bool = False
    # GKE multi-networking (enableMultiNetworking): extra node NICs (GPUDirect) need it, and it
    # needs Dataplane V2 (GKE how-to/setup-multinetwork-support-for-pods; cluster-toolkit
    # modules/scheduler/gke-cluster/main.tf derives both the same way).
    multi_networking: bool = False
    # GKE's Gateway API controller, standard channel (``gatewayApiConfig.channel:
    # CHANNEL_STANDARD``; GKE docs how-to/deploying-gateways, "Enable the Gateway API"): it installs
    # the Gateway API CRDs and the ``gke-l7-*`` GatewayClasses.  An in-place update of the cluster:
    # terraform-provider-google resource_container_cluster.go ``gateway_api_config`` is not
    # ForceNew.  False leaves the field unset (GKE's default: disabled).
    gateway_api: bool = False
    # GKE's Cloud Storage FUSE CSI driver add-on (teams[].workloadIdentity.buckets[].mount):
    # terraform-provider-google ``addons_config.gcs_fuse_csi_driver_config.enabled``, an in-place
    # cluster update ("update" in preview/replacement_facts/gcp.json, derived from the provider).
    gcs_fuse: bool = False
    # `protect=True` on the cluster and its pools, so `pulumi destroy` stops before deleting
    # anything (deletionProtection alone only fails on the cluster, after the pools are gone).
    protect: bool = False
    # GKE Fleet membership at creation (``fleet.project``, the cluster's own project) and the
    # cluster's resource labels; a MultiKueue stack with ``credentials: clusterProfile`` sets both
    # (components/multikueue_fleet.py, after gke-fleet-management multikueue-clusterprofile
    # 1-infrastructure/main.tf ``google_container_cluster.hub`` / ``.clusters``).
    fleet: bool = False
    resource_labels: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def node_tag(self) -> str:
        """The network tag on every node of the cluster; firewall rules target it."""
        return f"{self.name}-node"


class GkeCluster(pulumi.ComponentResource):
    """A VPC-native GKE Standard cluster with Workload Identity and shielded nodes."""

    cluster: gcp.container.Cluster
    system_pool: gcp.container.NodePool
    tenant_pool: gcp.container.NodePool | None

    def __init__(self, name: str, args: GkeClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-batch:gke:Cluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, protect=args.protect)
        private = (
            gcp.container.ClusterPrivateClusterConfigArgs(
                enable_private_nodes=True,
                # Keep the public endpoint so CI and `pulumi up` can reach the API server;
                # lock it down with master authorised networks where needed.
                enable_private_endpoint=False,
                master_ipv4_cidr_block=args.master_ipv4_cidr_block,
            )
            if args.private_nodes
            else None
        )
        self.cluster = gcp.container.Cluster(
            f"{name}-cluster",
            name=args.name,
            project=args.project,
            location=args.location,
            node_locations=list(args.node_locations) or None,
            network=args.network,
            subnetwork=args.subnetwork,
            # The default pool is created (GKE requires one) and removed at once in favour of
            # the managed system pool below.
            remove_default_node_pool=True,
            initial_node_count=1,
            release_channel=gcp.container.ClusterReleaseChannelArgs(channel=args.release_channel),
            min_master_version=args.min_master_version,
            deletion_protection=args.deletion_protection,
            workload_identity_config=gcp.container.ClusterWorkloadIdentityConfigArgs(
                workload_pool=f"{args.project}.svc.id.goog"
            ),
            enable_shielded_nodes=True,
            networking_mode="VPC_NATIVE",
            ip_allocation_policy=gcp.container.ClusterIpAllocationPolicyArgs(),
            private_cluster_config=private,
            master_authorized_networks_config=_authorized_networks(args.master_authorized_networks),
            authenticator_groups_config=_authenticator_groups(args.security_group),
            control_plane_endpoints_config=_endpoints(args.dns_endpoint),
            datapath_provider=ADVANCED_DATAPATH if args.dataplane_v2 else None,
            # The throw-away default pool runs as the dedicated node account too, never as the
            # Compute Engine default account (which projects grant Editor) for its short life.
            node_config=gcp.container.ClusterNodeConfigArgs(
                service_account=args.node_service_account, oauth_scopes=NODE_OAUTH_SCOPES
            )
            if args.node_service_account is not None
            else None,
            maintenance_policy=args.maintenance.policy() if args.maintenance is not None else None,
            monitoring_config=monitoring_config(args.managed_prometheus, args.dcgm),
            enable_multi_networking=True if args.multi_networking else None,
            gateway_api_config=gcp.container.ClusterGatewayApiConfigArgs(channel=GATEWAY_API_CHANNEL)
            if args.gateway_api
            else None,
            addons_config=gcp.container.ClusterAddonsConfigArgs(
                gcs_fuse_csi_driver_config=gcp.container.ClusterAddonsConfigGcsFuseCsiDriverConfigArgs(
                    enabled=True
                )
            )
            if args.gcs_fuse
            else None,
            # GKE cost allocation: the billing export labels each workload's cost with its
            # namespace and labels, so the preview's per-team estimate (preview/cost) can later be
            # compared with the bill.  An in-place update, not a replacement (GKE API
            # ClusterUpdate.desiredCostManagementConfig; gcloud `clusters update
            # --enable-cost-allocation`); terraform-provider-google `cost_management_config`.
            cost_management_config=gcp.container.ClusterCostManagementConfigArgs(enabled=True),
            fleet=gcp.container.ClusterFleetArgs(project=args.project) if args.fleet else None,
            resource_labels=dict(args.resource_labels) or None,
            opts=child.merge(pulumi.ResourceOptions(ignore_changes=_cluster_ignored(args))),
        )
        tainted = args.tenant_pool is not None
        self.system_pool = self._cpu_pool(
            name,
            args,
            args.system_pool,
            SYSTEM_POOL_SELECTOR,
            child,
            taints=[SYSTEM_POOL_TAINT] if tainted else None,
        )
        self.tenant_pool = (
            self._cpu_pool(name, args, args.tenant_pool, TENANT_POOL_SELECTOR, child)
            if args.tenant_pool is not None
            else None
        )
        self.register_outputs(
            {
                "cluster_name": self.cluster.name,
                "endpoint": self.cluster.endpoint,
                "system_pool": self.system_pool.name,
            }
        )

    def _cpu_pool(
        self,
        name: str,
        args: GkeClusterArgs,
        pool: SystemPoolArgs,
        labels: dict[str, str],
        child: pulumi.ResourceOptions,
        *,
        taints: list[gcp.container.NodePoolNodeConfigTaintArgs] | None = None,
    ) -> gcp.container.NodePool:
        """An autoscaled CPU pool; ``labels`` tell the system pool from the tenant pool."""
        return gcp.container.NodePool(
            f"{name}-{pool.name}",
            name=pool.name,
            project=args.project,
            cluster=self.cluster.name,
            location=args.location,
            autoscaling=gcp.container.NodePoolAutoscalingArgs(
                total_min_node_count=pool.min_nodes,
                total_max_node_count=pool.max_nodes,
                location_policy="BALANCED",
            ),
            initial_node_count=pool.min_nodes,
            management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
            node_config=gcp.container.NodePoolNodeConfigArgs(
                machine_type=pool.machine_type,
                disk_size_gb=pool.disk_size_gb,
                oauth_scopes=NODE_OAUTH_SCOPES,
                service_account=args.node_service_account,
                tags=[args.node_tag],
                labels=dict(labels),
                taints=taints,
                workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(
                    mode="GKE_METADATA"
                ),
                shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
                    enable_secure_boot=True, enable_integrity_monitoring=True
                ),
            ),
            opts=child.merge(pulumi.ResourceOptions(ignore_changes=list(POOL_IGNORED_INPUTS))),
        )


# GKE's system-component metrics, on by default for every cluster; written out because setting
# ``enable_components`` replaces the list (GKE docs, "Configure collection of system metrics").
SYSTEM_COMPONENTS = "SYSTEM_COMPONENTS"
DCGM_COMPONENT = "DCGM"


def monitoring_config(
    managed_prometheus: bool, dcgm: bool
) -> gcp.container.ClusterMonitoringConfigArgs | None:
    """``monitoringConfig``: managed Prometheus (GMP), and DCGM metrics from GKE's own exporter.

    GKE collects DCGM metrics only with managed Prometheus on and GKE-installed NVIDIA drivers
    (GKE docs, "Collect and view DCGM metrics": ``--monitoring=SYSTEM,DCGM
    --enable-managed-prometheus``); a GPU Operator pool brings its own dcgm-exporter instead, so
    the caller turns ``dcgm`` on only for GKE-driver pools.  Field names: pulumi-gcp 10.2.0
    ``ClusterMonitoringConfigArgs`` (``enable_components`` values include ``SYSTEM_COMPONENTS``
    and ``DCGM``; ``managed_prometheus.enabled``).
    """
    if not managed_prometheus:
        if dcgm:
            raise ValueError(
                "GKE's DCGM metrics need managed Prometheus (monitoringConfig.managedPrometheus)"
            )
        return None
    return gcp.container.ClusterMonitoringConfigArgs(
        enable_components=[SYSTEM_COMPONENTS, *([DCGM_COMPONENT] if dcgm else [])],
        managed_prometheus=gcp.container.ClusterMonitoringConfigManagedPrometheusArgs(enabled=True),
    )


def _authorized_networks(
    cidrs: tuple[str, ...] | None,
) -> gcp.container.ClusterMasterAuthorizedNetworksConfigArgs | None:
    """Master authorized networks: only ``cidrs`` (and Google's own ranges) reach the endpoint."""
    if cidrs is None:
        return None
    return gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
        cidr_blocks=[
            gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(cidr_block=c, display_name=c)
            for c in cidrs
        ],
        gcp_public_cidrs_access_enabled=False,
    )


def _authenticator_groups(
    security_group: str | None,
) -> gcp.container.ClusterAuthenticatorGroupsConfigArgs | None:
    """Google Groups for RBAC (GKE how-to/google-groups-rbac): GKE adds a user's Google Groups
    that are members of ``gke-security-groups@<domain>`` to the request, so RoleBindings with
    Group subjects bind; without it a Group subject matches nobody."""
    if security_group is None:
        return None
    return gcp.container.ClusterAuthenticatorGroupsConfigArgs(security_group=security_group)


def _endpoints(dns_only: bool) -> gcp.container.ClusterControlPlaneEndpointsConfigArgs | None:
    """The DNS-based control-plane endpoint (GKE concepts/network-isolation, "DNS-based
    endpoint"): every request passes Google IAM (``container.clusters.connect``) before the API
    server, from anywhere Google APIs are reachable -- CI with Workload Identity Federation
    credentials included -- while the IP endpoints, public and private, are turned off, so
    nothing is open to 0.0.0.0/0.  Field names: pulumi_gcp 10.2.0
    ``ClusterControlPlaneEndpointsConfig{DnsEndpointConfig,IpEndpointsConfig}Args``."""
    if not dns_only:
        return None
    return gcp.container.ClusterControlPlaneEndpointsConfigArgs(
        dns_endpoint_config=gcp.container.ClusterControlPlaneEndpointsConfigDnsEndpointConfigArgs(
            allow_external_traffic=True
        ),
        ip_endpoints_config=gcp.container.ClusterControlPlaneEndpointsConfigIpEndpointsConfigArgs(
            enabled=False
        ),
    )


def _cluster_ignored(args: GkeClusterArgs) -> list[str]:
    """Cluster inputs the engine keeps from the old state on `pulumi up`.

    * ``nodeConfig`` configures only the default pool, which the cluster removes at creation
      (``remove_default_node_pool``); it is ForceNew (terraform-provider-google
      resource_container_cluster.go, ``node_config``), so a change there must never replace a
      running cluster.
    * ``minMasterVersion`` when it is the channel default the program looked up
      (stacks/gke_versions.py): re-derived on every run, a newer default would raise the
      minimum and the provider upgrades the master at once when its version is lower
      (resource_container_cluster.go, update of ``min_master_version``), outside any
      maintenance window.  Set once at creation, the release channel upgrades the master in
      its maintenance windows instead.  A version the user writes in the config is applied.
    """
    return ["nodeConfig", *(["minMasterVersion"] if args.master_version_from_channel else [])]
