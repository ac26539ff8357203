"""Turn the queue layer's config into components: tenancy, Kueue and KAI queues, workloads, SkyPilot.

Called from :func:`stacks.compose.build` after the schedulers are installed.  Order within one
``pulumi up``: team namespaces and RBAC; then queue objects once their scheduler's release (CRDs
and webhooks) is up; then workloads once KubeRay and their queue exist; SkyPilot servers once
their namespace, their LocalQueue and (for all but the first) the ingress controller exist.

Also derives what the Kueue controller must enable for this layer (:func:`workload_needs`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import pulumi

from components.gateway.objects import team_host
from components.gpu_pool import GPU_TAINT_KEY, GPU_TAINT_VALUE, NODEPOOL_LABEL
from components.gpudirect.pod_wiring import PodWiring, pod_wiring
from components.kai_queues import KaiQueueArgs, KaiQueues, KaiResource
from components.kai_topology import KaiTopologies, KaiTopologyArgs
from components.kuberay import KUBERAY_NAMESPACE
from components.kueue_config import MANAGED_NAMESPACE_LABEL
from components.kueue_queues import (
    CheckUse,
    ClusterQueueArgs,
    CohortArgs,
    FlavorArgs,
    FlavorQuotas,
    KueueQueues,
    KueueQueuesArgs,
    LocalQueueArgs,
    Preemption,
    PriorityClassArgs,
    ProvisioningCheckArgs,
    Quota,
    ResourceGroup,
    RetryArgs,
    Toleration,
    TopologyArgs,
)
from components.pool_admission import TenantPoolAdmission
from components.service_admission import TenantServiceAdmission
from components.skypilot import SkypilotServer, SkypilotServerArgs
from components.tenancy import TeamArgs, TeamTenancy, namespace_selector
from components.tenant_network import GMP_NAMESPACE
from components.workloads import RayJobArgs, RayPodArgs, RayWorkload, RayWorkloadArgs, queue_labels
from stacks.checks.gpudirect import workload_profile
from stacks.checks.topology import TOPOLOGIES, kai_topologies, kai_topology_name, topology_of_pool
from stacks.compose.readiness import ReadinessGates
from stacks.compose.schedulers import Schedulers, WorkloadNeeds
from stacks.config import StackConfig
from stacks.config.kai_queues import KaiResourceConfig, walk
from stacks.config.queues import ResourceGroupConfig
from stacks.config.tenancy import TeamConfig, skypilot_teams, team_namespaces
from stacks.config.workloads import RayPodConfig, WorkerGroupConfig, WorkloadConfig
from stacks.skypilot_secrets import skypilot_passwords

# GKE taints queued-provisioning nodes with this key (reference/kueue.md §8); cluster-toolkit's
# DWS examples tolerate it explicitly.  Exists, so the taint's value does not matter.
QUEUED_TAINT_KEY = "cloud.google.com/gke-queued"


@dataclass(frozen=True)
class QueueLayer:
    teams: dict[str, TeamTenancy]
    kueue: KueueQueues | None
    kai: KaiQueues | None
    workloads: dict[str, RayWorkload]
    skypilot: dict[str, SkypilotServer]


def workload_needs(config: StackConfig) -> WorkloadNeeds:
    """What the Kueue controller must run for this layer: ``pod`` for SkyPilot's bare pods, fair
    sharing when any queue or cohort sets a fair-sharing weight."""
    queues = config.kueue_queues
    weights = [q.fair_sharing_weight for q in queues.cluster_queues] + [
        c.fair_sharing_weight for c in queues.cohorts
    ]
    return WorkloadNeeds(
        pod_integration=bool(skypilot_teams(config.teams)),
        fair_sharing=any(w is not None for w in weights),
    )


def build_queues(
    config: StackConfig,
    provider: pulumi.ProviderResource,
    schedulers: Schedulers,
    gates: ReadinessGates | None = None,
    *,
    gpu_runtime: pulumi.Resource | None = None,
    prefix: str = "",
    extra_checks: tuple[str, ...] = (),
) -> QueueLayer:
    """``gpu_runtime``: a gate the KAI workloads wait for (the GPU Operator's RuntimeClass);
    ``prefix`` starts the Pulumi names of the teams and queue objects (one cluster of several);
    ``extra_checks``: admission checks every ClusterQueue also carries, declared elsewhere -- a
    MultiKueue manager's check (a ClusterQueue waits inactive until its check exists)."""
    pods = bool(skypilot_teams(config.teams))
    # Team namespaces go before these controllers on destroy (TeamTenancy's ``controllers``).
    controllers = [s.release for s in (schedulers.kueue, schedulers.kai, schedulers.kuberay) if s is not None]
    teams = {
        team.name: TeamTenancy(
            f"{prefix}{team.name}",
            _team_args(team, config, pods),
            opts=pulumi.ResourceOptions(provider=provider),
            controllers=controllers,
        )
        for team in config.teams
    }
    namespaces: dict[str, pulumi.Resource] = {t.namespace_name: teams[t.name].namespace for t in config.teams}
    if namespaces:
        TenantServiceAdmission(
            f"{prefix}tenant-services", tuple(namespaces), opts=pulumi.ResourceOptions(provider=provider)
        )
        TenantPoolAdmission(
            f"{prefix}tenant-placement", tuple(namespaces), opts=pulumi.ResourceOptions(provider=provider)
        )
    kueue = None
    if schedulers.kueue is not None and has_kueue_objects(config):
        kueue = KueueQueues(
            f"{prefix}kueue-queues",
            _with_checks(replace(_kueue_args(config, namespaces), name_prefix=prefix), extra_checks),
            # After the webhooks serve (the gate), not merely after `helm install` returned.
            opts=pulumi.ResourceOptions(
                provider=provider,
                depends_on=[gates.kueue if gates and gates.kueue else schedulers.kueue.release],
            ),
        )
    if schedulers.kai is not None and (kai_levels := kai_topologies(config)):
        KaiTopologies(
            f"{prefix}kai-topologies",
            tuple(KaiTopologyArgs(name, levels) for name, levels in kai_levels.items()),
            opts=pulumi.ResourceOptions(
                provider=provider, depends_on=[gates.kai if gates and gates.kai else schedulers.kai.release]
            ),
        )
    kai = None
    if schedulers.kai is not None and config.kai_queues:
        kai = KaiQueues(
            f"{prefix}kai-queues",
            tuple(_kai_args(config)),
            opts=pulumi.ResourceOptions(
                provider=provider,
                depends_on=[gates.kai if gates and gates.kai else schedulers.kai.release],
            ),
        )
    workloads = {}
    by_team = {t.name: t for t in config.teams}
    for workload in config.workloads:
        team = by_team[workload.team]
        waits: list[pulumi.Resource] = [*([schedulers.kuberay.release] if schedulers.kuberay else [])]
        waits += _queue_dependencies(workload, team, kueue, kai)
        if workload.scheduler == "kai" and gpu_runtime is not None:
            waits.append(gpu_runtime)
        waits.append(namespaces[team.namespace_name])
        workloads[f"{team.namespace_name}/{workload.kind}/{workload.name}"] = RayWorkload(
            f"{team.namespace_name}-{workload.name}",
            _workload_args(workload, team, _wiring(config, workload), kai_topology_name(config)),
            opts=pulumi.ResourceOptions(provider=provider, depends_on=waits),
        )
    skypilot = _skypilot_servers(config, provider, teams, kueue, schedulers)
    return QueueLayer(teams=teams, kueue=kueue, kai=kai, workloads=workloads, skypilot=skypilot)


def _with_checks(args: KueueQueuesArgs, checks: tuple[str, ...]) -> KueueQueuesArgs:
    if not checks:
        return args
    queues = tuple(
        replace(cq, admission_checks=(*cq.admission_checks, *(CheckUse(c) for c in checks)))
        for cq in args.cluster_queues
    )
    return replace(args, cluster_queues=queues)


def _team_args(team: TeamConfig, config: StackConfig, pods: bool) -> TeamArgs:
    """``pods``: Kueue's pod integration is on (some team runs a SkyPilot API server)."""
    # Strict tenancy, or the pod integration: Kueue manages exactly the namespaces carrying this
    # label (compose.schedulers), so its fail-closed pod webhook sees the team namespaces only.
    labelled = bool(
        config.kueue.enabled and (config.kueue.manage_jobs_without_queue_name or pods) and team.local_queues
    )
    return TeamArgs(
        name=team.name,
        namespace=team.namespace_name,
        create_namespace=team.create_namespace,
        groups=tuple(team.members.groups),
        users=tuple(team.members.users),
        namespace_labels=dict(MANAGED_NAMESPACE_LABEL) if labelled else {},
        ray=config.kuberay.enabled,
        # Bare pods only where Kueue's pod integration manages them (the namespace is labelled,
        # by the Namespace or, for one that exists, by the NamespacePatch).
        pods_managed=pods and labelled,
        pod_security=team.pod_security,
        network_isolation=config.cluster.dataplane_v2,
        priority_classes=tuple(team.priority_classes) if team.priority_classes is not None else None,
        platform_namespaces=_platform_namespaces(config),
        **_team_queue(team, config),
    )


def _platform_namespaces(config: StackConfig) -> tuple[str, ...]:
    """Where the platform's connections into a team's pods come from: the KubeRay operator (it
    polls each Ray head's dashboard) and GKE Managed Prometheus (components.tenant_network).  A
    SkyPilot server's callers come through GKE's Gateway, from the proxy-only subnet, not from a
    namespace: components.gateway.objects.gateway_policy allows them."""
    return (*((KUBERAY_NAMESPACE,) if config.kuberay.enabled else ()), GMP_NAMESPACE)


def _team_queue(team: TeamConfig, config: StackConfig) -> dict[str, Any]:
    """The scheduler whose queue the team submits to and the queue names its admission policy
    accepts: the LocalQueue under Kueue, else the leaf KAI queue; neither: submits nothing."""
    if config.kueue.enabled and team.local_queues:
        return {"scheduler": "kueue", "queues": tuple(team.local_queues)}
    if config.kai.enabled and team.kai_queue is not None:
        return {"scheduler": "kai", "queues": (team.kai_queue,)}
    return {"scheduler": None, "queues": ()}


def has_kueue_objects(config: StackConfig) -> bool:
    q = config.kueue_queues
    return bool(
        q.resource_flavors or q.admission_checks or q.cohorts or q.cluster_queues or q.priority_classes
    )


def _kueue_args(config: StackConfig, namespaces: dict[str, pulumi.Resource]) -> KueueQueuesArgs:
    queues = config.kueue_queues
    admitted = team_namespaces(config.teams)
    pool_modes = {p.name: p.provisioning for p in config.gpu_pools}
    topology = {
        f.name: topology_of_pool(config, f.pool) if f.topology else None for f in queues.resource_flavors
    }
    return KueueQueuesArgs(
        flavors=tuple(
            replace(_flavor(f.name, f.pool, f.node_labels, pool_modes), topology_name=topology[f.name])
            for f in queues.resource_flavors
        ),
        topologies=tuple(
            TopologyArgs(name, TOPOLOGIES[name]) for name in sorted({t for t in topology.values() if t})
        ),
        checks=tuple(
            ProvisioningCheckArgs(
                name=c.name,
                provisioning_class_name=c.provisioning_class_name,
                managed_resources=tuple(c.managed_resources),
                pod_set_merge_policy=c.pod_set_merge_policy,
                parameters=dict(c.parameters),
                retry=RetryArgs(
                    c.retry_strategy.backoff_limit_count,
                    c.retry_strategy.backoff_base_seconds,
                    c.retry_strategy.backoff_max_seconds,
                )
                if c.retry_strategy
                else None,
            )
            for c in queues.admission_checks
        ),
        cohorts=tuple(
            CohortArgs(c.name, c.parent, c.fair_sharing_weight, _groups(c.resource_groups))
            for c in queues.cohorts
        ),
        cluster_queues=tuple(
            _cluster_queue(config, index, admitted) for index in range(len(queues.cluster_queues))
        ),
        local_queues=tuple(
            LocalQueueArgs(name, t.namespace_name, target)
            for t in config.teams
            for name, target in t.local_queues.items()
        ),
        priority_classes=tuple(
            PriorityClassArgs(p.name, p.value, p.description) for p in queues.priority_classes
        ),
        namespaces=namespaces,
    )


def _flavor(
    name: str, pool: str | None, extra_labels: Mapping[str, str], pool_modes: Mapping[str, str]
) -> FlavorArgs:
    """Select the pool by GKE's node-pool label and tolerate the taints its nodes carry."""
    labels = {NODEPOOL_LABEL: pool, **extra_labels} if pool is not None else dict(extra_labels)
    tolerations: list[Toleration] = []
    if pool is not None and pool in pool_modes:  # a GPU pool: gpu_pool.py taints every GPU node
        tolerations.append(Toleration(GPU_TAINT_KEY, operator="Equal", value=GPU_TAINT_VALUE))
        if pool_modes[pool] == "queued":
            tolerations.append(Toleration(QUEUED_TAINT_KEY))
    return FlavorArgs(name=name, node_labels=labels, tolerations=tuple(tolerations))


def _groups(groups: list[ResourceGroupConfig]) -> tuple[ResourceGroup, ...]:
    return tuple(
        ResourceGroup(
            covered_resources=tuple(g.covered_resources),
            flavors=tuple(
                FlavorQuotas(
                    f.name,
                    tuple(
                        Quota(resource, q.nominal_quota, q.borrowing_limit, q.lending_limit)
                        for resource, q in f.resources.items()
                    ),
                )
                for f in g.flavors
            ),
        )
        for g in groups
    )


def _cluster_queue(config: StackConfig, index: int, admitted: Mapping[str, list[str]]) -> ClusterQueueArgs:
    """``admitted``: per queue, the team namespaces its selector admits (``team_namespaces``)."""
    cq = config.kueue_queues.cluster_queues[index]
    selector = {} if cq.admit_namespaces == "all" else namespace_selector(admitted.get(cq.name, []))
    p = cq.preemption
    return ClusterQueueArgs(
        name=cq.name,
        resource_groups=_groups(cq.resource_groups),
        namespace_selector=selector,
        cohort=cq.cohort,
        queueing_strategy=cq.queueing_strategy,
        preemption=Preemption(
            p.within_cluster_queue, p.reclaim_within_cohort, p.borrow_within_cohort, p.max_priority_threshold
        ),
        fair_sharing_weight=cq.fair_sharing_weight,
        admission_checks=tuple(CheckUse(u.name, tuple(u.on_flavors)) for u in cq.admission_checks),
        mix_accelerator_types=cq.mix_accelerator_types,
    )


def _kai_args(config: StackConfig) -> list[KaiQueueArgs]:
    def resource(spec: KaiResourceConfig) -> KaiResource:
        return KaiResource(spec.quota, spec.limit, spec.over_quota_weight)

    return [
        KaiQueueArgs(
            name=queue.name,
            cpu=resource(queue.resources.cpu),
            gpu=resource(queue.resources.gpu),
            memory=resource(queue.resources.memory),
            parent=parent,
            priority=queue.priority,
            display_name=queue.display_name,
        )
        for _, queue, parent in walk(config.kai_queues)  # depth first: parents before children
    ]


def _queue_dependencies(
    workload: WorkloadConfig, team: TeamConfig, kueue: KueueQueues | None, kai: KaiQueues | None
) -> list[pulumi.Resource]:
    if workload.scheduler == "kueue" and kueue is not None:
        lq = kueue.local_queues.get(f"{team.namespace_name}/{team.local_queue}")
        return [lq] if lq is not None else []
    if workload.scheduler == "kai" and kai is not None and team.kai_queue in kai.queues:
        return [kai.queues[team.kai_queue]]
    return []


def _wiring(config: StackConfig, workload: WorkloadConfig) -> PodWiring | None:
    """Google's GPUDirect pod wiring when the workload's GPU pods land only on one profile's pools."""
    profile = workload_profile(config, workload)
    return pod_wiring(profile) if profile is not None else None


def _workload_args(
    workload: WorkloadConfig,
    team: TeamConfig,
    wiring: PodWiring | None = None,
    kai_topology: str | None = None,
) -> RayWorkloadArgs:
    queue = team.local_queue if workload.scheduler == "kueue" else team.kai_queue
    assert queue is not None  # config checks require the team's queue for its scheduler
    job = None
    if workload.kind == "RayJob":
        job = RayJobArgs(
            entrypoint=workload.entrypoint,
            runtime_env_yaml=workload.runtime_env_yaml,
            submission_mode=workload.submission_mode,
            shutdown_after_job_finishes=workload.shuts_down,
            ttl_seconds_after_finished=workload.ttl_seconds_after_finished,
            active_deadline_seconds=workload.active_deadline_seconds,
        )
    return RayWorkloadArgs(
        name=workload.name,
        namespace=team.namespace_name,
        kind=workload.kind,
        labels=queue_labels(workload.scheduler, queue, workload.priority_class),
        head=_pod(
            workload.head, workload.image, notes=_topology_notes(workload.head, workload, kai_topology)
        ),
        workers=tuple(
            _pod(group, workload.image, wiring, _topology_notes(group, workload, kai_topology))
            for group in workload.worker_groups
        ),
        ray_version=workload.ray_version,
        job=job,
        restricted=team.pod_security == "restricted",
    )


def _topology_notes(
    group: RayPodConfig, workload: WorkloadConfig, kai_topology: str | None
) -> dict[str, str]:
    """The group's topology request as its scheduler reads it: Kueue's pod-set annotations, or KAI's
    on the stack's KAI Topology (config checks refuse a KAI request without one)."""
    if group.topology is None:
        return {}
    if workload.scheduler == "kai":
        return group.topology.kai_annotations(kai_topology) if kai_topology else {}
    return group.topology.annotations()


def _pod(
    group: RayPodConfig, image: str, wiring: PodWiring | None = None, notes: dict[str, str] | None = None
) -> RayPodArgs:
    worker = group if isinstance(group, WorkerGroupConfig) else None
    return RayPodArgs(
        image=group.image or image,
        cpu=group.cpu,
        memory=group.memory,
        gpu=group.gpu,
        gpu_fraction=group.gpu_fraction,
        ray_start_params=dict(group.ray_start_params),
        group_name=worker.group_name if worker else None,
        replicas=worker.replicas if worker else 1,
        min_replicas=worker.min_replicas if worker else None,
        max_replicas=worker.max_replicas if worker else None,
        annotations=notes or {},
        gpudirect=wiring if group.gpu else None,
    )


def _skypilot_servers(
    config: StackConfig,
    provider: pulumi.ProviderResource,
    teams: dict[str, TeamTenancy],
    kueue: KueueQueues | None,
    schedulers: Schedulers,
) -> dict[str, SkypilotServer]:
    servers: dict[str, SkypilotServer] = {}
    exported: dict[str, dict[str, str]] = {}
    sky_teams = skypilot_teams(config.teams)
    passwords = skypilot_passwords(sky_teams)
    scope = f"{pulumi.get_project()}/{pulumi.get_stack()}"
    domain = config.skypilot_gateway.domain
    assert domain is not None or not sky_teams  # stacks.config.tenancy.check_skypilot_gateway
    for team in sky_teams:
        server = team.skypilot
        assert server is not None and team.local_queue is not None
        waits: list[pulumi.Resource] = [*([schedulers.kueue.release] if schedulers.kueue else [])]
        waits.append(teams[team.name].namespace)
        if kueue is not None and f"{team.namespace_name}/{team.local_queue}" in kueue.local_queues:
            waits.append(kueue.local_queues[f"{team.namespace_name}/{team.local_queue}"])
        args = SkypilotServerArgs(
            team=team.name,
            namespace=team.namespace_name,
            chart_version=server.chart_version,
            username=server.username or f"{team.name}-user",
            password=passwords[team.name],
            auth_scope=f"{scope}/{team.namespace_name}",
            local_queue=team.local_queue,
            host=team_host(team.name, domain or ""),
            priority_class=server.priority_class,
        )
        servers[team.name] = SkypilotServer(
            f"skypilot-{team.name}", args, depends_on=waits, opts=pulumi.ResourceOptions(provider=provider)
        )
        exported[team.name] = {
            "namespace": args.namespace,
            "url": f"https://{args.host}",
            "user": args.username,
        }
    if servers:
        pulumi.export("skypilotServers", exported)
    return servers
