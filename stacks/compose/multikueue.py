"""A MultiKueue stack: the manager cluster, then each worker, then the manager's MultiKueue objects.

Each cluster is :func:`stacks.compose.build_cluster` of its derived config
(``stacks.config.multikueue``) through its own Kubernetes provider: the manager under the names a
single cluster has (its ClusterQueues carrying only the ``multikueue`` check), each worker under
``<worker>-`` names, so URNs are deterministic per worker name and adding a worker changes no
other resource.  Project IAM is granted once (the manager's build).  Each worker then gets the
ServiceAccount access of Kueue's create-multikueue-kubeconfig.sh for the integrations its Kueue
enables, and the manager the Secret, MultiKueueCluster, MultiKueueConfig (workers in config order)
and AdmissionCheck (``components/multikueue.py``) once its Kueue serves.

With ``credentials: clusterProfile`` (``components/multikueue_fleet.py``) no ServiceAccount or
Secret is made: every cluster joins the project's fleet, the manager carries the
fleet-clusterinventory labels, the project gets the fleet APIs and the Kueue principal's roles,
the manager's Kueue the gate, access provider and auth plugin, and each MultiKueueCluster a
``clusterProfileRef``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from components.multikueue import (
    ManagerArgs,
    MultiKueueManager,
    MultiKueueWorkerAccess,
    WorkerAccessArgs,
    WorkerLink,
    token_kubeconfig,
)
from components.multikueue_fleet import (
    MANAGER_LABELS,
    AuthPluginArgs,
    AuthPluginPatch,
    FleetAccess,
    cluster_profile_name,
)
from stacks.compose import Platform, build_cluster, export_cluster
from stacks.compose.queues import workload_needs
from stacks.compose.schedulers import kueue_configuration
from stacks.config import StackConfig
from stacks.config.multikueue import manager_config, worker_config

CHECK_NAME = "multikueue"


@dataclass(frozen=True)
class MultiKueuePlatform:
    manager: Platform
    workers: dict[str, Platform]
    objects: MultiKueueManager


def build_multikueue(config: StackConfig, project: str) -> MultiKueuePlatform:
    mk = config.multi_kueue
    assert mk is not None
    manager_cfg = manager_config(config)
    fleet = mk.credentials == "clusterProfile"
    manager = build_cluster(
        manager_cfg, project, extra_checks=(CHECK_NAME,), fleet_labels=MANAGER_LABELS if fleet else None
    )
    export_cluster(manager_cfg, manager)
    workers: dict[str, Platform] = {}
    links: list[WorkerLink] = []
    for worker in mk.workers:
        cfg = worker_config(config, worker)
        platform = build_cluster(
            cfg, project, prefix=f"{worker.name}-", access=False, fleet_labels={} if fleet else None
        )
        workers[worker.name] = platform
        assert platform.schedulers.kueue is not None  # checks: multiKueue needs kueue.enabled
        if fleet:
            links.append(
                WorkerLink(
                    worker.name,
                    cluster_profile=cluster_profile_name(worker.cluster.name, worker.cluster.location),
                )
            )
            continue
        access = MultiKueueWorkerAccess(
            f"{worker.name}-multikueue",
            WorkerAccessArgs(frameworks=kueue_configuration(cfg, workload_needs(cfg)).frameworks),
            opts=pulumi.ResourceOptions(
                provider=platform.provider, depends_on=[platform.schedulers.kueue.release]
            ),
        )
        links.append(
            WorkerLink(
                worker.name,
                token_kubeconfig(
                    worker.cluster.name, platform.cluster.cluster.endpoint, access.token_secret.data
                ),
            )
        )
    assert manager.schedulers.kueue is not None
    waits: list[pulumi.Resource] = [manager.kueue_ready or manager.schedulers.kueue.release]
    if fleet:
        assert mk.auth_plugin_image is not None  # checks: clusterProfile needs authPluginImage
        waits.append(FleetAccess("multikueue-fleet", project))
        waits.append(
            AuthPluginPatch(
                "multikueue-auth-plugin",
                AuthPluginArgs(image=mk.auth_plugin_image),
                opts=pulumi.ResourceOptions(
                    provider=manager.provider, depends_on=[manager.schedulers.kueue.release]
                ),
            )
        )
    objects = MultiKueueManager(
        "multikueue",
        ManagerArgs(workers=tuple(links), check_name=CHECK_NAME),
        opts=pulumi.ResourceOptions(provider=manager.provider, depends_on=waits),
    )
    pulumi.export(
        "multiKueue",
        {
            "dispatcher": mk.dispatcher,
            "credentials": mk.credentials,
            "workers": [
                {"name": w.name, "cluster": w.cluster.name, "location": w.cluster.location}
                for w in mk.workers
            ],
        },
    )
    return MultiKueuePlatform(manager=manager, workers=workers, objects=objects)
