"""Per-team NetworkPolicies: a team's pods take connections from their own namespace and from the
platform, never from another team.

Kubernetes NetworkPolicy semantics (kubernetes.io/docs/concepts/services-networking/
network-policies, API ``networking.k8s.io/v1``): a pod selected by any policy with
``policyTypes: [Ingress]`` accepts only what one of those policies' ``ingress`` rules allows;
policies add up, never subtract.  So a namespace gets three:

* ``gpu-batch-default-deny-ingress``: every pod (``podSelector: {}``) is isolated for ingress;
* ``gpu-batch-allow-same-namespace``: from any pod of the namespace (Ray workers <-> head, the
  RayJob submitter -> the head's job API on 8265, SkyPilot's server -> its task pods);
* ``gpu-batch-allow-platform``: from the namespaces the platform runs in, by the immutable
  ``kubernetes.io/metadata.name`` label: the KubeRay operator (``kuberay-system``: it polls each
  head's dashboard, 8265, for RayJob status), GKE Managed Prometheus (``gmp-system``: metric
  scrapes), and for a team with a SkyPilot server the shared ingress controller
  (``skypilot-ingress``).

Probes need no rule: traffic between a pod and its own node is always allowed (the page above,
"what you can't do": "traffic to and from the node where a Pod is running is always allowed").
Egress is not restricted: a team's pod may still connect out (to the internet through NAT, to
Google APIs).  Only Dataplane V2 (``datapathProvider: ADVANCED_DATAPATH``) or the Calico
network-policy add-on enforce any of this on GKE; the stack creates the policies only on a
Dataplane V2 cluster (``cluster.dataplaneV2``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import pulumi

from components.k8s_object import KubeObject

NAME_LABEL: Final = "kubernetes.io/metadata.name"
DEFAULT_DENY: Final = "gpu-batch-default-deny-ingress"
SAME_NAMESPACE: Final = "gpu-batch-allow-same-namespace"
PLATFORM: Final = "gpu-batch-allow-platform"
GMP_NAMESPACE: Final = "gmp-system"
"""GKE Managed Service for Prometheus runs its collectors in ``gmp-system`` (GKE docs,
stackdriver/docs/managed-prometheus/setup-managed)."""

ALL_PODS: Final[dict[str, Any]] = {}


def policies(namespace: str, platform_namespaces: Sequence[str]) -> list[dict[str, Any]]:
    """The team namespace's NetworkPolicies, in wire form (name, namespace, spec)."""
    out: list[dict[str, Any]] = [
        {"name": DEFAULT_DENY, "spec": {"podSelector": ALL_PODS, "policyTypes": ["Ingress"]}},
        {
            "name": SAME_NAMESPACE,
            "spec": {
                "podSelector": ALL_PODS,
                "policyTypes": ["Ingress"],
                "ingress": [{"from": [{"podSelector": ALL_PODS}]}],
            },
        },
    ]
    platform = sorted(set(platform_namespaces))
    if platform:
        selector = {"matchExpressions": [{"key": NAME_LABEL, "operator": "In", "values": platform}]}
        out.append(
            {
                "name": PLATFORM,
                "spec": {
                    "podSelector": ALL_PODS,
                    "policyTypes": ["Ingress"],
                    "ingress": [{"from": [{"namespaceSelector": selector}]}],
                },
            }
        )
    return [{**p, "namespace": namespace} for p in out]


def create(
    name: str,
    namespace: str,
    platform_namespaces: Sequence[str],
    opts: pulumi.ResourceOptions,
) -> list[KubeObject]:
    """Register the policies of :func:`policies` as ``networking.k8s.io/v1`` NetworkPolicies."""
    return [
        KubeObject(
            f"{name}-{policy['name'].removeprefix('gpu-batch-')}",
            api_version="networking.k8s.io/v1",
            kind="NetworkPolicy",
            metadata={"name": policy["name"], "namespace": namespace},
            spec=policy["spec"],
            opts=opts,
        )
        for policy in policies(namespace, platform_namespaces)
    ]
