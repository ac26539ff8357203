"""Per-team Workload Identity (issue 27 #8): a TeamIdentity for each team that asks for one."""

from __future__ import annotations

import pulumi

from components.team_identity import BucketAccess, TeamIdentity, TeamIdentityArgs
from components.tenancy import TeamTenancy
from stacks.config import StackConfig


def build_team_identities(
    config: StackConfig, project: str, provider: pulumi.ProviderResource, teams: dict[str, TeamTenancy]
) -> dict[str, TeamIdentity]:
    """The KSA lives in the team's namespace, so it waits for the Namespace (or its patch)."""
    out = {}
    for team in config.teams:
        wi = team.workload_identity
        if wi is None:
            continue
        out[team.name] = TeamIdentity(
            f"{team.name}-identity",
            TeamIdentityArgs(
                project=project,
                team=team.name,
                namespace=team.namespace_name,
                service_account=wi.service_account,
                buckets=tuple(BucketAccess(b.bucket, b.access) for b in wi.buckets),
            ),
            opts=pulumi.ResourceOptions(provider=provider, depends_on=[teams[team.name].namespace]),
        )
    return out
