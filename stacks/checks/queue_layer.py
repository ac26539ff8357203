"""Every cross-key rule of the queue layer (queues, KAI queues, teams, workloads) in one call.

Besides each area's own checks, the rules here tie the queue layer to the scheduler keys: a
queue object needs its scheduler installed (the CRDs would not exist), fractional GPUs need
KAI's GPU sharing (its admission webhook rejects the pod otherwise), and a SkyPilot server
cannot live in a namespace whose every pod Kueue holds back.

The layer is judged against the platform keys -- cluster, pools, schedulers (which pool is
queued, which scheduler is on) -- so its rules run only once those keys are valid themselves:
one mistake in a pool or a scheduler is reported once, not again by every queue that uses it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from components.gke import SYSTEM_POOL_TAINT_KEY
from stacks.checks.accelerator_mix import check_accelerator_mix, flavor_accelerators
from stacks.checks.cluster import check_cluster, check_pools
from stacks.checks.queue import QUEUES_KEY, check_queues
from stacks.checks.scheduler import check_schedulers
from stacks.config.kai_queues import check_kai_queues
from stacks.config.tenancy import TEAMS_KEY, check_teams
from stacks.config.workloads import WORKLOADS_KEY, check_workloads
from stacks.errors import ConfigIssue

if TYPE_CHECKING:
    from stacks.config import StackConfig


def check_queue_layer(config: StackConfig) -> Iterator[ConfigIssue]:
    platform = (
        check_cluster(config.cluster, config.gpu_pools),
        check_pools(config.gpu_pools),
        check_schedulers(config.kueue, config.kai, config.kuberay),
    )
    if any(any(issues) for issues in platform):
        return
    queues = config.kueue_queues
    pool_modes = {p.name: p.provisioning for p in config.gpu_pools}
    tenant = config.cluster.tenant_pool
    cpu_pools = [config.cluster.system_pool.name, *([tenant.name] if tenant else [])]
    yield from check_queues(queues, pool_modes, cpu_pools)
    yield from _check_tainted_system_pool(config)
    yield from check_accelerator_mix(queues, flavor_accelerators(queues, config.gpu_pools))
    yield from check_kai_queues(config.kai_queues)
    yield from check_teams(config.teams, queues, config.kai_queues)
    yield from check_workloads(config.workloads, config.teams, queues)
    yield from _check_schedulers_present(config)


def _check_tainted_system_pool(config: StackConfig) -> Iterator[ConfigIssue]:
    """With a tenant pool the system pool carries the platform-only taint (components.gke
    ``SYSTEM_POOL_TAINT``) and a flavor adds no toleration for it, so pods a flavor steers there
    would never schedule: refuse it in one line."""
    tenant = config.cluster.tenant_pool
    system = config.cluster.system_pool.name
    if tenant is None:
        return
    for index, flavor in enumerate(config.kueue_queues.resource_flavors):
        if flavor.pool == system:
            yield ConfigIssue(
                f"{QUEUES_KEY}.resourceFlavors[{index}].pool",
                f"a GPU pool or the tenant pool {tenant.name!r}: with cluster.tenantPool the system pool "
                f"is tainted {SYSTEM_POOL_TAINT_KEY}=true:NoSchedule for platform components only",
                flavor.pool,
            )


def _check_schedulers_present(config: StackConfig) -> Iterator[ConfigIssue]:
    queues = config.kueue_queues
    uses_kueue = bool(
        queues.resource_flavors or queues.admission_checks or queues.cluster_queues or queues.cohorts
    ) or any(t.local_queues for t in config.teams)
    # With neither scheduler on, check_schedulers already reports gpu-batch:kueue.enabled.
    if uses_kueue and not config.kueue.enabled and config.kai.enabled:
        yield ConfigIssue(
            "gpu-batch:kueue.enabled", f"true: {QUEUES_KEY} / teams' localQueue declare Kueue objects", False
        )
    if config.kai_queues and not config.kai.enabled:
        yield ConfigIssue("gpu-batch:kai.enabled", "true: gpu-batch:kaiQueues declares KAI queues", False)
    if config.workloads and not config.kuberay.enabled:
        yield ConfigIssue("gpu-batch:kuberay.enabled", f"true: {WORKLOADS_KEY} declares Ray workloads", False)
    for index, workload in enumerate(config.workloads):
        groups = [workload.head, *workload.worker_groups]
        # A fraction under Kueue is reported by the workload's own checks.
        fractional = workload.scheduler == "kai" and any(g.gpu_fraction is not None for g in groups)
        if fractional and not config.kai.gpu_sharing:
            yield ConfigIssue(
                "gpu-batch:kai.gpuSharing",
                f"true: {WORKLOADS_KEY}[{index}] ({workload.name}) requests a GPU fraction, which KAI's "
                "webhook refuses while sharing is off",
                config.kai.gpu_sharing,
            )
    if config.kueue.manage_jobs_without_queue_name:
        for index, team in enumerate(config.teams):
            if team.skypilot is not None:
                yield ConfigIssue(
                    f"{TEAMS_KEY}[{index}].skypilot",
                    "no SkyPilot server while gpu-batch:kueue.manageJobsWithoutQueueName is on: Kueue "
                    "would hold back the server's own pods (and its ingress controller) in the team namespace",
                    team.name,
                )
