"""A GPU node pool, in one of the provisioning modes GKE offers.

The mode decides everything GKE is strict about, so callers choose a mode rather than a bag
of flags:

- ``queued``: Dynamic Workload Scheduler "flex-start with queued provisioning".  Nodes only ever
  come from ProvisioningRequests (Kueue's provisioning admission check), all at once, in one zone.
  GKE's how-to (cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest, "Create a
  node pool") requires *both* ``--enable-queued-provisioning`` and ``--flex-start``, as
  cluster-toolkit (``modules/compute/gke-node-pool``: ``enable_queued_provisioning`` with
  ``enable_flex_start``) and xpk (``src/xpk/core/capacity.py``: ``--flex-start`` plus
  ``--enable-queued-provisioning``) do; so a queued pool sets ``nodeConfig.flexStart`` too.
  GKE requires autoscaling with total min 0, 0 initial nodes, location policy ANY, no
  reservation, no spot, no compact placement and auto-repair off (reference/kueue.md §8).
- ``flex-start``: DWS flex-start without queueing: same no-reservation / no-spot /
  no-auto-repair rules, nodes scale from 0.
- ``on-demand``, ``spot``, ``reservation``: ordinary autoscaled pools; ``reservation``
  consumes one named specific reservation.

Who gives pods the GPUs (``gpu_stack``, helpers :func:`gpu_stack_labels` / :func:`_accelerator`):

- ``gke``: GKE installs ``driver_version`` and runs its device plugin; ``sharing`` optionally turns
  on GKE's time-sharing or MPS (``gpuSharingConfig``), each GPU then advertised as
  ``max_shared_clients_per_gpu`` ``nvidia.com/gpu``.
- ``gpu-operator``: the NVIDIA GPU Operator (``components.gpu_operator``) installs driver, toolkit
  and device plugin.  GKE must install no driver (``INSTALLATION_DISABLED``) and skip its device
  plugin (label ``gke-no-default-nvidia-gpu-device-plugin=true``), as NVIDIA's GKE page requires
  (NVIDIA/cloud-native-docs ``gpu-operator/google-gke.rst``); nodes run ``UBUNTU_CONTAINERD``,
  the image NVIDIA's Driver Manager route needs (same page, "Using NVIDIA Driver Manager").
  Secure Boot is off on these nodes: the driver container builds and loads NVIDIA's kernel
  module on the node, and a module not signed by a key in the VM's UEFI db is refused under
  Secure Boot (GKE-managed drivers are signed by Google, so ``gke`` pools keep it on).

Every GPU pool carries the ``nvidia.com/gpu=present:NoSchedule`` taint explicitly (GKE only
adds it itself when a non-GPU pool already exists, and never retroactively), so nothing that
does not ask for a GPU lands on a GPU node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pulumi
import pulumi_gcp as gcp

from components.gke import NODE_OAUTH_SCOPES, POOL_IGNORED_INPUTS

ProvisioningMode = Literal["queued", "flex-start", "on-demand", "spot", "reservation"]
GpuStack = Literal["gke", "gpu-operator"]

GPU_TAINT_KEY = "nvidia.com/gpu"
GPU_TAINT_VALUE = "present"
# Node labels GKE sets on every node; Kueue ResourceFlavors select pools with them.
NODEPOOL_LABEL = "cloud.google.com/gke-nodepool"
ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
# GKE skips its GPU device plugin DaemonSet on nodes with this label (google-gke.rst).
NO_GKE_DEVICE_PLUGIN_LABEL = "gke-no-default-nvidia-gpu-device-plugin"
DRIVER_DISABLED = "INSTALLATION_DISABLED"
OPERATOR_IMAGE_TYPE = "UBUNTU_CONTAINERD"


@dataclass(frozen=True)
class GpuSharing:
    """GKE's own GPU sharing: ``TIME_SHARING`` or ``MPS``, and containers per physical GPU."""

    strategy: Literal["TIME_SHARING", "MPS"]
    max_shared_clients_per_gpu: int


