"""Config of the GKE cluster and its GPU node pools (keys ``gpu-batch:cluster``, ``gpu-batch:gpuPools``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from stacks.base import ConfigModel, DnsLabel, NodeCount, NonEmptyStr, PositiveInt, PositiveNodeCount
from stacks.config.maintenance import MaintenanceConfig
from stacks.errors import pattern

# The first GKE version whose cluster autoscaler serves queued-provisioning ProvisioningRequests
# on Standard clusters (GKE docs, concepts/cluster-autoscaler; reference/kueue.md §7).
QUEUED_PROVISIONING_MIN_VERSION = "1.28.3-gke.1098000"
# Flex-start with queued provisioning, what a queued pool is (GKE how-to/provisioningrequest;
# reference/kueue.md §7).
QUEUED_FLEX_START_MIN_VERSION = "1.32.2-gke.1652000"


class SystemPoolConfig(ConfigModel):
    """The CPU pool the operators run on."""

    name: DnsLabel = Field("system", description="Node pool name.")
    machine_type: NonEmptyStr = Field("e2-standard-4", description="Machine type of the CPU nodes.")
    min_nodes: NodeCount = Field(1, description="Autoscaling minimum (whole cluster).")
    max_nodes: PositiveNodeCount = Field(3, description="Autoscaling maximum (whole cluster).")
    disk_size_gb: PositiveInt = Field(100, description="Boot disk size in GB.")


class TenantPoolConfig(ConfigModel):
    """A CPU pool for tenant pods without GPUs (Ray heads, launchers), away from the operators.

    The system pool runs the operators (KubeRay's token may create pods and read Secrets in every
    namespace), so a tenant pod next to them is one node escape from the cluster (issue 27).  A
    ResourceFlavor with ``pool: <this name>`` steers CPU-only pod sets here.
    """

    name: DnsLabel = Field("tenant-cpu", description="Node pool name; a flavor's pool names it.")
    machine_type: NonEmptyStr = Field("e2-standard-4", description="Machine type of the CPU nodes.")
    min_nodes: NodeCount = Field(0, description="Autoscaling minimum (whole cluster).")
    max_nodes: PositiveNodeCount = Field(3, description="Autoscaling maximum (whole cluster).")
    disk_size_gb: PositiveInt = Field(100, description="Boot disk size in GB.")


class ClusterConfig(ConfigModel):
    """The GKE cluster."""

    name: DnsLabel = Field(description="GKE cluster name.")
    location: NonEmptyStr = Field(
        pattern=pattern(
            r"^[a-z]+-[a-z]+[0-9]+(-[a-z])?$", "a GCP zone such as us-west1-b or region such as us-west1"
        ),
        description="A zone (us-west1-b: zonal cluster) or a region (us-west1: regional cluster).",
    )
    node_locations: list[NonEmptyStr] = Field(
        default_factory=list, description="Zones for the nodes; default: the cluster's location."
    )
    release_channel: Literal["RAPID", "REGULAR", "STABLE", "EXTENDED"] = Field(
        "REGULAR", description="GKE release channel."
    )
    min_master_version: NonEmptyStr | None = Field(
        None,
        description=f"Minimum control-plane version, e.g. 1.33; at least {QUEUED_PROVISIONING_MIN_VERSION} with queued pools.",
    )
    deletion_protection: bool = Field(
        False, description="Refuse `pulumi destroy` of the cluster (on in prod)."
    )
    private_nodes: bool = Field(
        False, description="Nodes get no public IP (private cluster, public endpoint)."
    )
    master_ipv4_cidr_block: NonEmptyStr = Field(
        "172.16.0.32/28", description="/28 range of the control plane when privateNodes is on."
    )
    master_authorized_networks: list[NonEmptyStr] | None = Field(
        None,
        description="CIDRs that may reach the public control-plane endpoint; [] = closed to all but "
        "Google; unset = open to all.",
    )
    security_group: NonEmptyStr | None = Field(
        None,
        pattern=pattern(
            r"^gke-security-groups@[A-Za-z0-9.-]+$",
            "gke-security-groups@<your domain> (GKE requires that name)",
        ),
        description="Google Groups for RBAC: gke-security-groups@<domain>, so team groups in RoleBindings bind.",
    )
    dns_endpoint: bool = Field(
        False,
        description="Reach the control plane only through GKE's DNS-based endpoint (IAM-checked); IP endpoints off.",
    )
    dataplane_v2: bool = Field(
        False,
        description="GKE Dataplane V2 (datapathProvider: ADVANCED_DATAPATH), which enforces NetworkPolicies; "
        "the stack then isolates each team namespace with them. Changing it replaces the cluster.",
    )
    protect: bool = Field(
        False,
        description="Pulumi protect on the cluster and every node pool, so `pulumi destroy` deletes nothing (on in prod).",
    )
    network: NonEmptyStr | None = Field(
        None, description="VPC network; default: the project's default network."
    )
    subnetwork: NonEmptyStr | None = Field(
        None, description="Subnetwork; default: the network's subnet in the region."
    )
    existing_nat: NonEmptyStr | None = Field(
        None,
        description="A Cloud NAT the network's owners run for this subnetwork (Shared VPC, organisation "
        "networks); the stack then creates no Router/NAT. List it for the pack as "
        '{"kind": "RouterNat", "name": ...} under externalObjects.',
    )
    existing_webhook_firewall: NonEmptyStr | None = Field(
        None,
        description="A firewall rule the network's owners run that opens the webhook ports from the "
        "control plane; the stack then creates none. List it for the pack as "
        '{"kind": "Firewall", "name": ...} under externalObjects.',
    )
    multi_networking: bool | None = Field(
        None,
        description="GKE multi-networking (enableMultiNetworking), which extra node NICs need; "
        "default: on when a GPU pool has network: gpudirect (cluster-toolkit gke-cluster derives it "
        "from additional networks). Needs dataplaneV2: true.",
    )
    maintenance: MaintenanceConfig | None = Field(
        None,
        description="Recurring maintenance window and exclusions (see maintenance.* keys); unset: GKE "
        "maintains whenever it chooses.",
    )
    system_pool: SystemPoolConfig = Field(
        default_factory=lambda: SystemPoolConfig.model_validate({}),
        description="The CPU system pool (see systemPool.* keys).",
    )
    tenant_pool: TenantPoolConfig | None = Field(
        None,
        description="A CPU pool for tenant pods without GPUs (see tenantPool.* keys), so a flavor can "
        "keep Ray heads off the system pool where the operators run; unset: no such pool.",
    )


ProvisioningMode = Literal["queued", "flex-start", "on-demand", "spot", "reservation"]
_NAME = r"[a-z]([-a-z0-9]*[a-z0-9])?"
# GCE reservation names; a block / sub-block as GKE's reservation affinity takes them
# (cluster-toolkit gke-node-pool reservation_definitions.tf: "<name>/reservationBlocks/<block>").
RESERVATION_PATTERN = rf"^{_NAME}(/reservationBlocks/{_NAME}(/reservationSubBlocks/{_NAME})?)?$"
GpuStack = Literal["gke", "gpu-operator"]


class GpuSharingConfig(ConfigModel):
    """GKE GPU sharing on one pool (``guestAccelerators[].gpuSharingConfig``)."""

    strategy: Literal["TIME_SHARING", "MPS"] = Field(
        description="TIME_SHARING (GKE >= 1.23.7-gke.1400) or MPS (GKE >= 1.27.7-gke.1088000)."
    )
    max_shared_clients_per_gpu: PositiveInt = Field(
        description="Containers that may share one physical GPU (2 to 48)."
    )


class GpuPoolConfig(ConfigModel):
    """One GPU node pool."""

    name: DnsLabel = Field(description="Node pool name; Kueue flavors select the pool by it.")
    machine_type: NonEmptyStr = Field(description="A GPU machine type, e.g. g2-standard-4, a3-highgpu-8g.")
    accelerator_type: NonEmptyStr | None = Field(
        None, description="Accelerator type; default and only allowed value: the machine type's."
    )
    accelerator_count: PositiveInt | None = Field(
        None, description="GPUs per node; default and only allowed value: the machine type's."
    )
    driver_version: Literal["DEFAULT", "LATEST", "INSTALLATION_DISABLED"] | None = Field(
        None,
        description="GPU driver GKE installs; default LATEST, or INSTALLATION_DISABLED (the only "
        "allowed value) with gpuStack: gpu-operator.",
    )
    gpu_stack: GpuStack = Field(
        "gke",
        description="Who gives pods the GPUs: gke (GKE's driver and device plugin) or gpu-operator "
        "(NVIDIA GPU Operator on Ubuntu nodes; needed for KAI gpu-fraction / gpu-memory pods).",
    )
    gpu_sharing: GpuSharingConfig | None = Field(
        None,
        description="GKE's own GPU sharing (gke pools only): strategy TIME_SHARING or MPS and "
        "maxSharedClientsPerGpu; each GPU then counts as that many nvidia.com/gpu.",
    )
    provisioning: ProvisioningMode = Field(
        "queued", description="queued (DWS queued provisioning), flex-start, on-demand, spot or reservation."
    )
    min_nodes: NodeCount = Field(0, description="Autoscaling minimum; must be 0 for queued and flex-start.")
    max_nodes: PositiveNodeCount = Field(description="Autoscaling maximum (whole pool).")
    reservation: NonEmptyStr | None = Field(
        None,
        pattern=pattern(
            RESERVATION_PATTERN,
            "a reservation name, or NAME/reservationBlocks/BLOCK[/reservationSubBlocks/SUBBLOCK]",
        ),
        description="Reservation name, or one block (NAME/reservationBlocks/BLOCK) or sub-block "
        "(.../reservationSubBlocks/SUBBLOCK) of it, as cluster-toolkit and xpk write them; a block needs "
        "nodeLocations. Only with provisioning: reservation.",
    )
    auto_repair: bool | None = Field(
        None, description="Node auto-repair; default on, and GKE requires it off for queued/flex-start."
    )
    compact_placement: bool | None = Field(
        None,
        description="COMPACT placement policy. Default: on for network: gpudirect pools where GKE allows it "
        "(one zone, not queued, flex-start only on a3-ultragpu-/a4-/h4d-) and that consume no reservation "
        "(GCE places a dense reservation itself); off otherwise. true where GKE refuses it is an error.",
    )
    max_run_duration: NonEmptyStr | None = Field(
        None,
        pattern=pattern(r"^[0-9]+s$", "a duration in seconds such as 86400s"),
        description="flex-start only: node lifetime, e.g. 86400s.",
    )
    node_locations: list[NonEmptyStr] = Field(default_factory=list, description="Zones for this pool.")
    disk_size_gb: PositiveInt = Field(200, description="Boot disk size in GB.")
    network: Literal["none", "gpudirect"] = Field(
        "none",
        description="gpudirect: the machine type's GPUDirect stack (a3-highgpu-8g TCPX, 4 extra VPCs; "
        "a3-megagpu-8g TCPXO, 8 VPCs MTU 8244; a3-ultragpu-8g / a4-highgpu-8g RDMA, 1 gVNIC VPC + a "
        "RoCE VPC with 8 subnets) with its Networks and NCCL DaemonSets, as GKE's GPUDirect how-tos and "
        "cluster-toolkit's gke-a3-megagpu / gke-a3-ultragpu / gke-a4 blueprints set them up.",
    )
