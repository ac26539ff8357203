"""The extra VPCs GPUDirect needs, shared by every GPUDirect pool of a cluster.

Why shared: a Kubernetes ``Network`` is cluster-wide and names one VPC/subnet
(``GKENetworkParamSet``), and cluster-toolkit names them ``gvnic-1..N`` and ``rdma-0..N-1``
(``modules/scheduler/gke-cluster/variables.tf`` ``k8s_network_names``, v1.95.0).  An A3 Mega pool
uses gvnic-1..8, an A3 Ultra / A4 pool gvnic-1 and rdma-0..7; so one set of VPCs sized for the
largest profile serves them all, with the largest MTU any of them needs (8244 for TCPXO,
``examples/gke-a3-megagpu/gke-a3-megagpu.yaml`` ``gpunets``).

Ranges, as cluster-toolkit's examples allocate them: gVNIC subnets are /20s of 192.168.0.0/17
(``modules/network/multivpc``: ``global_ip_address_range: 192.168.0.0/16``,
``subnetwork_cidr_suffix: 20``), the RoCE VPC's subnets /21s of 192.168.128.0/18
(``examples/gke-a3-ultragpu/gke-a3-ultragpu.yaml`` ``gke-a3-ultra-rdma-net``, ``count: 8``).  The
RoCE VPC carries the zonal network profile ``<zone>-vpc-roce`` (same file, ``network_profile``).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from components.gpudirect import POLICIES_DIR

assert POLICIES_DIR  # importing the package put the pack's package on sys.path

from gpu_batch_policy.gpudirect.profiles import (  # noqa: E402
    ROCE_PROFILE_SUFFIX,
    GpuDirectProfile,
    gvnic_network_name,
    rdma_network_name,
)

GVNIC_RANGE = ipaddress.ip_network("192.168.0.0/17")
RDMA_RANGE = ipaddress.ip_network("192.168.128.0/18")


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
    """``max(gvnic_networks)`` gVNIC VPCs (one subnet each) and, with RDMA pools, one RoCE VPC."""

    gvnic: tuple[NetworkAttachment, ...]
    rdma: tuple[NetworkAttachment, ...]

    def __init__(
        self, name: str, args: GpuDirectVpcsArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpu-batch:gpudirect:Vpcs", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        gvnic_count = max((p.gvnic_networks for p in args.profiles), default=0)
        mtus = [p.mtu for p in args.profiles if p.mtu is not None]
        gvnic: list[NetworkAttachment] = []
        for index, cidr in zip(range(gvnic_count), GVNIC_RANGE.subnets(new_prefix=20), strict=False):
            prefix = f"{args.cluster_name}-gpunet-{index}"
            vpc = gcp.compute.Network(
                prefix,
                name=prefix,
                project=args.project,
                auto_create_subnetworks=False,
                mtu=max(mtus) if mtus else None,
                opts=child,
            )
            subnet = _subnet(f"{prefix}-subnet", args, vpc, str(cidr), child)
            gvnic.append(NetworkAttachment(gvnic_network_name(index), "NetDevice", vpc.name, subnet.name))
        rdma: list[NetworkAttachment] = []
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
                rdma.append(NetworkAttachment(rdma_network_name(index), "RDMA", vpc.name, subnet.name))
        self.gvnic = tuple(gvnic)
        self.rdma = tuple(rdma)
        self.register_outputs({"networks": [a.k8s_name for a in (*self.gvnic, *self.rdma)]})

    def attachments_for(self, profile: GpuDirectProfile) -> tuple[NetworkAttachment, ...]:
        """The NICs one pool of ``profile`` gets, in NIC order: its gVNIC VPCs, then its RDMA subnets."""
        return (*self.gvnic[: profile.gvnic_networks], *self.rdma[: profile.rdma_subnets])
