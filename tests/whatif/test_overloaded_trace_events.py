"""The benchmark's overloaded trace gives the same events with and without the simulator's
shortcuts (issue 44, item 3).

``python -m benchmarks.whatif_bench`` times the what-if on an overloaded trace (1,000
ClusterQueues under fair sharing, victims released 30 s after eviction, a backlog that grows
as long as the trace runs).  The shortcuts that make it fast have no Kueue counterpart and must
change no event: held cohort trees (``Scheduler.hold_settled``), searches remembered across
cycles while their cohort tree's committed quota stays the same (``Preemptor.remember``: the
fair-preemption searches and the borrowing queues they list), the hopeless-search bound
(``FairPreemption._hopeless``) and parked verdicts carried forward (``whatif.fairsharing.verdicts``:
a parked head whose nomination provably ends as before, Preempt without targets, is parked again
without running it).  With all of them off, the simulator nominates every head Kueue
would and runs every search in full: that long way is the reference here, on a smaller trace
of the same generator, every event compared (time, workload, kind, ClusterQueue, flavors,
preemptor, reason).  Kueue's own scheduler agrees with the long way on small scenarios
(``tests/whatif/test_differential_kueue.py``); this trace is too large for that oracle.
Speed is measured by the benchmark, never here.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.whatif_bench import simulation
from whatif.fairsharing.preemption import FairPreemption

WORKLOADS = 4_000  # about 1/25 of a simulated week: the backlog has grown, preemptions are common


def _events(*, shortcuts: bool) -> tuple[list[dict[str, object]], int, int]:
    """The trace's events, Kueue's nominations, and how many of them were not run (verdicts)."""
    sim = simulation(WORKLOADS, "overloaded")
    sim.scheduler.hold_settled = shortcuts
    sim.preemptor.remember = shortcuts
    verdicts = sim.scheduler.verdicts
    assert verdicts is not None  # fair sharing, no admission fair sharing: the simulator wires it
    if not shortcuts:
        sim.scheduler.verdicts = sim.preemptor.verdicts = None
    events = [e.to_json() for e in sim.run().events]
    return events, sim.scheduler.nominations, verdicts.repeated


def test_the_overloaded_trace_gives_the_same_events_the_long_way(monkeypatch: pytest.MonkeyPatch) -> None:
    fast, fast_nominations, repeated = _events(shortcuts=True)
    kinds = {e["event"] for e in fast}
    # the trace exercises what the benchmark times: preemptions, parked heads, re-nominations
    assert {"preempted", "inadmissible", "finished"} <= kinds
    assert fast_nominations > 2 * WORKLOADS
    # parked verdicts carried forward: a good share of the re-nominations are not run
    assert repeated > fast_nominations // 10

    searched: list[int] = []

    def never(self: FairPreemption, strategies: tuple[str, ...]) -> bool:
        searched.append(1)
        return False

    monkeypatch.setattr(FairPreemption, "_hopeless", never)
    slow, slow_nominations, not_run = _events(shortcuts=False)
    assert not_run == 0
    assert searched
    assert slow_nominations >= fast_nominations  # held trees skip nominations, never add any
    assert len(slow) == len(fast)
    differ = [(a, b) for a, b in zip(fast, slow, strict=True) if a != b]
    assert differ[:1] == [], json.dumps(differ[:1])


def test_parked_verdicts_alone_change_no_event() -> None:
    """The verdict shortcut on its own against the same run without it (the other shortcuts on
    in both): it fires, and every event is the same."""
    runs = []
    for on in (True, False):
        sim = simulation(WORKLOADS, "overloaded")
        verdicts = sim.scheduler.verdicts
        assert verdicts is not None
        if not on:
            sim.scheduler.verdicts = sim.preemptor.verdicts = None
        runs.append(([e.to_json() for e in sim.run().events], sim.scheduler.nominations, verdicts.repeated))
    (fast, fast_nominations, repeated), (slow, slow_nominations, not_run) = runs
    assert repeated > 0 and not_run == 0
    assert fast_nominations == slow_nominations  # Kueue's nominations: the same, some not run
    assert len(fast) == len(slow)
    differ = [(a, b) for a, b in zip(fast, slow, strict=True) if a != b]
    assert differ[:1] == [], json.dumps(differ[:1])


def test_verdicts_rechecked_by_the_bound_change_no_event() -> None:
    """A kept verdict the log cannot carry is checked against the fair-preemption bound redone in
    full (``Verdicts._exact``, with ``Verdicts.preemptor`` set): on against off (every other
    shortcut on in both), it fires -- more nominations are not run -- and every event is the
    same."""
    runs = []
    for on in (True, False):
        sim = simulation(WORKLOADS, "overloaded")
        verdicts = sim.scheduler.verdicts
        assert verdicts is not None and verdicts.preemptor is sim.preemptor
        if not on:
            verdicts.preemptor = None
        events = [e.to_json() for e in sim.run().events]
        runs.append((events, sim.scheduler.nominations, verdicts.repeated, verdicts.rechecked))
    (fast, fast_nominations, repeated, rechecked), (slow, slow_nominations, carried, none) = runs
    assert rechecked > 0 and none == 0
    assert repeated == carried + rechecked  # the carried verdicts are the same ones
    assert fast_nominations == slow_nominations
    assert len(fast) == len(slow)
    differ = [(a, b) for a, b in zip(fast, slow, strict=True) if a != b]
    assert differ[:1] == [], json.dumps(differ[:1])
