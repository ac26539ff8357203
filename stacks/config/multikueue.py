"""MultiKueue across regions (key ``gpu-batch:multiKueue``): the stack's cluster becomes the manager.

Kueue v0.19.2 ``site/content/en/docs/concepts/multikueue.md``: a manager cluster reserves quota
and dispatches each Workload to worker clusters, each of which "acts like a standalone Kueue
cluster" and runs the job.  So the stack's ``cluster`` (and its ``gpuPools``, usually none) is the
manager; each ``workers[]`` entry is one more GKE cluster with its own GPU pools.  ``kueueQueues``
and ``teams`` are declared once: every worker gets them as written (flavors on its own pools, the
DWS ProvisioningRequest checks), and the manager gets the same ClusterQueues and LocalQueues with
only the MultiKueue check (:func:`manager_config`, :func:`worker_config`); with ``credentials:
clusterProfile`` the manager's Kueue also runs the ``MultiKueueClusterProfile`` gate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from stacks.base import ConfigModel, DnsLabel
from stacks.config.cluster import ClusterConfig, GpuPoolConfig
from stacks.config.queues import ResourceGroupConfig, ResourceQuotaConfig
from stacks.quantity import times

if TYPE_CHECKING:
    from stacks.config import StackConfig

# Kueue v0.19.2 apis/config/v1beta2/configuration_types.go: MultiKueueDispatcherModeAllAtOnce /
# MultiKueueDispatcherModeIncremental (the default is all-at-once, apis/config/v1beta2/defaults.go).
# Kueue v0.19.2 pkg/features/kube_features.go MultiKueueClusterProfile (Alpha since 0.15, off).
CLUSTER_PROFILE_GATE = "MultiKueueClusterProfile"

DISPATCHERS = {
    "AllAtOnce": "kueue.x-k8s.io/multikueue-dispatcher-all-at-once",
    "Incremental": "kueue.x-k8s.io/multikueue-dispatcher-incremental",
}


class WorkerConfig(ConfigModel):
    """One worker cluster: its own GKE cluster (usually another region) and GPU pools."""

    name: DnsLabel = Field(
        description="Worker name: its MultiKueueCluster, kubeconfig Secret and resource names derive from it."
    )
    cluster: ClusterConfig = Field(description="The worker's GKE cluster (same keys as cluster.*).")
    gpu_pools: list[GpuPoolConfig] = Field(
        default_factory=list,
        description="The worker's GPU pools (same keys as gpuPools[]); kueueQueues flavors name them.",
    )


class MultiKueueConfig(ConfigModel):
    """A manager (the stack's cluster) dispatching to workers in config order."""

    dispatcher: Literal["AllAtOnce", "Incremental"] = Field(
        "AllAtOnce",
        description="Kueue's MultiKueue dispatcher: AllAtOnce (every worker at once) or Incremental "
        "(workers nominated in rounds, in workers[] order).",
    )
    workers: list[WorkerConfig] = Field(
        min_length=1, description="Worker clusters, most preferred first (MultiKueueConfig order)."
    )
    credentials: Literal["token", "clusterProfile"] = Field(
        "token",
        description="How the manager's Kueue signs in to the workers: token (a per-worker ServiceAccount "
        "token kubeconfig in a Secret) or clusterProfile (GKE Fleet ClusterProfiles through Connect "
        "Gateway, gke-fleet-management multikueue-clusterprofile; needs authPluginImage).",
    )
    auth_plugin_image: str | None = Field(
        None,
        description="credentials: clusterProfile only: the image holding /gcp-auth-plugin that an init "
        "container copies into the manager's Kueue (built from gke-fleet-management gcp-auth-plugin; "
        "Google publishes no official image yet).",
    )


def worker_config(config: StackConfig, worker: WorkerConfig) -> StackConfig:
    """The single-cluster config a worker is built from: its cluster and pools, the declared queues
    and teams as written, no workloads (the manager dispatches them) and no MultiKueue."""
    return config.model_copy(
        update={
            "cluster": worker.cluster,
            "gpu_pools": worker.gpu_pools,
            "workloads": [],
            "multi_kueue": None,
        }
    )


def manager_config(config: StackConfig) -> StackConfig:
    """The manager's single-cluster config: the same ClusterQueues and LocalQueues, flavors without
    pools (no pod runs on the manager) and no ProvisioningRequest checks (they belong on the workers;
    Kueue inactivates a ClusterQueue holding both, ``MultiKueueWithProvisioningRequest``).  It keeps
    ``multiKueue``: the manager's Kueue Configuration names the dispatcher.  Its quotas are the
    workers' total (:func:`_total`)."""
    queues = config.kueue_queues
    workers = len(config.multi_kueue.workers) if config.multi_kueue else 1
    flavors = [f.model_copy(update={"pool": None, "node_labels": {}}) for f in queues.resource_flavors]
    cluster_queues = [
        cq.model_copy(update={"admission_checks": [], "resource_groups": _total(cq.resource_groups, workers)})
        for cq in queues.cluster_queues
    ]
    cohorts = [
        c.model_copy(update={"resource_groups": _total(c.resource_groups, workers)}) for c in queues.cohorts
    ]
    kueue = config.kueue
    if config.multi_kueue is not None and config.multi_kueue.credentials == "clusterProfile":
        # Kueue v0.19.2 multikueuecluster.go loadClientConfig: a clusterProfileRef needs the gate.
        kueue = kueue.model_copy(
            update={"feature_gates": {**kueue.feature_gates, CLUSTER_PROFILE_GATE: True}}
        )
    return config.model_copy(
        update={
            "kueue": kueue,
            "kueue_queues": queues.model_copy(
                update={
                    "resource_flavors": flavors,
                    "admission_checks": [],
                    "cluster_queues": cluster_queues,
                    "cohorts": cohorts,
                }
            ),
        }
    )


def _total(groups: list[ResourceGroupConfig], workers: int) -> list[ResourceGroupConfig]:
    """The workers' total of each quota (every worker holds the queues as written): Kueue's
    MultiKueue concept page, "the quota in the manager cluster should equal the total quota
    available in all worker clusters"."""

    def scaled(quota: ResourceQuotaConfig) -> ResourceQuotaConfig:
        return quota.model_copy(
            update={
                key: times(value, workers)
                for key, value in (
                    ("nominal_quota", quota.nominal_quota),
                    ("borrowing_limit", quota.borrowing_limit),
                    ("lending_limit", quota.lending_limit),
                )
                if value is not None
            }
        )

    return [
        g.model_copy(
            update={
                "flavors": [
                    f.model_copy(update={"resources": {r: scaled(q) for r, q in f.resources.items()}})
                    for f in g.flavors
                ]
            }
        )
        for g in groups
    ]