@dataclass(frozen=True)
class GpuNodePoolArgs:
    """Inputs of :class:`GpuNodePool`; validated by the stack config before they get here."""

    project: str
    cluster_name: pulumi.Input[str]
    location: str
    name: str
    machine_type: str
    accelerator_type: str
    gpus_per_node: int
    max_nodes: int
    provisioning: ProvisioningMode = "queued"
    min_nodes: int = 0
    driver_version: str = "LATEST"
    reservation: str | None = None
    node_locations: tuple[str, ...] = ()
    disk_size_gb: int = 200
    # Only for flex-start / queued pools: how long a node may live, e.g. "86400s".
    max_run_duration: str | None = None
    compact_placement: bool = False
    # None: the mode's default (off for DWS pools, where GKE refuses it; on otherwise).
    auto_repair: bool | None = None
    # The nodes' service account (None: Compute Engine default) and network tags.
    service_account: pulumi.Input[str] | None = None
    network_tags: tuple[str, ...] = ()
    protect: bool = False
    gpu_stack: GpuStack = "gke"
    sharing: GpuSharing | None = None
    # GPUDirect: the extra NICs, as (VPC, subnet) in NIC order (components.gpudirect.vpcs); each
    # becomes one ``networkConfig.additionalNodeNetworkConfigs`` entry (cluster-toolkit
    # modules/compute/gke-node-pool/main.tf ``additional_node_network_configs``).
    additional_networks: tuple[tuple[pulumi.Input[str], pulumi.Input[str]], ...] = ()


class GpuNodePool(pulumi.ComponentResource):
    """One GPU node pool; exports its GPU capacity (max nodes x GPUs per node)."""

    node_pool: gcp.container.NodePool
    gpu_capacity: int

    def __init__(self, name: str, args: GpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-batch:gke:GpuNodePool", name, None, opts)
        dws = args.provisioning in ("queued", "flex-start")
        # In nvidia.com/gpu as the pool advertises them (GKE sharing: N per physical GPU).
        self.gpu_capacity = (
            args.max_nodes
            * args.gpus_per_node
            * (args.sharing.max_shared_clients_per_gpu if args.sharing else 1)
        )
        self.node_pool = gcp.container.NodePool(
            f"{name}-pool",
            name=args.name,
            project=args.project,
            cluster=args.cluster_name,
            location=args.location,
            node_locations=list(args.node_locations) or None,
            # DWS pools start empty: capacity arrives only through ProvisioningRequests.
            initial_node_count=0 if dws else args.min_nodes,
            autoscaling=gcp.container.NodePoolAutoscalingArgs(
                total_min_node_count=0 if dws else args.min_nodes,
                total_max_node_count=args.max_nodes,
                # ANY is required for DWS (BALANCED is unsupported) and helps spot find capacity.
                location_policy="ANY" if dws or args.provisioning == "spot" else "BALANCED",
            ),
            queued_provisioning=gcp.container.NodePoolQueuedProvisioningArgs(enabled=True)
            if args.provisioning == "queued"
            else None,
            management=gcp.container.NodePoolManagementArgs(
                # GKE: "repairs could disrupt workloads" on DWS nodes, so it refuses auto-repair.
                auto_repair=(not dws) if args.auto_repair is None else args.auto_repair,
                auto_upgrade=True,
            ),
            placement_policy=gcp.container.NodePoolPlacementPolicyArgs(type="COMPACT")
            if args.compact_placement
            else None,
            node_config=self._node_config(args),
            network_config=gcp.container.NodePoolNetworkConfigArgs(
                additional_node_network_configs=[
                    gcp.container.NodePoolNetworkConfigAdditionalNodeNetworkConfigArgs(
                        network=n, subnetwork=s
                    )
                    for n, s in args.additional_networks
                ]
            )
            if args.additional_networks
            else None,
            opts=pulumi.ResourceOptions(
                parent=self, protect=args.protect, ignore_changes=list(POOL_IGNORED_INPUTS)
            ),
        )
        self.register_outputs({"name": self.node_pool.name, "gpu_capacity": self.gpu_capacity})

    @staticmethod
    def _node_config(args: GpuNodePoolArgs) -> gcp.container.NodePoolNodeConfigArgs:
        return gcp.container.NodePoolNodeConfigArgs(
            machine_type=args.machine_type,
            disk_size_gb=args.disk_size_gb,
            oauth_scopes=NODE_OAUTH_SCOPES,
            service_account=args.service_account,
            tags=list(args.network_tags) or None,
            guest_accelerators=[_accelerator(args)],
            image_type=OPERATOR_IMAGE_TYPE if args.gpu_stack == "gpu-operator" else None,
            reservation_affinity=_reservation_affinity(args),
            spot=True if args.provisioning == "spot" else None,
            # GKE's queued-provisioning how-to creates the pool with both --enable-queued-provisioning
            # and --flex-start; leaving flexStart unset lets GKE's own value differ from the
            # program's and the next `up` plan a pool replacement (issue 10 #6).
            flex_start=True if args.provisioning in ("flex-start", "queued") else None,
            max_run_duration=args.max_run_duration,
            taints=[
                gcp.container.NodePoolNodeConfigTaintArgs(
                    key=GPU_TAINT_KEY, value=GPU_TAINT_VALUE, effect="NO_SCHEDULE"
                )
            ],
            labels={"gpu-batch/pool-role": "gpu", **gpu_stack_labels(args.gpu_stack)},
            workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(
                mode="GKE_METADATA"
            ),
            shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
                enable_secure_boot=args.gpu_stack == "gke", enable_integrity_monitoring=True
            ),
            gvnic=gcp.container.NodePoolNodeConfigGvnicArgs(enabled=True),
        )


