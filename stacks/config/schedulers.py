"""Config of the cluster-wide schedulers and operators (keys ``gpu-batch:kueue``,
``gpu-batch:kai``, ``gpu-batch:kuberay``).

A stack chooses Kueue, KAI or both; KubeRay is independent of either.  Versions are overridable
(pin a patch release) but checked in :mod:`stacks.checks.scheduler`, because the charts spell them
differently (Kueue ``0.19.2``, KAI ``v0.17.0``, KubeRay ``1.7.0``) and the stack emits objects
only some versions serve.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from components.kai import KAI_VERSION
from components.kuberay import KUBERAY_VERSION
from components.kueue import KUEUE_VERSION
from components.kueue_config import KNOWN_FRAMEWORKS
from stacks.base import ConfigModel, NonEmptyStr, NonNegativeInt, PositiveInt
from stacks.errors import suggest
from stacks.quantity import POLICIES_DIR

assert POLICIES_DIR  # importing stacks.quantity put the pack's package on sys.path

from gpu_batch_policy.primitives.go_duration import parse_go_duration  # noqa: E402


def _positive_duration(text: str) -> str:
    """A Go duration Kueue accepts (its Configuration is parsed with Go's ``time.ParseDuration``,
    :mod:`gpu_batch_policy.primitives.go_duration`), and above zero."""
    seconds = parse_go_duration(text)
    if seconds is None or seconds <= 0:
        raise ValueError("expected a positive duration such as 10m, 90s or 1h30m")
    return text


def _known_framework(name: str) -> str:
    if name not in KNOWN_FRAMEWORKS:
        raise ValueError(
            f"expected an integration Kueue 0.19.2 registers{suggest(name, KNOWN_FRAMEWORKS)}: "
            + ", ".join(KNOWN_FRAMEWORKS)
        )
    return name


GoDuration = Annotated[str, AfterValidator(_positive_duration)]
Framework = Annotated[str, AfterValidator(_known_framework)]
FairSharingStrategy = Literal["LessThanOrEqualToFinalShare", "LessThanInitialShare"]


class RequeuingStrategyConfig(ConfigModel):
    """How an evicted (not-ready) workload goes back into the queue."""

    timestamp: Literal["Eviction", "Creation"] = Field(
        "Eviction", description="Queue position after eviction: by eviction time or by creation time."
    )
    backoff_limit_count: NonNegativeInt | None = Field(
        10, description="Requeues before the workload is deactivated; null requeues forever."
    )
    backoff_base_seconds: PositiveInt = Field(60, description="First requeue delay; doubles each time.")
    backoff_max_seconds: PositiveInt = Field(3600, description="Longest requeue delay.")


class WaitForPodsReadyConfig(ConfigModel):
    """Kueue's all-pods-ready guard (on by default since Kueue 0.19; always written explicitly)."""

    timeout: GoDuration = Field(
        "15m",
        description="Evict an admitted workload whose pods are not all Ready by then (Kueue default 30m).",
    )
    recovery_timeout: GoDuration | None = Field(
        None, description="Time a running workload gets to recover a lost pod; default: timeout."
    )
    block_admission: bool | None = Field(
        None,
        description="Admit one workload at a time until its pods are Ready; default: on unless every GPU pool is queued (DWS).",
    )
    requeuing_strategy: RequeuingStrategyConfig = Field(
        default_factory=lambda: RequeuingStrategyConfig.model_validate({}),
        description="Requeuing after eviction (see requeuingStrategy.* keys).",
    )


def _default_strategies() -> list[FairSharingStrategy]:
    return ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]


class FairSharingConfig(ConfigModel):
    """Kueue fair sharing between ClusterQueues of a cohort (present = on)."""

    preemption_strategies: list[FairSharingStrategy] = Field(
        default_factory=_default_strategies,
        description="Fair-sharing preemption strategies, in Kueue's order.",
    )


class KueueConfig(ConfigModel):
    """Kueue (key ``gpu-batch:kueue``)."""

    enabled: bool = Field(True, description="Install Kueue.")
    version: NonEmptyStr = Field(
        KUEUE_VERSION, description="Kueue chart version, without v; at least 0.15.0."
    )
    manage_jobs_without_queue_name: bool = Field(
        False,
        description="Strict tenancy: suspend jobs that name no queue; namespaces opt in with a label.",
    )
    wait_for_pods_ready: WaitForPodsReadyConfig = Field(
        default_factory=lambda: WaitForPodsReadyConfig.model_validate({}),
        description="All-pods-ready timeout and requeuing (see waitForPodsReady.* keys).",
    )
    fair_sharing: FairSharingConfig | None = Field(
        None, description="Fair sharing between cohort members; omitted = off unless queues need it."
    )
    feature_gates: dict[NonEmptyStr, bool] = Field(
        default_factory=dict, description="Kueue feature gates (name: on/off); only gates Kueue 0.19.2 has."
    )
    extra_frameworks: list[Framework] = Field(
        default_factory=list,
        description="Integrations beyond the derived ones (batch/job; Ray with KubeRay; pod with SkyPilot).",
    )


class KaiConfig(ConfigModel):
    """NVIDIA KAI Scheduler (key ``gpu-batch:kai``)."""

    enabled: bool = Field(False, description="Install KAI Scheduler.")
    version: NonEmptyStr = Field(KAI_VERSION, description="KAI chart version, with v; at least v0.16.0.")
    gpu_sharing: bool = Field(
        False, description="Allow fractional GPUs (gpu-fraction / gpu-memory annotations)."
    )
    cluster_autoscaling: bool = Field(
        False, description="Start KAI's node-scale-adjuster so fractional-GPU pods can scale GPU pools up."
    )
    create_default_queue: bool = Field(
        False,
        description="Let the chart create default-queue (unmanaged, no quota); off when queues are code.",
    )


class KubeRayConfig(ConfigModel):
    """The KubeRay operator (key ``gpu-batch:kuberay``)."""

    enabled: bool = Field(True, description="Install the KubeRay operator (wired to KAI when KAI is on).")
    version: NonEmptyStr = Field(
        KUBERAY_VERSION, description="kuberay-operator chart version, without v; at least 1.5.0 with KAI."
    )


def default_kueue() -> KueueConfig:
    return KueueConfig.model_validate({})


def default_kai() -> KaiConfig:
    return KaiConfig.model_validate({})


def default_kuberay() -> KubeRayConfig:
    return KubeRayConfig.model_validate({})
