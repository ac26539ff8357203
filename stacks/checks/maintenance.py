"""GKE's limits on a maintenance policy, checked before any resource exists.

From GKE's "Configure maintenance windows and exclusions": a window must leave at least 48 hours
of maintenance availability in any 32-day rolling window, and only contiguous availability of
at least four hours counts; a cluster has at most 20 exclusions; a ``NO_UPGRADES`` exclusion
lasts at most 30 days.  GKE refuses the cluster update otherwise, after the round-trip.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta

from stacks.config.maintenance import MaintenanceConfig
from stacks.errors import ConfigIssue

KEY = "gpu-batch:cluster.maintenance"
MIN_HOURS = 4
MIN_AVAILABLE_HOURS = 48
ROLLING_DAYS = 32
MAX_EXCLUSIONS = 20
MAX_NO_UPGRADES = timedelta(days=30)
_TIME = re.compile(r"([01]\d|2[0-3]):[0-5]\d")
_RFC3339_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def guaranteed_hours(config: MaintenanceConfig) -> int:
    """Hours of window any 32-day span contains at the least: a weekly day recurs at least
    4 times in 32 days (32 = 4 * 7 + 4), a daily window 32 times."""
    occurrences = ROLLING_DAYS if not config.days else (ROLLING_DAYS // 7) * len(set(config.days))
    return occurrences * config.hours


def _moment(text: str) -> datetime | None:
    if not _RFC3339_UTC.fullmatch(text):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def check_maintenance(config: MaintenanceConfig | None) -> Iterator[ConfigIssue]:
    if config is None:
        return
    if not _TIME.fullmatch(config.start_time):
        yield ConfigIssue(f"{KEY}.startTime", "a UTC time HH:MM, e.g. 02:00", config.start_time)
    if config.hours < MIN_HOURS or config.hours > 24:
        yield ConfigIssue(
            f"{KEY}.hours",
            f"{MIN_HOURS} to 24 (GKE counts only windows of {MIN_HOURS} h or more)",
            config.hours,
        )
    elif guaranteed_hours(config) < MIN_AVAILABLE_HOURS:
        yield ConfigIssue(
            f"{KEY}.hours",
            f"more hours or days: GKE needs {MIN_AVAILABLE_HOURS} h of window in any {ROLLING_DAYS} days "
            f"(this window guarantees {guaranteed_hours(config)} h)",
            config.hours,
        )
    if len(config.exclusions) > MAX_EXCLUSIONS:
        yield ConfigIssue(f"{KEY}.exclusions", f"at most {MAX_EXCLUSIONS} exclusions", len(config.exclusions))
    for i, exclusion in enumerate(config.exclusions):
        at = f"{KEY}.exclusions[{i}]"
        start, end = _moment(exclusion.start), _moment(exclusion.end)
        if start is None:
            yield ConfigIssue(
                f"{at}.start", "an RFC 3339 UTC time, e.g. 2026-12-20T00:00:00Z", exclusion.start
            )
        if end is None:
            yield ConfigIssue(f"{at}.end", "an RFC 3339 UTC time, e.g. 2027-01-05T00:00:00Z", exclusion.end)
        if start is None or end is None:
            continue
        if end <= start:
            yield ConfigIssue(f"{at}.end", f"after start ({exclusion.start})", exclusion.end)
        elif exclusion.scope == "NO_UPGRADES" and end - start > MAX_NO_UPGRADES:
            yield ConfigIssue(
                f"{at}.end",
                "at most 30 days after start for scope NO_UPGRADES (or scope NO_MINOR_UPGRADES)",
                exclusion.end,
            )