def gpu_stack_labels(gpu_stack: GpuStack) -> dict[str, str]:
    """Node labels the GPU stack needs: GKE's device plugin off under the GPU Operator."""
    return {NO_GKE_DEVICE_PLUGIN_LABEL: "true"} if gpu_stack == "gpu-operator" else {}


def _accelerator(args: GpuNodePoolArgs) -> gcp.container.NodePoolNodeConfigGuestAcceleratorArgs:
    """The GPUs, GKE's driver (none under the GPU Operator) and GKE's optional sharing."""
    driver = DRIVER_DISABLED if args.gpu_stack == "gpu-operator" else args.driver_version
    return gcp.container.NodePoolNodeConfigGuestAcceleratorArgs(
        type=args.accelerator_type,
        count=args.gpus_per_node,
        gpu_driver_installation_config=gcp.container.NodePoolNodeConfigGuestAcceleratorGpuDriverInstallationConfigArgs(
            gpu_driver_version=driver
        ),
        gpu_sharing_config=gcp.container.NodePoolNodeConfigGuestAcceleratorGpuSharingConfigArgs(
            gpu_sharing_strategy=args.sharing.strategy,
            max_shared_clients_per_gpu=args.sharing.max_shared_clients_per_gpu,
        )
        if args.sharing is not None
        else None,
    )


def reservation_value(project: str, reservation: str) -> str:
    """The reservation affinity value: a bare name as written; a block or sub-block
    (``NAME/reservationBlocks/B[/reservationSubBlocks/S]``) as the full path GKE needs for it, as
    cluster-toolkit renders it (``gke-node-pool/reservation_definitions.tf``
    ``default_reservation_values``: ``projects/<project>/reservations/<name><suffix>``)."""
    return f"projects/{project}/reservations/{reservation}" if "/" in reservation else reservation


def _reservation_affinity(
    args: GpuNodePoolArgs,
) -> gcp.container.NodePoolNodeConfigReservationAffinityArgs:
    if args.provisioning == "reservation":
        return gcp.container.NodePoolNodeConfigReservationAffinityArgs(
            consume_reservation_type="SPECIFIC_RESERVATION",
            key="compute.googleapis.com/reservation-name",
            values=[reservation_value(args.project, args.reservation or "")],
        )
    # Everything else must not silently eat a reservation meant for another pool; DWS pools
    # are refused by GKE unless this is NO_RESERVATION.
    return gcp.container.NodePoolNodeConfigReservationAffinityArgs(consume_reservation_type="NO_RESERVATION")
