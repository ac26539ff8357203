"""Install the cluster-wide schedulers and operators a stack chose: Kueue, KAI, KubeRay.

Called from :func:`stacks.compose.build` once the Kubernetes provider exists; the provider
already waits for the cluster and its system pool, so the order one ``pulumi up`` follows is
cluster -> system pool -> operators -> (queue objects, which depend on :attr:`Schedulers.releases`).

What is derived here rather than configured:

- Kueue integrations: ``batch/job`` always; ``ray.io/rayjob`` + ``ray.io/raycluster`` when KubeRay
  is installed; ``pod`` when a later layer runs bare-pod workloads (SkyPilot API servers) --
  passed in as :class:`WorkloadNeeds` -- plus ``kueue.extraFrameworks``.
- strict tenancy (``manageJobsWithoutQueueName``) when ``kueue.manageJobsWithoutQueueName`` is set
  or a later layer asks for it; fair sharing when configured or when cohorts need it.
- ``waitForPodsReady.blockAdmission``, unless set: on, except when every GPU pool is a queued
  (DWS) pool -- there capacity arrives all at once per ProvisioningRequest, so admitting one gang
  at a time only serialises the queue.
- KubeRay's ``batchScheduler.name: kai-scheduler`` when KAI is installed: KAI then schedules every
  Ray pod, and a RayCluster needs the ``kai.scheduler/queue`` label.  With Kueue installed too,
  Kueue still manages the Ray kinds, so a Ray job labelled with a Kueue queue is admitted by Kueue
  and then placed by KAI (both quotas apply).

Ordering between the operators: when Kueue is installed, KAI and KubeRay wait for it.  Kueue's
admission webhooks fail closed, so a Job created while Kueue is half-installed (KAI's chart runs
hook Jobs) would be refused.  KubeRay also waits for KAI when wired to it, so no Ray pod is created
for a scheduler that does not exist yet.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from components.kai import KaiSchedulerArgs, KaiSchedulerInstall
from components.kuberay import KubeRayOperator, KubeRayOperatorArgs
from components.kueue import KueueInstall, KueueInstallArgs
from components.kueue_config import (
    DEFAULT_FAIR_SHARING_STRATEGIES,
    KueueConfiguration,
    WaitForPodsReady,
    frameworks_for,
)
from components.multikueue_fleet import access_providers
from stacks.config import StackConfig
from stacks.config.multikueue import DISPATCHERS


@dataclass(frozen=True)
class WorkloadNeeds:
    """What later layers (queues, tenancy, SkyPilot) require of the Kueue controller."""

    # Workloads are bare pods (SkyPilot): Kueue's ``pod`` integration.
    pod_integration: bool = False
    # ClusterQueues share a cohort with fair-sharing weights: Kueue's ``fairSharing`` block.
    fair_sharing: bool = False
    # Jobs without a queue name must not run unmanaged; namespaces opt in with
    # ``components.kueue_config.MANAGED_NAMESPACE_LABEL``.
    strict_tenancy: bool = False


@dataclass(frozen=True)
class Schedulers:
    """The installed operators; None where the stack did not choose one."""

    kueue: KueueInstall | None
    kai: KaiSchedulerInstall | None
    kuberay: KubeRayOperator | None

    @property
    def releases(self) -> list[pulumi.Resource]:
        """Every operator release, for ``depends_on`` of objects that need their CRDs/webhooks."""
        return [c.release for c in (self.kueue, self.kai, self.kuberay) if c is not None]


def kueue_configuration(config: StackConfig, needs: WorkloadNeeds) -> KueueConfiguration:
    """The Kueue controller Configuration this stack needs."""
    kueue = config.kueue
    ready = kueue.wait_for_pods_ready
    strategy = ready.requeuing_strategy
    all_queued = bool(config.gpu_pools) and all(p.provisioning == "queued" for p in config.gpu_pools)
    fair = kueue.fair_sharing
    strategies = (
        tuple(fair.preemption_strategies)
        if fair is not None
        else (DEFAULT_FAIR_SHARING_STRATEGIES if needs.fair_sharing else None)
    )
    return KueueConfiguration(
        frameworks=frameworks_for(
            kuberay=config.kuberay.enabled, pod=needs.pod_integration, extra=kueue.extra_frameworks
        ),
        manage_jobs_without_queue_name=kueue.manage_jobs_without_queue_name or needs.strict_tenancy,
        wait_for_pods_ready=WaitForPodsReady(
            timeout=ready.timeout,
            recovery_timeout=ready.recovery_timeout,
            block_admission=(not all_queued) if ready.block_admission is None else ready.block_admission,
            requeuing_timestamp=strategy.timestamp,
            backoff_limit_count=strategy.backoff_limit_count,
            backoff_base_seconds=strategy.backoff_base_seconds,
            backoff_max_seconds=strategy.backoff_max_seconds,
        ),
        fair_sharing_strategies=strategies,
        multikueue_dispatcher=DISPATCHERS[config.multi_kueue.dispatcher] if config.multi_kueue else None,
        multikueue_access_providers=access_providers()
        if config.multi_kueue is not None and config.multi_kueue.credentials == "clusterProfile"
        else (),
    )


def install_schedulers(
    config: StackConfig,
    provider: pulumi.ProviderResource,
    needs: WorkloadNeeds | None = None,
    *,
    cdi: bool = False,
    prefix: str = "",
    retained_provider: pulumi.ProviderResource | None = None,
) -> Schedulers:
    """Declare the chosen operators on the cluster behind ``provider``; ``cdi``: the NVIDIA GPU
    Operator (CDI on) gives the GPUs, so KAI's binder is told so (components/kai.py);
    ``retained_provider``: the one the retained CRDs are created through, by upsert
    (:func:`components.k8s_provider.cluster_provider` (``retained_objects``))."""
    needs = needs or WorkloadNeeds()
    kueue = kai = kuberay = None
    if config.kueue.enabled:
        kueue = KueueInstall(
            f"{prefix}kueue",
            KueueInstallArgs(
                configuration=kueue_configuration(config, needs),
                feature_gates=dict(config.kueue.feature_gates),
                version=config.kueue.version,
            ),
            opts=pulumi.ResourceOptions(provider=provider),
            retained_provider=retained_provider,
        )
    after_kueue: list[pulumi.Resource] = [kueue.release] if kueue else []
    if config.kai.enabled:
        kai = KaiSchedulerInstall(
            f"{prefix}kai-scheduler",
            KaiSchedulerArgs(
                gpu_sharing=config.kai.gpu_sharing,
                cluster_autoscaling=config.kai.cluster_autoscaling,
                create_default_queue=config.kai.create_default_queue,
                version=config.kai.version,
                cdi_enabled=True if cdi else None,
            ),
            opts=pulumi.ResourceOptions(provider=provider, depends_on=after_kueue),
        )
    if config.kuberay.enabled:
        kuberay = KubeRayOperator(
            f"{prefix}kuberay-operator",
            KubeRayOperatorArgs(
                batch_scheduler="kai-scheduler" if kai else None, version=config.kuberay.version
            ),
            opts=pulumi.ResourceOptions(
                provider=provider, depends_on=[*after_kueue, *([kai.release] if kai else [])]
            ),
            retained_provider=retained_provider,
        )
    installed = Schedulers(kueue=kueue, kai=kai, kuberay=kuberay)
    pulumi.export(
        "operators",
        {
            name: version
            for name, version, on in (
                ("kueue", config.kueue.version, kueue),
                ("kai-scheduler", config.kai.version, kai),
                ("kuberay-operator", config.kuberay.version, kuberay),
            )
            if on is not None
        },
    )
    return installed
