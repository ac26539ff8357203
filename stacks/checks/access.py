"""Checks of who can reach the cluster and whose RBAC binds (issue 19 #1, #4).

- Team ``members.groups`` become ``Group`` subjects of RoleBindings.  GKE puts a user's Google
  Groups into the request only when the cluster has Google Groups for RBAC
  (``authenticatorGroupsConfig.securityGroup: gke-security-groups@<domain>``; GKE docs,
  how-to/google-groups-rbac), so without ``cluster.securityGroup`` those bindings bind nobody.
  The pack's ``rbac-groups-bind`` judges the same for any program.
- ``dnsEndpoint`` turns the IP endpoints off (``controlPlaneEndpointsConfig.ipEndpointsConfig.
  enabled: false``), so ``masterAuthorizedNetworks`` (which filters the IP endpoint) would
  silently do nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

from stacks.config import StackConfig
from stacks.config.tenancy import TEAMS_KEY, check_skypilot_gateway
from stacks.errors import ConfigIssue

CLUSTER_KEY = "gpu-batch:cluster"


def check_access(config: StackConfig) -> Iterator[ConfigIssue]:
    yield from check_skypilot_gateway(config.skypilot_gateway, config.teams)
    cluster = config.cluster
    if cluster.security_group is None:
        for index, team in enumerate(config.teams):
            if team.members.groups:
                yield ConfigIssue(
                    f"{CLUSTER_KEY}.securityGroup",
                    f"gke-security-groups@<your domain>: {TEAMS_KEY}[{index}].members.groups "
                    f"{team.members.groups} are Group subjects, which bind nobody unless GKE's Google Groups "
                    "for RBAC is on",
                )
                break
    if cluster.dns_endpoint and cluster.master_authorized_networks is not None:
        yield ConfigIssue(
            f"{CLUSTER_KEY}.masterAuthorizedNetworks",
            "no value with dnsEndpoint: true (the IP endpoints it filters are off)",
            cluster.master_authorized_networks,
        )
