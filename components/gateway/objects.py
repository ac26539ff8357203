"""The Gateway API objects that put each team's SkyPilot API server behind GKE's internal L7
load balancer, in wire form (pure functions, so tests compare them byte for byte).

* One ``gateway.networking.k8s.io/v1`` Gateway of class ``gke-l7-rilb`` (GKE's regional internal
  Application Load Balancer; GKE docs concepts/gateway-api, "GatewayClass capabilities"), owned by
  no team, in :data:`GATEWAY_NAMESPACE`.  One HTTPS listener for ``*.<domain>``: TLS terminates at
  the load balancer with a Certificate Manager certificate named in the listener's
  ``tls.options["networking.gke.io/cert-manager-certs"]`` (GKE docs how-to/secure-gateway,
  "Certificate Manager"); no HTTP listener, so no path carries the server's credentials in clear.
  Routes are accepted only from the namespaces named in ``allowedRoutes`` (Gateway API v1
  ``AllowedRoutes``, ``from: Selector``), so a team cannot attach a route for another host.
* One HTTPRoute per team, in the team's namespace, for host ``<team>.<domain>`` to the chart's
  Service ``<release>-api-service`` port 80 (skypilot 0.13.0 ``templates/api-service.yaml``).  A
  route depends on its team's name only: reordering or adding teams changes no other team's route.
* One ``networking.gke.io/v1`` HealthCheckPolicy per team: GKE's default Gateway health check asks
  ``/`` on the serving port (GKE docs how-to/configure-gateway-resources, "Configure health
  check"), which the server answers 401 once it authenticates requests itself; ``/api/health`` is
  the one path its BasicAuthMiddleware lets through unauthenticated (skypilot 0.13.0
  ``sky/server/server.py`` ``BasicAuthMiddleware.dispatch``) and the chart's readiness probe
  (values.yaml ``apiService.readinessProbe``).

* One ``networking.gke.io/v1`` GCPBackendPolicy per team: the load balancer's backend timeout
  defaults to 30 s (gke-gateway-api v1.4.0 ``config/crd/networking.gke.io_gcpbackendpolicies.yaml``
  ``timeoutSec``: "If the field is omitted, a default value (30s) will be used"), which would cut
  ``sky logs`` and launch streams; the chart's own ingress allowed 3600 s
  (skypilot 0.13.0 ``templates/ingress.yaml`` ``proxy-read-timeout``/``proxy-send-timeout``).

There is no CRD schema for these kinds under ``../shared/schemas``: the preview reports them as not
validated against a schema, and this module's tests check their shape against the Gateway API
fields they use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from components.tenant_network import NAME_LABEL

GATEWAY_API: Final = "gateway.networking.k8s.io/v1"
GKE_NETWORKING_API: Final = "networking.gke.io/v1"
GATEWAY_CLASS: Final = "gke-l7-rilb"
GATEWAY_NAMESPACE: Final = "skypilot-gateway"
GATEWAY_NAME: Final = "skypilot"
LISTENER: Final = "https"
HTTPS_PORT: Final = 443
CERT_MANAGER_OPTION: Final = "networking.gke.io/cert-manager-certs"
ROUTE_NAME: Final = "skypilot"
# skypilot 0.13.0 templates/api-service.yaml (port 80 -> targetPort 46580) and values.yaml
# apiService.readinessProbe (/api/health on 46580).
SERVICE_PORT: Final = 80
SERVER_PORT: Final = 46580
HEALTH_PATH: Final = "/api/health"


def team_host(team: str, domain: str) -> str:
    """The one host a team's server answers on: ``<team>.<domain>``."""
    return f"{team}.{domain}"


def service_name(release_name: str) -> str:
    """The chart's API Service (skypilot 0.13.0 templates/api-service.yaml ``<fullname>-api-service``)."""
    return f"{release_name}-api-service"


def gateway(domain: str, certificate: str, address: str, namespaces: Sequence[str]) -> dict[str, Any]:
    """The shared Gateway: one HTTPS listener for every team's host, routes only from team namespaces."""
    return {
        "apiVersion": GATEWAY_API,
        "kind": "Gateway",
        "metadata": {"name": GATEWAY_NAME, "namespace": GATEWAY_NAMESPACE},
        "spec": {
            "gatewayClassName": GATEWAY_CLASS,
            # A reserved regional internal address (GKE docs how-to/deploying-gateways, "Configure
            # a static IP address"): the wildcard DNS record points at it before the Gateway exists.
            "addresses": [{"type": "NamedAddress", "value": address}],
            "listeners": [
                {
                    "name": LISTENER,
                    "protocol": "HTTPS",
                    "port": HTTPS_PORT,
                    "hostname": f"*.{domain}",
                    "tls": {"mode": "Terminate", "options": {CERT_MANAGER_OPTION: certificate}},
                    "allowedRoutes": {
                        "kinds": [{"kind": "HTTPRoute"}],
                        "namespaces": {
                            "from": "Selector",
                            "selector": {
                                "matchExpressions": [
                                    {"key": NAME_LABEL, "operator": "In", "values": sorted(set(namespaces))}
                                ]
                            },
                        },
                    },
                }
            ],
        },
    }


