"""The SkyPilot servers' Gateway for one cluster (components.gateway), from the stack config."""

from __future__ import annotations

import pulumi

from components.gateway import GatewayTeam, SkypilotGateway, SkypilotGatewayArgs
from components.gateway.cloud import GatewayCloudArgs
from components.gke import GkeClusterArgs
from components.network import DEFAULT_NETWORK, region_of
from stacks.compose.queues import QueueLayer
from stacks.config import StackConfig
from stacks.config.tenancy import skypilot_teams


def build_gateway(
    config: StackConfig,
    cluster: GkeClusterArgs,
    provider: pulumi.ProviderResource,
    queues: QueueLayer,
    prefix: str = "",
) -> SkypilotGateway | None:
    """One Gateway when some team runs a SkyPilot server; the config checks guarantee its keys."""
    teams = skypilot_teams(config.teams)
    if not teams:
        return None
    gateway = config.skypilot_gateway
    assert gateway.domain and gateway.dns_zone and gateway.proxy_subnet_range  # check_skypilot_gateway
    servers = [queues.skypilot[t.name] for t in teams]
    return SkypilotGateway(
        f"{prefix}skypilot-gateway",
        SkypilotGatewayArgs(
            cloud=GatewayCloudArgs(
                project=cluster.project,
                region=region_of(cluster.location),
                network=cluster.network or DEFAULT_NETWORK,
                subnetwork=cluster.subnetwork or DEFAULT_NETWORK,
                domain=gateway.domain,
                dns_zone=gateway.dns_zone,
                proxy_subnet_range=gateway.proxy_subnet_range,
                create_proxy_subnet=gateway.create_proxy_subnet,
                prefix=cluster.name,
            ),
            teams=tuple(
                GatewayTeam(team=t.name, namespace=t.namespace_name, release_name=server.release_name)
                for t, server in zip(teams, servers, strict=True)
            ),
            network_isolation=cluster.dataplane_v2,
        ),
        provider,
        depends_on=[s.release for s in servers],
        opts=pulumi.ResourceOptions(provider=provider),
    )
