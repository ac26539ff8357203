"""The SkyPilot API servers' shared entry: GKE's built-in Gateway API, no ingress controller.

Replaces the ingress-nginx release of issue 19 (its project was retired by Kubernetes SIG
Network: kubernetes.io blog 2025-11-11, "Ingress NGINX Retirement").  GKE runs the Gateway
controller itself once the cluster's ``gatewayApiConfig.channel`` is ``CHANNEL_STANDARD``
(:mod:`components.gke`); nothing runs in the cluster for it, so no chart, no webhook port and no
pod of ours sits in front of the servers.  What is created: :mod:`components.gateway.cloud`
(subnet, address, certificate, DNS) and :mod:`components.gateway.objects` (Gateway, per-team
HTTPRoute, HealthCheckPolicy and GCPBackendPolicy).  The servers authenticate every request themselves
(:mod:`components.skypilot`): the load balancer only carries TLS.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi

from components.gateway import cloud, objects
from components.k8s_object import KubeObject
from components.operator_release import operator_namespace


@dataclass(frozen=True)
class GatewayTeam:
    team: str
    namespace: str
    release_name: str


@dataclass(frozen=True)
class SkypilotGatewayArgs:
    cloud: cloud.GatewayCloudArgs
    teams: tuple[GatewayTeam, ...]
    # The cluster enforces NetworkPolicies (Dataplane V2): each server then needs the policy that
    # admits the load balancer past its namespace's default deny (objects.gateway_policy).
    network_isolation: bool = False


def _register(name: str, wire: Mapping[str, object], opts: pulumi.ResourceOptions) -> KubeObject:
    metadata = wire["metadata"]
    spec = wire["spec"]
    assert isinstance(metadata, Mapping) and isinstance(spec, Mapping)
    return KubeObject(
        name,
        api_version=str(wire["apiVersion"]),
        kind=str(wire["kind"]),
        metadata=metadata,
        spec=spec,
        opts=opts,
    )


class SkypilotGateway(pulumi.ComponentResource):
    """Namespace ``skypilot-gateway`` with the Gateway; per team its HTTPRoute and health check."""

    gateway: KubeObject
    routes: dict[str, KubeObject]

    def __init__(
        self,
        name: str,
        args: SkypilotGatewayArgs,
        provider: pulumi.ProviderResource,
        depends_on: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpu-batch:skypilot:Gateway", name, None, opts)
        made = cloud.create(name, args.cloud, self)
        namespace = operator_namespace(f"{name}-namespace", objects.GATEWAY_NAMESPACE, self)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=provider)
        self.gateway = _register(
            f"{name}-gateway",
            objects.gateway(
                args.cloud.domain,
                made.certificate_name,
                made.address_name,
                [t.namespace for t in args.teams],
            ),
            in_cluster.merge(pulumi.ResourceOptions(depends_on=[namespace, *made.resources, *depends_on])),
        )
        self.routes = {}
        for team in args.teams:
            self.routes[team.team] = _register(
                f"{name}-route-{team.team}",
                objects.route(team.team, team.namespace, team.release_name, args.cloud.domain),
                in_cluster.merge(pulumi.ResourceOptions(depends_on=[self.gateway, *depends_on])),
            )
            for suffix, wire in (
                ("health", objects.health_check(team.namespace, team.release_name)),
                ("backend", objects.backend_policy(team.namespace, team.release_name)),
            ):
                _register(
                    f"{name}-{suffix}-{team.team}",
                    wire,
                    in_cluster.merge(pulumi.ResourceOptions(depends_on=list(depends_on))),
                )
            if args.network_isolation:
                _register(
                    f"{name}-netpol-{team.team}",
                    objects.gateway_policy(team.namespace, team.release_name, args.cloud.proxy_subnet_range),
                    in_cluster.merge(pulumi.ResourceOptions(depends_on=list(depends_on))),
                )
        self.register_outputs({"namespace": objects.GATEWAY_NAMESPACE, "domain": args.cloud.domain})
