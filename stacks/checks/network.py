"""Checks of the cluster's network keys: CIDRs GKE would refuse only after a long create call.

- ``masterIpv4CidrBlock``: GKE requires a /28 from the private (RFC 1918) ranges for a private
  cluster's control plane (GKE docs, how-to/private-clusters, "--master-ipv4-cidr").
- ``masterAuthorizedNetworks``: each entry is a CIDR block (GKE docs, how-to/authorized-networks).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from stacks.config.cluster import ClusterConfig
from stacks.errors import ConfigIssue

CLUSTER_KEY = "gpu-batch:cluster"


def check_network(cluster: ClusterConfig) -> Iterator[ConfigIssue]:
    if cluster.private_nodes:
        block = cluster.master_ipv4_cidr_block
        network = _network(block)
        if network is None or network.prefixlen != 28 or not network.is_private:
            yield ConfigIssue(
                f"{CLUSTER_KEY}.masterIpv4CidrBlock", "a private /28 CIDR block such as 172.16.0.32/28", block
            )
    for index, cidr in enumerate(cluster.master_authorized_networks or []):
        if _network(cidr) is None:
            yield ConfigIssue(
                f"{CLUSTER_KEY}.masterAuthorizedNetworks[{index}]",
                "a CIDR block such as 203.0.113.0/24",
                cidr,
            )


def _network(text: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    try:
        return ipaddress.ip_network(text, strict=True)
    except ValueError:
        return None
