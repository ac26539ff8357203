"""Config of the stack's dashboard and alert policies (key ``gpu-batch:monitoring``).

The dashboard and alerts are generated from the stack's queues and pools
(components/observability/); these keys only say where alerts go and what their thresholds are.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field, StringConstraints

from stacks.base import ConfigModel, PositiveInt
from stacks.config.schedulers import GoDuration
from stacks.quantity import POLICIES_DIR

assert POLICIES_DIR  # importing stacks.quantity put the pack's package on sys.path

from gpu_batch_policy.primitives.go_duration import parse_go_duration  # noqa: E402

# The highest finite bucket of kueue_admission_checks_wait_time_seconds: Kueue 0.19.2
# pkg/metrics/metrics.go ``generateExponentialBuckets(14)`` = 1, then 2.5 * 2^0..12 (10240 s).
# histogram_quantile answers at most this bound, so a larger threshold could never be exceeded.
CHECK_WAIT_TOP_BUCKET_SECONDS = 10240.0


def _alertable_wait(text: str) -> str:
    seconds = parse_go_duration(text)
    if seconds is not None and seconds >= CHECK_WAIT_TOP_BUCKET_SECONDS:
        raise ValueError(
            "expected a duration below 2h50m40s (10240 s): Kueue's admission-check wait histogram has no "
            "bucket above it, so its p95 can never exceed a longer threshold"
        )
    return text


# A Cloud Monitoring notification channel's resource name (pulumi-gcp 10.2.0 AlertPolicy
# ``notification_channels``: "projects/[PROJECT_ID]/notificationChannels/[CHANNEL_ID]").
NotificationChannel = Annotated[
    str, StringConstraints(pattern=r"^projects/[a-z][a-z0-9-]{4,28}[a-z0-9]/notificationChannels/[0-9]+$")
]


class MonitoringConfig(ConfigModel):
    """Where the stack's alerts go and when they fire."""

    notification_channels: list[NotificationChannel] = Field(
        default_factory=list,
        description="Cloud Monitoring notification channels every alert policy notifies "
        "(projects/<project>/notificationChannels/<id>); none: alerts show in the console only.",
    )
    max_provisioning_wait: Annotated[GoDuration, AfterValidator(_alertable_wait)] = Field(
        "2h",
        description="Alert when a DWS ClusterQueue's provisioning-check wait p95 exceeds this (Go duration).",
    )
    idle_gpu_utilization_percent: Annotated[int, Field(ge=1, le=100)] = Field(
        10, description="Alert when mean GPU utilisation stays below this while workloads are admitted."
    )
    alert_window_minutes: PositiveInt = Field(
        15, description="How long a condition must hold before an alert fires (minutes)."
    )
