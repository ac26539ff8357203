"""What a private-node GKE cluster needs from its VPC: egress for the nodes, and a way in for webhooks.

Public API: :class:`NodeEgress` (a Cloud Router with Cloud NAT), :class:`WebhookIngress` (a
firewall rule from the control plane to the nodes' webhook ports), :func:`region_of`.

Why both exist (GKE docs, concepts/private-cluster-concept and how-to/private-clusters, "Adding
firewall rules for specific use cases"):

- Nodes without external IPs have no route to the internet, so they cannot pull images from
  ghcr.io / registry.k8s.io / Docker Hub (the KAI, Kueue, KubeRay, SkyPilot images) unless Cloud
  NAT serves their region.  cluster-toolkit's ``modules/network/vpc`` creates a Cloud Router and
  NAT per region for the same reason.
- GKE's auto-created firewall rule only lets the control plane reach nodes on 443 and 10250.  An
  admission webhook served on any other port (Kueue and KAI on 9443, ingress-nginx on 8443) times
  out from the API server, and since those webhooks fail closed every object they guard is
  refused.  The rule below opens exactly those ports from ``masterIpv4CidrBlock`` to the nodes
  (``target_tags``: the network tag every pool of the cluster carries).

The plain ``gcp:compute/router:Router``, ``gcp:compute/routerNat:RouterNat`` and
``gcp:compute/firewall:Firewall`` resources are used on purpose: the policy pack recognises them
by type token, whoever's program declares them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

DEFAULT_NETWORK = "default"


def region_of(location: str) -> str:
    """``us-west1-b`` -> ``us-west1``; a region is returned as is."""
    return re.sub(r"-[a-z]$", "", location)


@dataclass(frozen=True)
class NodeEgressArgs:
    project: str
    region: str
    network: str = DEFAULT_NETWORK
    # The cluster's subnetwork in ``region`` (the auto-mode default network names it "default").
    subnetwork: str = DEFAULT_NETWORK


class NodeEgress(pulumi.ComponentResource):
    """A Cloud Router and a Cloud NAT for the cluster's subnetwork and its secondary ranges.

    Only that subnetwork (``LIST_OF_SUBNETWORKS`` with ``ALL_IP_RANGES``: its primary range and
    the secondary ranges of pods and services), never ``ALL_SUBNETWORKS_ALL_IP_RANGES``: the
    Compute API refuses a NAT covering all subnetworks when the network already has another NAT
    in that region (GCP Cloud NAT docs, "NAT rules and subnet ranges": a subnet range can be
    served by one NAT gateway only), which organisation-managed networks often do.
    """

    router: gcp.compute.Router
    nat: gcp.compute.RouterNat

    def __init__(self, name: str, args: NodeEgressArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-batch:network:NodeEgress", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.router = gcp.compute.Router(
            f"{name}-router",
            name=f"{name}-router",
            project=args.project,
            region=args.region,
            network=args.network,
            opts=child,
        )
        self.nat = gcp.compute.RouterNat(
            f"{name}-nat",
            name=f"{name}-nat",
            project=args.project,
            region=args.region,
            router=self.router.name,
            nat_ip_allocate_option="AUTO_ONLY",
            source_subnetwork_ip_ranges_to_nat="LIST_OF_SUBNETWORKS",
            subnetworks=[
                gcp.compute.RouterNatSubnetworkArgs(
                    name=f"projects/{args.project}/regions/{args.region}/subnetworks/{args.subnetwork}",
                    source_ip_ranges_to_nats=["ALL_IP_RANGES"],
                )
            ],
            log_config=gcp.compute.RouterNatLogConfigArgs(enable=True, filter="ERRORS_ONLY"),
            opts=child,
        )
        self.register_outputs(
            {"router": self.router.name, "nat": self.nat.name, "region": args.region, "network": args.network}
        )


@dataclass(frozen=True)
class WebhookIngressArgs:
    project: str
    master_ipv4_cidr_block: str
    ports: Sequence[int]
    node_tag: str
    network: str = DEFAULT_NETWORK


class WebhookIngress(pulumi.ComponentResource):
    """An ingress firewall rule: control plane -> nodes tagged ``node_tag``, tcp on ``ports``."""

    firewall: gcp.compute.Firewall

    def __init__(
        self, name: str, args: WebhookIngressArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpu-batch:network:WebhookIngress", name, None, opts)
        ports = sorted(set(args.ports))
        self.firewall = gcp.compute.Firewall(
            f"{name}-firewall",
            name=f"{name}-webhooks",
            project=args.project,
            network=args.network,
            direction="INGRESS",
            source_ranges=[args.master_ipv4_cidr_block],
            target_tags=[args.node_tag],
            allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=[str(p) for p in ports])],
            description="GKE control plane to admission webhooks on the nodes (gpu-batch)",
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs(
            {
                "firewall": self.firewall.name,
                "sourceRanges": [args.master_ipv4_cidr_block],
                "ports": ports,
                "targetTag": args.node_tag,
            }
        )
