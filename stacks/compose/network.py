"""The cluster's network pieces a stack needs beyond the cluster itself.

Private nodes (``cluster.privateNodes``) get Cloud NAT for their region and a firewall rule
from the control plane to the webhook ports of the operators this stack installs (see
:mod:`components.network` for why each is needed).  Which ports: Kueue's and KAI's webhook
servers (9443), Kueue's visibility API server behind its APIService (8082) and, when a SkyPilot
server installs ingress-nginx, its admission webhook (8443).
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from components.gke import GkeClusterArgs
from components.kai import KAI_WEBHOOK_PORT
from components.kueue import KUEUE_VISIBILITY_PORT, KUEUE_WEBHOOK_PORT
from components.network import (
    DEFAULT_NETWORK,
    NodeEgress,
    NodeEgressArgs,
    WebhookIngress,
    WebhookIngressArgs,
    region_of,
)
from stacks.config import StackConfig


@dataclass(frozen=True)
class NetworkLayer:
    egress: NodeEgress | None
    webhooks: WebhookIngress | None

    @property
    def resources(self) -> list[pulumi.Resource]:
        """The NAT and the firewall rule, for ``depends_on`` of what needs them in place."""
        found: list[pulumi.Resource] = []
        if self.egress is not None:
            found.append(self.egress.nat)
        if self.webhooks is not None:
            found.append(self.webhooks.firewall)
        return found


def webhook_ports(config: StackConfig) -> list[int]:
    """Ports the control plane must reach on the nodes for this stack's admission webhooks."""
    ports: set[int] = set()
    if config.kueue.enabled:
        ports.update((KUEUE_WEBHOOK_PORT, KUEUE_VISIBILITY_PORT))
    if config.kai.enabled:
        ports.add(KAI_WEBHOOK_PORT)
    return sorted(ports)


def build_network(config: StackConfig, cluster: GkeClusterArgs) -> NetworkLayer:
    """NAT and webhook firewall for a private-node cluster; nothing for a public one."""
    if not cluster.private_nodes:
        return NetworkLayer(egress=None, webhooks=None)
    network = cluster.network or DEFAULT_NETWORK
    egress = (
        NodeEgress(
            f"{cluster.name}-egress",
            NodeEgressArgs(
                project=cluster.project,
                region=region_of(cluster.location),
                network=network,
                subnetwork=cluster.subnetwork or DEFAULT_NETWORK,
            ),
        )
        if config.cluster.existing_nat is None
        else None
    )
    ports = webhook_ports(config)
    webhooks = (
        WebhookIngress(
            cluster.name,
            WebhookIngressArgs(
                project=cluster.project,
                master_ipv4_cidr_block=cluster.master_ipv4_cidr_block,
                ports=ports,
                node_tag=cluster.node_tag,
                network=network,
            ),
        )
        if ports and config.cluster.existing_webhook_firewall is None
        else None
    )
    pulumi.export(
        "network",
        {
            "natRegion": region_of(cluster.location),
            "webhookPorts": ports,
            "controlPlaneRange": cluster.master_ipv4_cidr_block,
            # Owned by the network's team when set (Shared VPC); the stack creates neither then.
            **({"existingNat": config.cluster.existing_nat} if config.cluster.existing_nat else {}),
            **(
                {"existingWebhookFirewall": config.cluster.existing_webhook_firewall}
                if config.cluster.existing_webhook_firewall
                else {}
            ),
        },
    )
    return NetworkLayer(egress=egress, webhooks=webhooks)
