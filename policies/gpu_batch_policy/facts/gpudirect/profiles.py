"""Which GPUDirect network stack each GPU machine type gets, and what it needs.

Sources (each fact cites where it comes from):

- GoogleCloudPlatform/cluster-toolkit v1.95.0 ``modules/compute/gke-node-pool/gpu_direct.tf``
  ``gpu_direct_settings``: ``a3-highgpu-8g`` TCPX with ``min_additional_networks = 4``,
  ``a3-megagpu-8g`` TCPXO with 8, the installer + NRI injector manifests each applies, and each
  one's ``major_minor_version_acceptable_map`` (the GKE patch floor per minor);
- ``examples/gke-a3-megagpu/gke-a3-megagpu.yaml``: ``modules/network/multivpc`` with
  ``network_count: 8`` and ``mtu: 8244``; the pool's own gVNIC (A3 Mega has no extra gVNIC NIC, so
  the primary VPC carries it);
- ``examples/gke-a3-ultragpu/gke-a3-ultragpu.yaml`` and ``examples/gke-a4/gke-a4.yaml``: one extra
  gVNIC VPC (``net-1``) plus ``modules/network/gpu-rdma-vpc`` with network profile
  ``<zone>-vpc-roce`` and ``subnetworks_template.count: 8``; ``version_prefix: "1.35."`` (A4) and
  the DWS example ``gke-consumption-options/dws-flex-start-queued-provisioning`` with ``1.32.``;
- ``modules/scheduler/gke-cluster/main.tf``: multi-networking derived from additional networks,
  Dataplane V2 derived from multi-networking, precondition "'enable_dataplane_v2' cannot be false
  when enabling multi networking"; Kubernetes network names ``gvnic-<1..>`` and ``rdma-<0..>``
  (``variables.tf`` ``k8s_network_names`` defaults, kept by the A3 Ultra / A4 blueprints) with
  ``deviceMode`` ``NetDevice`` / ``RDMA`` (``templates/gke-network-paramset.yaml.tftpl``); the A3
  High and A3 Mega blueprints set ``k8s_network_names: {gvnic_prefix: vpc, gvnic_start_index: 1}``,
  i.e. ``vpc1..vpcN``, the names Google's TCPX/TCPXO NCCL test pods list in their
  ``networking.gke.io/interfaces`` annotation (``gpudirect-tcpx[o]/nccl-test-latest.yaml``);
- ``examples/gke-a3-highgpu/gke-a3-highgpu.yaml``: ``multivpc`` with ``network_count: 4``, ``mtu: 8244``.

- ``examples/gke-a4x/gke-a4x.yaml`` (A4X, ``a4x-highgpu-4g``, 4 GB200 per node): RDMA with one extra
  gVNIC VPC (``gke-a4x-net-1``) plus ``modules/network/gpu-rdma-vpc`` (``<zone>-vpc-roce``) with
  ``count: 4`` subnets, ``version_prefix: "1.33."``; Google's A4X installer is
  ``gpudirect-rdma/nccl-rdma-installer-a4x.yaml`` and its test Pod ``nccl-test-imex-a4x.yaml``
  (networks ``rdma-0..3``).  The pack judges A4X pools with this profile; the stack config still
  refuses ``network: gpudirect`` on A4X (``stacks.checks.gpudirect``): the blueprint also needs a
  HIGH_THROUGHPUT workload policy (``accelerator_topology: 1x72``), arm64 tolerations and IMEX
  ComputeDomain claims, which gpu-batch does not declare.  GKE's managed DRANET
  (``examples/gke-a4x/gke-a4x-dranet.yaml``) is exclusive with this RDMA setup and not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

NetworkStack = Literal["TCPX", "TCPXO", "RDMA"]

GPUDIRECT_MANIFESTS: Final = "gpudirect"
"""The ``manifests:`` entry of ``charts.lock.yaml`` holding Google's DaemonSets."""

NRI_INJECTOR: Final = "nri_device_injector/nri-device-injector.yaml"

ROCE_PROFILE_SUFFIX: Final = "-vpc-roce"
"""GCE network profile of an RDMA VPC: ``<zone>-vpc-roce`` (gke-a3-ultragpu.yaml, gke-a4.yaml)."""


