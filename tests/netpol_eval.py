"""A NetworkPolicy evaluator for tests: may a connection from one pod reach another pod's port?

Semantics of ``networking.k8s.io/v1`` NetworkPolicy (kubernetes.io/docs/concepts/
services-networking/network-policies; API reference NetworkPolicySpec/NetworkPolicyPeer):

* a pod is isolated for ingress when some policy of its namespace selects it (``podSelector``)
  and lists ``Ingress`` in ``policyTypes`` (unset ``policyTypes``: Ingress, plus Egress when
  the policy has egress rules); an unisolated pod takes every connection;
* an isolated pod takes a connection when some selecting policy has an ingress rule whose
  ``ports`` match (none: every port; ``port`` a number or the container port's name,
  ``protocol`` default TCP, ``endPort`` a range) and whose ``from`` matches (none: every source;
  a peer with ``podSelector`` only: pods of the policy's namespace; ``namespaceSelector`` only:
  every pod of the matching namespaces; both: matching pods of matching namespaces; ``ipBlock``:
  a source whose address is in ``cidr`` and in none of ``except``);
* policies are additive: a connection is allowed if any rule of any selecting policy allows it.

Egress is not evaluated: no policy the stack writes restricts it.  Label selectors use
apimachinery's ``LabelSelectorAsSelector`` semantics (``{}`` matches everything).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Pod:
    namespace: str
    name: str
    labels: Mapping[str, str]
    # Container ports by name, for policies that name a port.
    named_ports: Mapping[str, int] = field(default_factory=dict)
    # The source address, for ipBlock peers; None: a pod address no ipBlock of these tests covers.
    ip: str | None = None
    # False: not a pod at all (a load balancer proxy, a health prober): no pod or namespace
    # selector matches it, only an ipBlock.
    in_cluster: bool = True


def outside(name: str, ip: str) -> Pod:
    """A source outside the pod network, e.g. a proxy of the proxy-only subnet."""
    return Pod(namespace="", name=name, labels={}, ip=ip, in_cluster=False)


def in_block(block: Mapping[str, Any], ip: str | None) -> bool:
    """NetworkPolicy IPBlock: in ``cidr`` and in none of ``except``."""
    if ip is None:
        return False
    address = ipaddress.ip_address(ip)
    if address not in ipaddress.ip_network(block["cidr"]):
        return False
    return not any(address in ipaddress.ip_network(cidr) for cidr in block.get("except") or [])


def selects(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """apimachinery LabelSelectorAsSelector: matchLabels and every matchExpression, ANDed."""
    if selector is None:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], expr.get("values") or []
        have = labels.get(key)
        ok = {
            "In": have is not None and have in values,
            "NotIn": have is None or have not in values,
            "Exists": have is not None,
            "DoesNotExist": have is None,
        }[op]
        if not ok:
            return False
    return True


@dataclass(frozen=True)
class Cluster:
    """What the evaluator sees: namespaces with their labels, and the NetworkPolicies."""

    namespace_labels: Mapping[str, Mapping[str, str]]
    policies: Sequence[Mapping[str, Any]]

    def labels_of(self, namespace: str) -> dict[str, str]:
        # The API server sets kubernetes.io/metadata.name on every namespace.
        return {**self.namespace_labels.get(namespace, {}), "kubernetes.io/metadata.name": namespace}

    def _selecting(self, pod: Pod) -> list[Mapping[str, Any]]:
        out = []
        for policy in self.policies:
            spec = policy.get("spec", {})
            if policy["metadata"].get("namespace") != pod.namespace:
                continue
            if not selects(spec.get("podSelector", {}), pod.labels):
                continue
            types = spec.get("policyTypes") or ["Ingress"]
            if "Ingress" in types:
                out.append(policy)
        return out

    def _peer(self, peer: Mapping[str, Any], policy_namespace: str, src: Pod) -> bool:
        if "ipBlock" in peer:
            return in_block(peer["ipBlock"], src.ip)
        if not src.in_cluster:
            return False
        pod_sel, ns_sel = peer.get("podSelector"), peer.get("namespaceSelector")
        if ns_sel is None:
            return src.namespace == policy_namespace and selects(pod_sel, src.labels)
        if not selects(ns_sel, self.labels_of(src.namespace)):
            return False
        return pod_sel is None or selects(pod_sel, src.labels)

    @staticmethod
    def _port(entries: Iterable[Mapping[str, Any]] | None, dst: Pod, port: int, protocol: str) -> bool:
        if not entries:
            return True
        for entry in entries:
            if entry.get("protocol", "TCP") != protocol:
                continue
            want = entry.get("port")
            if want is None:
                return True
            if isinstance(want, str):
                want = dst.named_ports.get(want)
                if want is None:
                    continue
            if want <= port <= int(entry.get("endPort", want)):
                return True
        return False

    def allows(self, src: Pod, dst: Pod, port: int, protocol: str = "TCP") -> bool:
        selecting = self._selecting(dst)
        if not selecting:
            return True
        for policy in selecting:
            for rule in policy["spec"].get("ingress") or []:
                peers = rule.get("from")
                if not self._port(rule.get("ports"), dst, port, protocol):
                    continue
                if not peers or any(self._peer(p, dst.namespace, src) for p in peers):
                    return True
        return False
