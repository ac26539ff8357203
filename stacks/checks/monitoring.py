"""Alerts that reach someone where the stack says they must (issue 39).

An alert policy with no ``notificationChannels`` opens incidents that only show in the console
(pulumi-gcp 10.2.0 AlertPolicy ``notification_channels``; Cloud Monitoring "Manage incidents":
notifications go to the policy's channels only).  A stack that requires its alerts to reach
someone -- ``monitoring.requireNotificationChannels``, on by default where ``cluster.protect`` marks
the stack as production -- must name at least one channel.
"""

from __future__ import annotations

from collections.abc import Iterator

from stacks.config import StackConfig
from stacks.errors import ConfigIssue

KEY = "gpu-batch:monitoring.notificationChannels"


def notifications_required(config: StackConfig) -> bool:
    required = config.monitoring.require_notification_channels
    return config.cluster.protect if required is None else required


def check_monitoring(config: StackConfig) -> Iterator[ConfigIssue]:
    if notifications_required(config) and not config.monitoring.notification_channels:
        yield ConfigIssue(
            KEY,
            "at least one projects/<project>/notificationChannels/<id>: this stack's alerts must reach "
            "someone (monitoring.requireNotificationChannels, on by default with cluster.protect)",
            config.monitoring.notification_channels,
        )
