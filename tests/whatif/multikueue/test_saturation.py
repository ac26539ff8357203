"""The multi-region example stack (``Pulumi.multiregion.yaml``, run for real under the SDK mocks)
simulated across its manager and two workers, against one region with the same total quota.

Kueue v0.19.2 behaviour under test (``whatif/multikueue/run.py`` cites each function):
the manager reserves its quota and dispatches copies (``nominateAndSynchronizeWorkers``), each
worker admits by its own quota and DWS ProvisioningRequest, the first admitted copy wins and the
other copies are deleted (``reconcileGroup`` step 6b, ``MultiKueueWaitForWorkloadAdmitted``).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.whatif.multikueue.conftest import GANG
from whatif.multikueue.dispatch import INCREMENTAL, ROUND_SECONDS, Dispatcher
from whatif.multikueue.fleet import Fleet
from whatif.multikueue.run import MultiKueueRun, simulate_fleet
from whatif.section import section_lines
from whatif.sources import Record
from whatif.trace import parse_trace

US_SATURATED = {"us-east4": 4 * 3600, "europe-west4": 600}  # DWS in us-east4 waits hours


def _trace(
    n: int, *, every: float = 600, duration: float = 3600, delays: dict[str, Any] | None = None
) -> Any:
    return parse_trace(
        {
            "provisioningDelaySeconds": 600,
            "workerProvisioningDelaySeconds": delays or US_SATURATED,
            "workloads": [
                {
                    "name": f"train-{i}",
                    "namespace": "research",
                    "queue": "default",
                    "submit": i * every,
                    "duration": duration,
                    "podSets": GANG,
                }
                for i in range(n)
            ],
        }
    )


def test_the_fleet_is_the_manager_and_the_configs_workers_in_order(found: Fleet) -> None:
    assert [name for name, _ in found.workers] == ["us-east4", "europe-west4"]
    assert found.check == "multikueue"
    assert found.manager.model.cluster_queues()[0].name == "research-h100"


def test_saturated_region_multi_region_admits_the_teams_gangs_sooner(found: Fleet) -> None:
    """us-east4's DWS takes 4 h, europe-west4's 10 min: with MultiKueue each gang runs where it
    is provisioned first; the single region of the same total quota (the manager's 32 GPUs with
    us-east4's pool) waits for us-east4's capacity."""
    doc = simulate_fleet(found, _trace(6))
    multi = doc["queues"]["research-h100"]["waitSeconds"]
    single = doc["multiKueue"]["singleRegion"]["queues"]["research-h100"]["waitSeconds"]
    assert doc["multiKueue"]["singleRegion"]["worker"] == "us-east4"
    assert multi["p50"] < single["p50"] and multi["max"] < single["max"]
    team = doc["multiKueue"]["teams"]["research"]
    assert team["neverAdmitted"] == 0 and team["ranOn"].get("europe-west4", 0) >= 4
    first = [
        e["time"] for e in doc["events"] if e["event"] == "admitted" and e["workload"] == "research/train-0"
    ]
    assert first == [600]  # europe-west4's provisioning delay: the copy there wins


def test_without_saturation_the_first_worker_wins_ties_and_losers_are_deleted(found: Fleet) -> None:
    run = MultiKueueRun(found, _trace(1, delays={"us-east4": 600, "europe-west4": 600}))
    doc = run.run()
    assert doc["multiKueue"]["teams"]["research"]["ranOn"] == {"us-east4": 1}
    eu = [(e.time, e.event) for e in run.worker_sims["europe-west4"].events]
    assert eu == [(600, "deleted")]  # its ProvisioningRequest was under way; the copy is deleted
    us = [(e.time, e.event) for e in run.worker_sims["us-east4"].events]
    assert us == [(600, "admitted"), (4200, "finished")]
    manager = [(e["time"], e["event"]) for e in doc["events"]]
    assert manager == [(600, "admitted"), (4200, "finished")]


def test_incremental_dispatch_reaches_the_second_worker_one_round_later(found: Fleet) -> None:
    """stepSize 1: europe-west4 gets its copy 300 s after the reservation, so its 10-minute
    request admits at 900 s, still before us-east4's 4 hours."""
    run = MultiKueueRun(found, _trace(1))
    run.dispatcher = Dispatcher(INCREMENTAL, 1)
    doc = run.run()
    admitted = [e["time"] for e in doc["events"] if e["event"] == "admitted"]
    assert admitted == [ROUND_SECONDS + 600]
    assert doc["multiKueue"]["teams"]["research"]["ranOn"] == {"europe-west4": 1}
    us = [(e.time, e.event) for e in run.worker_sims["us-east4"].events]
    assert us == [(ROUND_SECONDS + 600, "deleted")]


def test_a_gang_above_every_workers_quota_holds_manager_quota_and_never_runs(found: Fleet) -> None:
    """kueue#8602: 24 GPUs fit the manager's 32 but neither worker's 16: never admitted."""
    big = [{"name": "workers", "count": 3, "requests": {"nvidia.com/gpu": "8"}}]
    trace = parse_trace(
        {
            "workloads": [
                {
                    "name": "big",
                    "namespace": "research",
                    "queue": "default",
                    "submit": 0,
                    "duration": 60,
                    "podSets": big,
                }
            ]
        }
    )
    doc = MultiKueueRun(found, trace).run()
    assert doc["multiKueue"]["teams"]["research"] == {
        "ranOn": {},
        "neverAdmitted": 1,
        "waitSeconds": doc["multiKueue"]["teams"]["research"]["waitSeconds"],
    }
    assert doc["queues"]["research-h100"]["neverAdmitted"] == ["research/big"]


def test_an_unknown_worker_delay_is_one_line(found: Fleet) -> None:
    from whatif.errors import WhatIfError

    with pytest.raises(WhatIfError, match=r"workerProvisioningDelaySeconds.asia: not a worker"):
        MultiKueueRun(found, _trace(1, delays={"asia": 60}))


def test_the_reports_section_shows_where_the_team_ran_and_the_single_region_comparison(
    records: list[Record],
) -> None:
    """The stack's load profile (us-east4's DWS scarce): the report says where the research team's
    gangs ran and how its waits compare with us-east4 alone; no refusal."""
    text = "\n".join(section_lines("multiregion", records))
    assert "Not simulated" not in text and "MultiKueue is not modelled" not in text
    team = next(line for line in text.splitlines() if line.startswith("| research |"))
    ran_us, ran_eu = (int(c) for c in team.split("|")[2:4])
    assert ran_eu > ran_us > 0
    assert "Against a single region of the same total quota" in text
