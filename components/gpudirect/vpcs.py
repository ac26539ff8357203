"""The extra VPCs GPUDirect needs, shared by the GPUDirect pools of a cluster that name them alike.

Why shared: a Kubernetes ``Network`` is cluster-wide and names one VPC/subnet
(``GKENetworkParamSet``), and pods list those names in ``networking.gke.io/interfaces``.
cluster-toolkit v1.95.0 names the gVNIC networks ``vpc1..N`` for A3 High / A3 Mega
(``examples/gke-a3-highgpu``, ``gke-a3-megagpu``: ``k8s_network_names.gvnic_prefix: vpc``, the names
Google's TCPX/TCPXO NCCL test pods use) and ``gvnic-1`` plus ``rdma-0..7`` for A3 Ultra / A4
(``modules/scheduler/gke-cluster/variables.tf`` defaults).  So one set of gVNIC VPCs per naming,
sized for the largest profile using it and with the largest MTU any of them needs (8244 for
TCPX/TCPXO, ``multivpc`` ``mtu: 8244`` in both A3 blueprints), and one RoCE VPC.

Ranges, as cluster-toolkit's examples allocate them: the ``vpc`` subnets are /20s of 192.168.0.0/17
(``modules/network/multivpc``: ``global_ip_address_range: 192.168.0.0/16``,
``subnetwork_cidr_suffix: 20``), the ``gvnic-`` subnets /20s of 192.168.192.0/18, the RoCE VPC's
subnets /21s of 192.168.128.0/18 (``examples/gke-a3-ultragpu/gke-a3-ultragpu.yaml``
``gke-a3-ultra-rdma-net``, ``count: 8``).  The RoCE VPC carries the zonal network profile
``<zone>-vpc-roce`` (same file, ``network_profile``).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from components.gpudirect import POLICIES_DIR

assert POLICIES_DIR  # importing the package put the pack's package on sys.path

from gpu_batch_policy.facts.gpudirect.profiles import (  # noqa: E402
    ROCE_PROFILE_SUFFIX,
    GpuDirectProfile,
    gvnic_network_name,
    rdma_network_name,
)

GVNIC_RANGES = {
    "vpc": ipaddress.ip_network("192.168.0.0/17"),
    "gvnic-": ipaddress.ip_network("192.168.192.0/18"),
}
RDMA_RANGE = ipaddress.ip_network("192.168.128.0/18")
VPC_NAMES = {"vpc": "gpunet", "gvnic-": "net"}


@dataclass(frozen=True)
class NetworkAttachment:
    """One extra NIC of a node: the Kubernetes Network name and the VPC/subnet behind it."""

    k8s_name: str
    device_mode: str  # NetDevice (gVNIC) or RDMA
    network: pulumi.Output[str]
    subnetwork: pulumi.Output[str]


@dataclass(frozen=True)
class GpuDirectVpcsArgs:
    project: str
    cluster_name: str
    region: str
    # The one zone RDMA pools run in (the RoCE profile is zonal); None without RDMA pools.
    zone: str | None
    profiles: tuple[GpuDirectProfile, ...]


def _subnet(
    name: str, args: GpuDirectVpcsArgs, vpc: gcp.compute.Network, cidr: str, opts: pulumi.ResourceOptions
) -> gcp.compute.Subnetwork:
    return gcp.compute.Subnetwork(
        name,
        name=name,
        project=args.project,
        region=args.region,
        network=vpc.id,
        ip_cidr_range=cidr,
        opts=opts,
    )


class GpuDirectVpcs(pulumi.ComponentResource):
    """The gVNIC VPCs of each naming (one subnet each) and, with RDMA pools, one RoCE VPC."""

    attachments: dict[str, NetworkAttachment]

    def __init__(
        self, name: str, args: GpuDirectVpcsArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpu-batch:gpudirect:Vpcs", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.attachments = {}
        for prefix in sorted({p.gvnic_prefix for p in args.profiles if p.gvnic_networks}):
            users = [p for p in args.profiles if p.gvnic_prefix == prefix]
            mtus = [p.mtu for p in users if p.mtu is not None]
            count = max(p.gvnic_networks for p in users)
            for index, cidr in zip(range(count), GVNIC_RANGES[prefix].subnets(new_prefix=20), strict=False):
                vpc_name = f"{args.cluster_name}-{VPC_NAMES[prefix]}-{index}"
                vpc = gcp.compute.Network(
                    vpc_name,
                    name=vpc_name,
                    project=args.project,
                    auto_create_subnetworks=False,
                    mtu=max(mtus) if mtus else None,
                    opts=child,
                )
                subnet = _subnet(f"{vpc_name}-subnet", args, vpc, str(cidr), child)
                k8s_name = gvnic_network_name(prefix, index)
                self.attachments[k8s_name] = NetworkAttachment(k8s_name, "NetDevice", vpc.name, subnet.name)
        rdma_count = max((p.rdma_subnets for p in args.profiles), default=0)
        if rdma_count:
            if args.zone is None:
                raise ValueError("GpuDirectVpcs: RDMA pools need the zone of the RoCE network profile")
            vpc_name = f"{args.cluster_name}-rdma-net"
            vpc = gcp.compute.Network(
                vpc_name,
                name=vpc_name,
                project=args.project,
                auto_create_subnetworks=False,
                routing_mode="REGIONAL",
                network_profile=f"https://www.googleapis.com/compute/beta/projects/{args.project}"
                f"/global/networkProfiles/{args.zone}{ROCE_PROFILE_SUFFIX}",
                opts=child,
            )
            for index, cidr in zip(range(rdma_count), RDMA_RANGE.subnets(new_prefix=21), strict=False):
                subnet = _subnet(f"{args.cluster_name}-rdma-sub-{index}", args, vpc, str(cidr), child)
                k8s_name = rdma_network_name(index)
                self.attachments[k8s_name] = NetworkAttachment(k8s_name, "RDMA", vpc.name, subnet.name)
        self.register_outputs({"networks": sorted(self.attachments)})

    def attachments_for(self, profile: GpuDirectProfile) -> tuple[NetworkAttachment, ...]:
        """The NICs one pool of ``profile`` gets, in NIC order: its gVNIC VPCs, then its RDMA subnets."""
        names = [gvnic_network_name(profile.gvnic_prefix, i) for i in range(profile.gvnic_networks)]
        names += [rdma_network_name(i) for i in range(profile.rdma_subnets)]
        return tuple(self.attachments[n] for n in names)
