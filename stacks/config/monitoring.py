"""Config of the stack's dashboard and alert policies (key ``gpu-batch:monitoring``).

The dashboard and alerts are generated from the stack's queues and pools
(components/observability/); these keys only say where alerts go and what their thresholds are.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from stacks.base import ConfigModel, PositiveInt
from stacks.config.schedulers import GoDuration

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
    max_provisioning_wait: GoDuration = Field(
        "2h",
        description="Alert when a DWS ClusterQueue's provisioning-check wait p95 exceeds this (Go duration).",
    )
    idle_gpu_utilization_percent: Annotated[int, Field(ge=1, le=100)] = Field(
        10, description="Alert when mean GPU utilisation stays below this while workloads are admitted."
    )
    alert_window_minutes: PositiveInt = Field(
        15, description="How long a condition must hold before an alert fires (minutes)."
    )