@dataclass(frozen=True)
class GpuDirectProfile:
    """What one machine type needs for NCCL to use its GPU NICs."""

    machine_type: str
    stack: NetworkStack
    # Extra gVNIC VPCs (one subnet each); Kubernetes Networks <gvnic_prefix>1..N, deviceMode NetDevice.
    gvnic_networks: int
    # Subnets of the one RoCE VPC; Kubernetes Networks rdma-0..N-1, deviceMode RDMA.
    rdma_subnets: int
    # MTU of the extra gVNIC VPCs (None: GCE's default).
    mtu: int | None
    # Pinned files of manifests.gpudirect to apply, installer first.
    manifests: tuple[str, ...]
    # GKE version floor per minor (cluster-toolkit major_minor_version_acceptable_map); a minor not
    # listed and newer than every listed one passes, as cluster-toolkit's default "1.0.0-gke.0".
    version_floors: tuple[tuple[str, str], ...] = ()
    # The lowest minor cluster-toolkit's blueprints run the profile at (``version_prefix``).
    min_minor: str | None = None
    # Kubernetes Network names of the gVNIC VPCs: "vpc" (vpc1..) or "gvnic-" (gvnic-1..).
    gvnic_prefix: str = "gvnic-"
    # Pinned file of manifests.gpudirect holding Google's NCCL test Pod for this stack: the wiring a
    # workload pod copies (components.gpudirect.pod_wiring) and the pack checks (..wiring).
    test_pod: str = ""

    @property
    def nic_count(self) -> int:
        """Additional node network configs a pool carries: one per gVNIC VPC and per RDMA subnet."""
        return self.gvnic_networks + self.rdma_subnets

    @property
    def needs_roce_zone(self) -> bool:
        """RDMA VPCs use a zonal network profile: the pool must sit in exactly that zone."""
        return self.rdma_subnets > 0


PROFILES: Final[dict[str, GpuDirectProfile]] = {
    p.machine_type: p
    for p in (
        GpuDirectProfile(
            "a3-highgpu-8g",
            "TCPX",
            gvnic_networks=4,
            rdma_subnets=0,
            mtu=8244,
            gvnic_prefix="vpc",
            manifests=("gpudirect-tcpx/nccl-tcpx-installer.yaml", NRI_INJECTOR),
            test_pod="gpudirect-tcpx/nccl-test-latest.yaml",
            version_floors=(
                ("1.27", "1.27.16-gke.2874000"),
                ("1.28", "1.28.15-gke.3163000"),
                ("1.29", "1.29.15-gke.2467000"),
            ),
        ),
        GpuDirectProfile(
            "a3-megagpu-8g",
            "TCPXO",
            gvnic_networks=8,
            rdma_subnets=0,
            mtu=8244,
            gvnic_prefix="vpc",
            manifests=("gpudirect-tcpxo/nccl-tcpxo-installer.yaml", NRI_INJECTOR),
            test_pod="gpudirect-tcpxo/nccl-test-latest.yaml",
            version_floors=(
                ("1.28", "1.28.15-gke.3163000"),
                ("1.29", "1.29.15-gke.2467000"),
                ("1.30", "1.30.14-gke.1922000"),
                ("1.31", "1.31.14-gke.1243000"),
                ("1.32", "1.32.11-gke.1174000"),
            ),
        ),
        *(
            GpuDirectProfile(
                machine,
                "RDMA",
                gvnic_networks=1,
                rdma_subnets=8,
                mtu=None,
                manifests=("gpudirect-rdma/nccl-rdma-installer.yaml",),
                min_minor="1.32",
                test_pod=test_pod,
            )
            for machine, test_pod in (
                ("a3-ultragpu-8g", "gpudirect-rdma/nccl-test.yaml"),
                ("a4-highgpu-8g", "gpudirect-rdma/nccl-test-a4.yaml"),
            )
        ),
        GpuDirectProfile(
            "a4x-highgpu-4g",
            "RDMA",
            gvnic_networks=1,
            rdma_subnets=4,
            mtu=None,
            manifests=("gpudirect-rdma/nccl-rdma-installer-a4x.yaml",),
            min_minor="1.33",
            test_pod="gpudirect-rdma/nccl-test-imex-a4x.yaml",
        ),
    )
}


def profile_for(machine_type: str) -> GpuDirectProfile | None:
    """The GPUDirect profile of ``machine_type``; None when it has no GPU NICs (or is not supported)."""
    return PROFILES.get(machine_type)


def gvnic_network_name(prefix: str, index: int) -> str:
    """Kubernetes Network of the ``index``-th (0-based) extra gVNIC VPC: ``vpc1`` / ``gvnic-1``, ..."""
    return f"{prefix}{index + 1}"


def rdma_network_name(index: int) -> str:
    """Kubernetes Network of the ``index``-th RDMA subnet: ``rdma-0``, ``rdma-1``, ..."""
    return f"rdma-{index}"
