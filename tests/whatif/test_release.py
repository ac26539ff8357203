"""Victims' release: when a preempted workload's quota is free again, as Kueue v0.19.2 does it.

The code path (kubernetes-sigs/kueue@v0.19.2): the scheduler only marks the victim evicted
(``pkg/scheduler/preemption/preemption.go`` ``IssuePreemptions`` -> ``workloadevict.Evict``); the
job reconciler stops the job and clears ``QuotaReserved`` once the job reports itself inactive
(``pkg/controller/jobframework/reconciler.go`` ``ReconcileGenericJob``, step 6 "handle
eviction": ``stopJob``, then ``!job.IsActive()`` -> ``UnsetQuotaReservationWithCondition``); the
workload controller's ``Update`` (``pkg/controller/core/workload_controller.go``, case
``FromQuotaReservedOrAdmittedToPending``) then deletes it from the cache, moves the cohort's
inadmissible workloads back and requeues it.  Until then its usage counts; the preemptor is
requeued as the sticky head of its BestEffortFIFO queue (``pkg/cache/queue`` ``preemptorWorkload``)
and nominated again, taking the evicted workloads first (``pkg/scheduler/preemption/common/
ordering.go`` ``CandidatesOrdering`` criterion 0, ``classical/candidate_generator.go``
``splitEvicted``) and issuing nothing new ("Preemption ongoing").  The delay is
``--eviction-delay`` / ``evictionDelaySeconds`` (the profile of a stack whose jobs are plain pods
uses their termination grace period: ``pkg/controller/jobs/pod`` ``Pod.IsActive``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.whatif.kueue_cases import (
    cluster_queue,
    flavor,
    flavor_quotas,
    group,
    local_queue,
    provisioning_cluster,
)
from tests.whatif.test_simulator import brief, cluster, run, wl
from whatif.cluster import Cluster, FairSharing
from whatif.trace import parse_trace

LOWER = {"withinClusterQueue": "LowerPriority"}


def _fair(c: Cluster, fair: bool) -> Cluster:
    if fair:
        c.fair_sharing = FairSharing()
    return c


def _admitted(doc: dict[str, Any], name: str) -> list[float]:
    return [t for t, n, event, _ in brief(doc) if n == name and event == "admitted"]


@pytest.mark.parametrize("fair", [False, True])
def test_the_victims_quota_counts_until_its_job_is_stopped(fair: bool) -> None:
    """``ReconcileGenericJob`` clears ``QuotaReserved`` only once the job is inactive: the
    preemptor, evicting at 10, is admitted when the victim's release lands at 40, not before."""
    workloads = [wl("v", 0, 1000, gpus="2"), wl("p", 10, 50, gpus="2", priority=10)]
    doc = run(_fair(cluster("2", preemption=LOWER), fair), workloads, eviction_delay=30)
    assert brief(doc)[:3] == [
        (0, "v", "admitted", ""),
        (10, "v", "preempted", "p"),
        (40, "p", "admitted", ""),
    ]
    # the same trace with the release at once: the preemptor gets the quota in the same instant
    at_once = run(_fair(cluster("2", preemption=LOWER), fair), workloads, eviction_delay=0)
    assert _admitted(at_once, "p") == [10]


@pytest.mark.parametrize("fair", [False, True])
def test_the_preemptor_holds_its_queues_head_until_the_release(fair: bool) -> None:
    """Quota freed at 20 by ``f`` finishing would fit ``q`` (higher priority, arrived at 15), but
    the preemptor ``p`` is its BestEffortFIFO queue's sticky head until admitted: ``q`` is not
    nominated before ``p``, and both are admitted at the victim's release (40), ``p`` first."""
    workloads = [
        wl("v", 0, 1000, gpus="2"),
        wl("f", 1, 19, gpus="1"),
        wl("p", 10, 50, gpus="2", priority=10),
        wl("q", 15, 50, gpus="1", priority=20),
    ]
    doc = run(_fair(cluster("3", preemption=LOWER), fair), workloads, eviction_delay=30)
    events = [e for e in brief(doc) if e[2] in ("admitted", "preempted") and e[0] <= 40]
    assert events == [
        (0, "v", "admitted", ""),
        (1, "f", "admitted", ""),
        (10, "v", "preempted", "p"),
        (40, "p", "admitted", ""),
        (40, "q", "admitted", ""),
    ]


@pytest.mark.parametrize("fair", [False, True])
def test_a_renominated_preemptor_takes_the_evicted_victim_first(fair: bool) -> None:
    """``CandidatesOrdering`` criterion 0 / ``splitEvicted``: at 10, ``v0`` finishing frees one
    GPU while ``v2`` (evicted at 5) still holds two.  Newest-admitted-first alone would now pick
    ``v1`` (one GPU is enough); the evicted ``v2`` comes first, so no new eviction is issued and
    ``p`` is admitted at ``v2``'s release."""
    workloads = [
        wl("v0", 0, 10, gpus="1"),
        wl("v2", 1, 1000, gpus="2"),
        wl("v1", 2, 1000, gpus="1"),
        wl("p", 5, 50, gpus="2", priority=10),
    ]
    doc = run(_fair(cluster("4", preemption=LOWER), fair), workloads, eviction_delay=30)
    preempted = [(t, n) for t, n, event, _ in brief(doc) if event == "preempted"]
    assert preempted == [(5, "v2")]
    assert _admitted(doc, "p") == [35]


