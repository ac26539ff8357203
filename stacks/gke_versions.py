"""Which GKE version a new cluster gets, checked against what queued pools need.

Why not pin ``minMasterVersion`` next to a release channel: with a channel, GKE auto-upgrades the
control plane past the minimum, and a minimum that has left the channel cannot be used to create
a cluster at all (GKE docs, concepts/release-channels, "What versions are available in a
channel"; pulumi_gcp ``Cluster.min_master_version``: "GKE will auto-update the master to new
versions, so this does not guarantee the current master version").  So the stacks leave it
unset and take the channel's default, and the program asks GKE which version that is
(``gcp.container.get_engine_versions``, ``releaseChannelDefaultVersion``) and refuses a channel
whose default is older than queued provisioning needs: 1.28.3-gke.1098000 for queued
provisioning (GKE concepts/cluster-autoscaler) and 1.32.2-gke.1652000 for flex-start with queued
provisioning (GKE how-to/provisioningrequest; reference/kueue.md §7).  The checked default is
then passed as the cluster's ``minMasterVersion``, so a reviewer (and the policy pack) sees the
version a new cluster gets; on later runs a newer default only raises the minimum, and the
provider upgrades the master only when its current version is lower (terraform-provider-google
``resource_container_cluster.go`` update of ``min_master_version``), so nothing is replaced.  The
offline preview answers the invoke with a stand-in (``preview/mocks.py``).
"""

from __future__ import annotations

import pulumi_gcp as gcp

from stacks.checks.cluster import gke_version
from stacks.config.cluster import (
    QUEUED_FLEX_START_MIN_VERSION,
    QUEUED_PROVISIONING_MIN_VERSION,
    ClusterConfig,
    GpuPoolConfig,
)
from stacks.errors import ConfigError, ConfigIssue


def required_version(pools: list[GpuPoolConfig]) -> str | None:
    """The oldest control plane the stack's pools accept; None when any version will do."""
    if any(p.provisioning == "queued" for p in pools):
        return max(QUEUED_PROVISIONING_MIN_VERSION, QUEUED_FLEX_START_MIN_VERSION, key=gke_version)
    return None


def check_channel_default(cluster: ClusterConfig, pools: list[GpuPoolConfig], project: str) -> str | None:
    """The channel's default version when the stack relies on it; raises ConfigError if too old.

    Only asked when ``minMasterVersion`` is unset and a pool needs a minimum.
    """
    needed = required_version(pools)
    if needed is None or cluster.min_master_version is not None:
        return None
    versions = gcp.container.get_engine_versions(location=cluster.location, project=project)
    default = (versions.release_channel_default_version or {}).get(cluster.release_channel)
    if default is None:
        raise ConfigError(
            [
                ConfigIssue(
                    "gpu-batch:cluster.releaseChannel",
                    f"a release channel GKE offers in {cluster.location} (it reports no default version "
                    f"for it), or minMasterVersion {needed} or newer",
                    cluster.release_channel,
                )
            ]
        )
    if gke_version(default) < gke_version(needed):
        raise ConfigError(
            [
                ConfigIssue(
                    "gpu-batch:cluster.releaseChannel",
                    f"a channel whose default version is at least {needed} (queued pools need it; "
                    f"{cluster.release_channel}'s default in {cluster.location} is {default}), or "
                    "minMasterVersion set to such a version",
                    cluster.release_channel,
                )
            ]
        )
    return default
