"""``gke-gpudirect-firewall`` (mandatory): every extra network of a GPUDirect pool admits the
pool's own nodes, or NCCL between nodes is dropped.

A GPUDirect pool's ``networkConfig.additionalNodeNetworkConfigs`` attach one NIC per gVNIC VPC (and
per RoCE subnet).  GCE's implied rule denies all ingress on a VPC, so two nodes' NCCL connections
over those NICs fail unless a firewall rule on that VPC admits the subnet's range.  The upstream
layout (cluster-toolkit ``modules/network/vpc`` / ``multivpc`` ``enable_internal_traffic``, default
true; ``examples/gke-a3-ultragpu``: none on the RoCE VPC) and the verdict are
:mod:`...facts.gpudirect.firewall`.

Judged only for networks and subnets the stack declares (a VPC made elsewhere may carry its rules
elsewhere, and ``externalObjects`` listing a ``Firewall`` says another stack owns the rules), and
not for a VPC of a ``<zone>-vpc-roce`` network profile.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.gpudirect.firewall import FIREWALL_TYPE, INTERNAL_ALLOW, network_admits, short_name
from ...facts.gpudirect.profiles import ROCE_PROFILE_SUFFIX
from ...facts.model import StackModel
from ...facts.open_world import World, world_schema
from ...primitives.values import Unknown, as_str, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter
from .networking import COMPUTE_NETWORK, extra_nics

SUBNETWORK_TYPE = "gcp:compute/subnetwork:Subnetwork"


def _declared(model: StackModel, resource_type: str) -> dict[str, Any]:
    """Declared resources of ``resource_type`` by their GCE name."""
    out: dict[str, Any] = {}
    for res in model.of_type(resource_type):
        name = as_str(res.get("name"))
        if isinstance(name, str):
            out[name] = res
    return out


def check_firewall(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    if World.from_config(config).has_kind("Firewall"):
        return  # another team's stack owns this project's firewall rules
    networks = _declared(model, COMPUTE_NETWORK)
    subnets = _declared(model, SUBNETWORK_TYPE)
    rules = [res.props for res in model.of_type(FIREWALL_TYPE)]
    allow = ", ".join(f"{p} {' '.join(ports)}".strip() for p, ports in INTERNAL_ALLOW)
    for pool in model.node_pools():
        nics = extra_nics(pool)
        if isinstance(nics, Unknown):
            continue
        for nic in nics:
            network, subnet = short_name(dig(nic, "network")), short_name(dig(nic, "subnetwork"))
            if not isinstance(network, str) or not isinstance(subnet, str):
                continue
            vpc, sub = networks.get(network), subnets.get(subnet)
            if vpc is None or sub is None:
                continue
            profile = short_name(vpc.get("networkProfile"))
            if isinstance(profile, str) and profile.endswith(ROCE_PROFILE_SUFFIX):
                continue
            cidr = as_str(sub.get("ipCidrRange"))
            if not isinstance(cidr, str):
                reporter.cannot_check(pool, f"the range of subnetwork {subnet}")
                continue
            verdict = network_admits(rules, network, cidr)
            if verdict is None:
                reporter.cannot_check(pool, f"the firewall rules of network {network}")
            elif not verdict:
                reporter.violation(
                    pool,
                    f"GPUDirect network {network} (subnet {subnet}, {cidr}) has no firewall rule admitting "
                    "the pool's own nodes: GCE denies all ingress on a VPC by default, so NCCL between "
                    "nodes over this NIC is dropped",
                    f"add an INGRESS rule on {network} allowing {allow} from {cidr} (cluster-toolkit "
                    "vpc/multivpc enable_internal_traffic)",
                )


POLICIES: list[Policy] = [
    stack_policy(
        "gke-gpudirect-firewall",
        "Every gVNIC network a GPUDirect pool attaches has a firewall rule admitting the pool's own nodes.",
        check_firewall,
        config_schema=world_schema(),
    ),
]
