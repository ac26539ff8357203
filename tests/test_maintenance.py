"""The cluster's maintenance policy (issue 21): GKE's limits as one-line config errors, and the
policy in the recorded plan.  Limits from GKE's "Configure maintenance windows and exclusions":
48 h of window in any 32 days, only contiguous windows of 4 h or more count, at most 20
exclusions, NO_UPGRADES at most 30 days."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from stacks.errors import ConfigError
from tests.stack_runner import config_value, of_type, run_stack, unedited_run

CLUSTER = "gpu-batch:cluster"
WEEKEND = {"days": ["SA", "SU"], "startTime": "02:00", "hours": 8}


def _with(maintenance: dict[str, Any]) -> dict[str, Any]:
    cluster: dict[str, Any] = copy.deepcopy(config_value("dev", CLUSTER))
    cluster["maintenance"] = maintenance
    return {CLUSTER: cluster}


def _error(maintenance: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as caught:
        run_stack("dev", _with(maintenance))
    (line,) = str(caught.value).splitlines()
    return line


@pytest.mark.parametrize(
    ("maintenance", "path", "fragment"),
    [
        ({**WEEKEND, "hours": 3}, "maintenance.hours", "got 3, expected 4 to 24"),
        (
            {"days": ["SU"], "startTime": "02:00", "hours": 8},
            "maintenance.hours",
            "this window guarantees 32 h",
        ),
        ({**WEEKEND, "startTime": "2am"}, "maintenance.startTime", "expected a UTC time HH:MM"),
        ({**WEEKEND, "days": ["SAT"]}, "maintenance.days[0]", "got 'SAT'"),
        (
            {
                **WEEKEND,
                "exclusions": [{"name": "x", "start": "2026-12-01T00:00:00Z", "end": "2027-01-15T00:00:00Z"}],
            },
            "maintenance.exclusions[0].end",
            "at most 30 days after start for scope NO_UPGRADES",
        ),
        (
            {
                **WEEKEND,
                "exclusions": [{"name": "x", "start": "2026-12-02T00:00:00Z", "end": "2026-12-01T00:00:00Z"}],
            },
            "maintenance.exclusions[0].end",
            "expected after start",
        ),
        (
            {**WEEKEND, "exclusions": [{"name": "x", "start": "tomorrow", "end": "2026-12-01T00:00:00Z"}]},
            "maintenance.exclusions[0].start",
            "expected an RFC 3339 UTC time",
        ),
    ],
)
def test_gke_limits_are_one_line_config_errors(maintenance: dict[str, Any], path: str, fragment: str) -> None:
    line = _error(maintenance)
    assert line.startswith(f"config error: {CLUSTER}.{path}: "), line
    assert fragment in line, line


def test_a_valid_policy_reaches_the_cluster() -> None:
    long_freeze = {
        "name": "freeze",
        "start": "2026-12-01T00:00:00Z",
        "end": "2027-02-01T00:00:00Z",
        "scope": "NO_MINOR_UPGRADES",
    }
    [cluster] = of_type(
        run_stack("dev", _with({**WEEKEND, "exclusions": [long_freeze]})), "gcp:container/cluster:Cluster"
    )
    policy = cluster.inputs["maintenancePolicy"]
    assert policy["recurringWindow"] == {
        "startTime": "2026-01-01T02:00:00Z",
        "endTime": "2026-01-01T10:00:00Z",
        "recurrence": "FREQ=WEEKLY;BYDAY=SA,SU",
    }
    [exclusion] = policy["maintenanceExclusions"]
    assert exclusion["exclusionName"] == "freeze" and exclusion["exclusionOptions"] == {
        "scope": "NO_MINOR_UPGRADES"
    }


def test_prod_maintains_only_at_weekends_and_dev_is_unconstrained() -> None:
    [prod] = of_type(unedited_run("prod"), "gcp:container/cluster:Cluster")
    assert prod.inputs["maintenancePolicy"]["recurringWindow"]["recurrence"] == "FREQ=WEEKLY;BYDAY=SA,SU"
    [dev] = of_type(unedited_run("dev"), "gcp:container/cluster:Cluster")
    assert "maintenancePolicy" not in dev.inputs