def route(team: str, namespace: str, release_name: str, domain: str) -> dict[str, Any]:
    """The team's HTTPRoute: its host, every path, to its own server's Service."""
    return {
        "apiVersion": GATEWAY_API,
        "kind": "HTTPRoute",
        "metadata": {"name": ROUTE_NAME, "namespace": namespace},
        "spec": {
            "parentRefs": [{"name": GATEWAY_NAME, "namespace": GATEWAY_NAMESPACE, "sectionName": LISTENER}],
            "hostnames": [team_host(team, domain)],
            "rules": [{"backendRefs": [{"name": service_name(release_name), "port": SERVICE_PORT}]}],
        },
    }


# skypilot 0.13.0 templates/ingress.yaml: nginx.ingress.kubernetes.io/proxy-read-timeout "3600".
BACKEND_TIMEOUT_SECONDS: Final = 3600


def backend_policy(namespace: str, release_name: str) -> dict[str, Any]:
    """GCPBackendPolicy on the server's Service: the chart ingress's one-hour timeout."""
    return {
        "apiVersion": GKE_NETWORKING_API,
        "kind": "GCPBackendPolicy",
        "metadata": {"name": f"{release_name}-backend", "namespace": namespace},
        "spec": {
            "default": {"timeoutSec": BACKEND_TIMEOUT_SECONDS},
            "targetRef": {"group": "", "kind": "Service", "name": service_name(release_name)},
        },
    }


def health_check(namespace: str, release_name: str) -> dict[str, Any]:
    """HealthCheckPolicy on the server's Service: HTTP ``/api/health`` on the container port."""
    return {
        "apiVersion": GKE_NETWORKING_API,
        "kind": "HealthCheckPolicy",
        "metadata": {"name": f"{release_name}-health", "namespace": namespace},
        "spec": {
            "default": {
                "config": {
                    "type": "HTTP",
                    "httpHealthCheck": {"port": SERVER_PORT, "requestPath": HEALTH_PATH},
                }
            },
            "targetRef": {"group": "", "kind": "Service", "name": service_name(release_name)},
        },
    }


GATEWAY_POLICY: Final = "gpu-batch-allow-skypilot-gateway"
# Google Cloud health-check probe ranges for regional internal Application Load Balancers (Cloud
# Load Balancing docs load-balancing/docs/firewall-rules, "Regional internal Application Load
# Balancer": health check ranges 35.191.0.0/16 and 130.211.0.0/22, plus the proxy-only subnet).
HEALTH_CHECK_RANGES: Final = ("35.191.0.0/16", "130.211.0.0/22")


def server_pod_labels(release_name: str) -> dict[str, str]:
    """The server pod's label (skypilot 0.13.0 templates/api-deployment.yaml ``app: <fullname>-api``)."""
    return {"app": f"{release_name}-api"}


def gateway_policy(namespace: str, release_name: str, proxy_subnet_range: str) -> dict[str, Any]:
    """NetworkPolicy letting the load balancer reach the team's server, and nothing else of the team.

    GKE's Gateway uses container-native load balancing: the Envoy proxies connect straight to the
    pod's IP from addresses of the proxy-only subnet ("Packets sent from a proxy to a backend VM or
    endpoint have a source IP address from the proxy-only subnet", Cloud Load Balancing docs
    proxy-only-subnets), and health probes come from Google's probe ranges.  Neither is a pod, so a
    namespace selector cannot admit them: ``ipBlock`` peers on the server's container port only.
    Another team's pod is not in these ranges, so it is still refused by the namespace's default
    deny (components.tenant_network); it can reach the server only through the Gateway, which
    forwards nothing the server does not authenticate."""
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": GATEWAY_POLICY, "namespace": namespace},
        "spec": {
            "podSelector": {"matchLabels": server_pod_labels(release_name)},
            "policyTypes": ["Ingress"],
            "ingress": [
                {
                    "from": [
                        {"ipBlock": {"cidr": cidr}} for cidr in (proxy_subnet_range, *HEALTH_CHECK_RANGES)
                    ],
                    "ports": [{"protocol": "TCP", "port": SERVER_PORT}],
                }
            ],
        },
    }
