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
  ``kubernetes.io/metadata.name`` label, each only to the ports it calls:

  - the KubeRay operator (``kuberay-system``) calls a Ray head's dashboard for RayJob submission
    and status and RayService applications (kuberay v1.7.0 ``ray-operator/controllers/ray/utils/
    dashboardclient/dashboard_httpclient.go``, reached through ``utils.FetchHeadServiceURL`` with
    ``DashboardPortName`` "dashboard", ``DefaultDashboardPort`` 8265) and a RayService head's
    Serve proxy health (``utils/httpproxy_httpclient.go`` ``CheckProxyActorHealth``, called from
    ``rayservice_controller.go`` on the head pod's ``ServingPortName`` "serve",
    ``DefaultServingPort`` 8000).  Never GCS (6379) or the client port (10001).
  - GKE Managed Prometheus (``gmp-system``) scrapes only what the stack's PodMonitorings name in
    team namespaces: the Ray pods' ``metrics`` container port (``components.monitoring``
    ``ray_pods_scrape``; KubeRay adds it, 8080, when a template has none).
  - a team's SkyPilot server is reached through GKE's Gateway, whose proxies are not pods of any
    namespace: ``components.gateway.objects.gateway_policy`` admits the proxy-only subnet and
    Google's health-check ranges to the server's port only.

  Each port is listed by number and by its container-port name, so a renumbered named port and
  an unnamed default one both match (NetworkPolicyPort.port: "a named port on a pod").

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
from components.kuberay import KUBERAY_NAMESPACE
from components.monitoring import ray_pods_scrape

NAME_LABEL: Final = "kubernetes.io/metadata.name"
DEFAULT_DENY: Final = "gpu-batch-default-deny-ingress"
SAME_NAMESPACE: Final = "gpu-batch-allow-same-namespace"
PLATFORM: Final = "gpu-batch-allow-platform"
GMP_NAMESPACE: Final = "gmp-system"
"""GKE Managed Service for Prometheus runs its collectors in ``gmp-system`` (GKE docs,
stackdriver/docs/managed-prometheus/setup-managed)."""

ALL_PODS: Final[dict[str, Any]] = {}
# kuberay v1.7.0 ray-operator/controllers/ray/utils/constant.go (see the module docstring).
KUBERAY_PORTS: Final[tuple[int | str, ...]] = (8265, "dashboard", 8000, "serve")
GMP_PORTS: Final[tuple[int | str, ...]] = (ray_pods_scrape().endpoint.port,)
# The ports each platform namespace may reach; a platform namespace not listed reaches every port.
PLATFORM_PORTS: Final[dict[str, tuple[int | str, ...]]] = {
    KUBERAY_NAMESPACE: KUBERAY_PORTS,
    GMP_NAMESPACE: GMP_PORTS,
}


def _from(namespaces: Sequence[str]) -> dict[str, Any]:
    selector = {"matchExpressions": [{"key": NAME_LABEL, "operator": "In", "values": list(namespaces)}]}
    return {"from": [{"namespaceSelector": selector}]}


def platform_rules(platform_namespaces: Sequence[str]) -> list[dict[str, Any]]:
    """One ingress rule per port-restricted platform namespace, one for the others (every port)."""
    platform = sorted(set(platform_namespaces))
    rules = [
        {**_from([ns]), "ports": [{"protocol": "TCP", "port": p} for p in PLATFORM_PORTS[ns]]}
        for ns in platform
        if ns in PLATFORM_PORTS
    ]
    open_ports = [ns for ns in platform if ns not in PLATFORM_PORTS]
    return rules + ([_from(open_ports)] if open_ports else [])


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
    rules = platform_rules(platform_namespaces)
    if rules:
        out.append(
            {
                "name": PLATFORM,
                "spec": {"podSelector": ALL_PODS, "policyTypes": ["Ingress"], "ingress": rules},
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
