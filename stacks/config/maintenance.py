"""Config of the cluster's maintenance policy (key ``gpu-batch:cluster.maintenance``).

Why: without a window GKE upgrades the control plane and the nodes whenever it chooses, and a
node upgrade drains GPU nodes under running gangs.  One recurring window (UTC days, a start
time and a length) and up to 20 exclusions are what GKE offers (GKE docs, "Configure
maintenance windows and exclusions"); :mod:`stacks.checks.maintenance` holds GKE's limits.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from stacks.base import ConfigModel, NonEmptyStr, PositiveInt

Weekday = Literal["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
ExclusionScope = Literal["NO_UPGRADES", "NO_MINOR_UPGRADES", "NO_MINOR_OR_NODE_UPGRADES"]


class MaintenanceExclusionConfig(ConfigModel):
    """A non-repeating time in which GKE makes no upgrades of the given scope."""

    name: NonEmptyStr = Field(description="Exclusion name, e.g. quarter-end-training.")
    start: NonEmptyStr = Field(description="RFC 3339 start in UTC, e.g. 2026-12-20T00:00:00Z.")
    end: NonEmptyStr = Field(description="RFC 3339 end in UTC, after start.")
    scope: ExclusionScope = Field(
        "NO_UPGRADES",
        description="NO_UPGRADES (at most 30 days), NO_MINOR_UPGRADES or NO_MINOR_OR_NODE_UPGRADES.",
    )


class MaintenanceConfig(ConfigModel):
    """The cluster's one recurring maintenance window, and its exclusions."""

    days: list[Weekday] = Field(
        default_factory=list, description="UTC weekdays of the window (MO..SU); empty: every day."
    )
    start_time: NonEmptyStr = Field(description="UTC start of each window, HH:MM.")
    hours: PositiveInt = Field(description="Length of each window in hours (GKE counts only 4 h or more).")
    exclusions: list[MaintenanceExclusionConfig] = Field(
        default_factory=list, description="Times with no automatic upgrades (at most 20)."
    )