def test_the_victim_is_requeued_with_its_release() -> None:
    """``Update`` requeues the victim in the same step that frees its quota and moves the
    inadmissible workloads back: at the release (40) the victim competes in the very next cycle,
    and as the older workload it gets the GPU before ``x``, parked since 30 (the parked come
    back with the requeuer's batch, one second after a release: ``whatif.requeuer``).  (``p`` got the GPU
    ``w`` freed at 30: its re-nomination fits without preempting.)"""
    workloads = [
        wl("w", 0, 30),
        wl("v", 1, 1000),
        wl("p", 10, 50, priority=10),
        # another shape than ``v``'s (its pod set's name): parked, it does not park ``v`` with it
        # at the release (``SchedulingEquivalenceHashing``, ``test_timing``)
        {**wl("x", 20, 50), "podSets": [{"name": "other", "count": 1, "requests": {"nvidia.com/gpu": "1"}}]},
    ]
    doc = run(cluster("2", preemption=LOWER), workloads, eviction_delay=30)
    assert [(t, n) for t, n, event, _ in brief(doc) if event == "preempted"] == [(10, "v")]
    assert _admitted(doc, "p") == [30]
    assert _admitted(doc, "v") == [1, 40]
    assert _admitted(doc, "x") == [81]  # parked; ``p`` ends at 80, the requeuer's batch at 81


def test_the_trace_carries_the_eviction_delay_and_the_option_wins() -> None:
    workloads = [wl("v", 0, 1000, gpus="2"), wl("p", 10, 50, gpus="2", priority=10)]
    from whatif.results import document
    from whatif.simulator import Simulation

    trace = parse_trace({"evictionDelaySeconds": 5, "workloads": workloads})
    c = cluster("2", preemption=LOWER)
    assert _admitted(document(c, Simulation(c, trace).run()), "p") == [15]
    c = cluster("2", preemption=LOWER)
    assert _admitted(document(c, Simulation(c, trace, eviction_delay=0).run()), "p") == [10]


def test_a_preemptor_that_loses_its_victim_back_at_every_release_is_a_reported_livelock() -> None:
    """A release requeues the victim with the preemptor (``Update``); when the victim wins the
    freed quota back every time and is evicted again, with nothing else left to happen, Kueue
    would repeat this for ever: reported after ``LIVELOCK_REPEATS`` evictions, one line."""
    from whatif.errors import NotSettledError
    from whatif.scheduler import CycleOutcome
    from whatif.simulator import LIVELOCK_REPEATS, Simulation

    sim = Simulation(
        cluster("2"), parse_trace({"workloads": [wl("p", 0, 10), wl("v", 0, 10)]}), eviction_delay=30
    )
    p, v = sim.workloads
    # one eviction per instant, whenever the victim's previous eviction has been released
    sim.scheduler.cycle = lambda: CycleOutcome(  # type: ignore[method-assign]
        evictions=[] if v.key in sim.evicting else [(v, p, "InCohortFairSharing")]
    )
    with pytest.raises(NotSettledError) as raised:
        sim.run()
    message = str(raised.value)
    assert "\n" not in message and "livelock" in message
    assert f"team-a/p has preempted team-a/v {LIVELOCK_REPEATS} times without being admitted" in message
    assert message.startswith(f"time {30 * (LIVELOCK_REPEATS - 1)}, ")


@pytest.mark.parametrize("option", ["--eviction-delay", "--provisioning-delay"])
def test_a_negative_delay_is_one_line_and_exit_2(
    option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from whatif.cli import main

    items = [flavor("l4"), cluster_queue("cq", group(flavor_quotas("l4", ("nvidia.com/gpu", "1"))))]
    items.append(local_queue("team-a", "user-queue", "cq"))
    (tmp_path / "objects.yaml").write_text(yaml.safe_dump_all(items))
    (tmp_path / "trace.yaml").write_text(yaml.safe_dump({"workloads": [wl("a", 0, 10)]}))
    code = main(
        ["--manifests", str(tmp_path / "objects.yaml"), "--trace", str(tmp_path / "trace.yaml"), option, "-1"]
    )
    assert code == 2
    assert capsys.readouterr().err == f"whatif: {option}: got -1, expected a number of seconds >= 0\n"


def test_a_negative_eviction_delay_in_a_trace_is_one_line() -> None:
    from whatif.errors import WhatIfError

    with pytest.raises(WhatIfError, match=r"^trace evictionDelaySeconds: got -3, expected a number >= 0$"):
        parse_trace({"evictionDelaySeconds": -3, "workloads": [wl("a", 0, 10)]})


def test_an_evicted_workload_is_not_admitted_by_its_admission_check_meanwhile() -> None:
    """``workloadevict.Evict`` resets the victim's admission checks to Pending
    (``pkg/workload/evict/evict.go`` ``resetChecksOnEviction``): ``v``, evicted at 10 while its
    ProvisioningRequest (20 s) is under way, is not admitted at 20; ``p`` gets the quota at the
    release (40) and its own request is provisioned by 60."""
    from whatif.capacity import Pool
    from whatif.cluster import Preemption
    from whatif.results import document
    from whatif.simulator import Simulation

    c = provisioning_cluster(Pool("l4-pool", 8, 1), quota="1")
    c.cluster_queues["cq"].preemption = Preemption(within_cluster_queue="LowerPriority")
    trace = parse_trace(
        {"provisioningDelaySeconds": 20, "workloads": [wl("v", 0, 100), wl("p", 10, 100, priority=10)]}
    )
    doc = document(c, Simulation(c, trace, eviction_delay=30).run())
    assert [e for e in brief(doc) if e[2] in ("admitted", "preempted")][:2] == [
        (10, "v", "preempted", "p"),
        (60, "p", "admitted", ""),
    ]
