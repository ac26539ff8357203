"""Whether a GCE firewall rule admits a GPUDirect pool's nodes to each other on one extra network.

A VPC without rules denies all ingress (GCE's implied deny-ingress rule, priority 65535), so the
NCCL traffic between two nodes' extra NICs is dropped.  GoogleCloudPlatform/cluster-toolkit gives
each gVNIC VPC an internal-allow rule: ``modules/network/vpc`` and ``modules/network/multivpc``
create ``<network>-allow-internal`` when ``enable_internal_traffic`` (default ``true``): ingress of
TCP 0-65535, UDP 0-65535 and ICMP from the network's own ranges (:data:`INTERNAL_ALLOW`, the rule
the stack creates, ``components/gpudirect/vpcs.py``).  ``examples/gke-a3-ultragpu/gke-a3-ultragpu.yaml``
adds the same rule to its gVNIC ``net-0``/``net-1`` and none to the RoCE VPC
(``modules/network/gpu-rdma-vpc``): a VPC of a ``<zone>-vpc-roce`` network profile is not judged.

The verdict is three-valued: True when one enabled INGRESS rule on the network allows some protocol
from a source range holding the subnet's range (or from source tags / service accounts, or to
target tags / service accounts, which the plan cannot match to nodes: given the benefit of the
doubt); False when none does; None when a value it needs is unknown until apply.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from ...primitives.values import Unknown, as_str, dig
from ..fit.network import ranges_cover

FIREWALL_TYPE: Final = "gcp:compute/firewall:Firewall"
INTERNAL_ALLOW: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    ("tcp", ("0-65535",)),
    ("udp", ("0-65535",)),
    ("icmp", ()),
)
"""cluster-toolkit ``allow_internal``: protocol and ports (none: the protocol has no ports)."""


def short_name(ref: object) -> str | Unknown | None:
    """A network reference's last path segment (names, self links and ids alike)."""
    value = as_str(ref)
    return value.rstrip("/").rsplit("/", 1)[-1] if isinstance(value, str) else value


def rule_admits(props: Any, network: str, cidr: str) -> bool | None:
    """Whether one Firewall resource's inputs admit ingress from ``cidr`` on ``network``."""
    if isinstance(props, Unknown):
        return None
    rule_net = short_name(dig(props, "network"))
    if isinstance(rule_net, Unknown):
        return None
    if rule_net != network:
        return False
    direction, disabled = dig(props, "direction"), dig(props, "disabled")
    if isinstance(direction, Unknown) or isinstance(disabled, Unknown):
        return None
    if (direction or "INGRESS") != "INGRESS" or disabled is True:
        return False
    allows = dig(props, "allows")
    if isinstance(allows, Unknown):
        return None
    if not isinstance(allows, list) or not allows:
        return False
    for key in ("sourceTags", "sourceServiceAccounts", "targetTags", "targetServiceAccounts"):
        value = dig(props, key)
        if isinstance(value, Unknown) or (isinstance(value, list) and value):
            return None if isinstance(value, Unknown) else True
    ranges = dig(props, "sourceRanges")
    if isinstance(ranges, Unknown):
        return None
    return ranges_cover(ranges if isinstance(ranges, list) else [], cidr)


def network_admits(rules: Iterable[Any], network: str, cidr: str) -> bool | None:
    """True when any of ``rules`` admits ``cidr`` on ``network``; None when only unknowns could."""
    verdicts = [rule_admits(props, network, cidr) for props in rules]
    if any(v is True for v in verdicts):
        return True
    return None if any(v is None for v in verdicts) else False
