"""The whole stack config: every key the program reads, declared once.

Each top-level field is one Pulumi config key in the project namespace (``gpu-batch:<key>``);
its description is what the README lists (``python -m stacks.docs`` prints the table).
"""

from __future__ import annotations

from pydantic import Field

from stacks.base import ConfigModel
from stacks.config.cluster import ClusterConfig, GpuPoolConfig
from stacks.config.cost import GpuPriceConfig
from stacks.config.kai_queues import KaiQueueConfig
from stacks.config.monitoring import MonitoringConfig
from stacks.config.multikueue import MultiKueueConfig
from stacks.config.queues import KueueQueuesConfig
from stacks.config.schedulers import (
    KaiConfig,
    KubeRayConfig,
    KueueConfig,
    default_kai,
    default_kuberay,
    default_kueue,
)
from stacks.config.tenancy import SkypilotGatewayConfig, TeamConfig
from stacks.config.workloads import WorkloadConfig


class StackConfig(ConfigModel):
    """Everything under the ``gpu-batch:`` namespace of a stack file."""

    cluster: ClusterConfig = Field(description="The GKE cluster (see cluster.* keys).")
    gpu_pools: list[GpuPoolConfig] = Field(
        default_factory=list, description="GPU node pools (see gpuPools[].* keys)."
    )
    kueue: KueueConfig = Field(default_factory=default_kueue, description="Kueue (see kueue.* keys).")
    kai: KaiConfig = Field(default_factory=default_kai, description="KAI Scheduler (see kai.* keys).")
    kuberay: KubeRayConfig = Field(
        default_factory=default_kuberay, description="KubeRay operator (see kuberay.* keys)."
    )
    kueue_queues: KueueQueuesConfig = Field(
        default_factory=lambda: KueueQueuesConfig.model_validate({}),
        description="Kueue flavors, admission checks, cohorts, ClusterQueues, priority classes (see kueueQueues.*).",
    )
    kai_queues: list[KaiQueueConfig] = Field(
        default_factory=list, description="KAI queue tree: departments with children (see kaiQueues[].*)."
    )
    teams: list[TeamConfig] = Field(
        default_factory=list, description="Teams: namespace, members, queues, SkyPilot servers (teams[].*)."
    )
    skypilot_gateway: SkypilotGatewayConfig = Field(
        default_factory=lambda: SkypilotGatewayConfig.model_validate({}),
        description="GKE's internal Gateway in front of the SkyPilot servers (see skypilotGateway.*).",
    )
    workloads: list[WorkloadConfig] = Field(
        default_factory=list, description="RayJobs/RayClusters declared as code (see workloads[].*)."
    )
    multi_kueue: MultiKueueConfig | None = Field(
        None,
        description="MultiKueue: the cluster above becomes the manager, dispatching to these workers "
        "(see multiKueue.* keys).",
    )
    monitoring: MonitoringConfig = Field(
        default_factory=lambda: MonitoringConfig.model_validate({}),
        description="The generated dashboard's alerts: channels and thresholds (see monitoring.* keys).",
    )
    gpu_prices: list[GpuPriceConfig] = Field(
        default_factory=list,
        description="Node-hour prices for the preview's per-team GPU cost, added to or replacing the "
        "shipped table (see gpuPrices[].*).",
    )
