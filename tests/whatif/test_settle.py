"""A run that does not settle is one line and a non-zero exit, never a hang.

The detectors are driven by a scheduler whose cycle is replaced, so each test states exactly the
repetition it shows: a preemptor evicting the same victim every cycle at one instant (the
livelock Kueue's own scheduler sustains: it would issue the same preemption every cycle), and a
cycle that keeps reporting a change without end.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.whatif.kueue_cases import cluster_queue, flavor, flavor_quotas, group, local_queue
from tests.whatif.test_simulator import cluster, wl
from whatif.errors import NotSettledError
from whatif.scheduler import CycleOutcome, Scheduler
from whatif.simulator import LIVELOCK_REPEATS, MAX_CYCLES_PER_INSTANT, Simulation
from whatif.trace import parse_trace


def _sim() -> Simulation:
    return Simulation(cluster("2"), parse_trace({"workloads": [wl("p", 0, 10), wl("v", 0, 10)]}))


def test_a_preemptor_that_evicts_the_same_victim_every_cycle_is_a_reported_livelock() -> None:
    sim = _sim()
    p, v = sim.workloads
    sim.scheduler.cycle = lambda: CycleOutcome(evictions=[(v, p, "InClusterQueue")])  # type: ignore[method-assign]
    with pytest.raises(NotSettledError) as raised:
        sim.run()
    message = str(raised.value)
    assert "\n" not in message and "livelock" in message
    assert f"team-a/p has preempted team-a/v {LIVELOCK_REPEATS} times" in message
    assert message.startswith("time 0, scheduling cycle ")


def test_a_cycle_that_never_stops_changing_is_reported_after_the_cap() -> None:
    sim = _sim()
    calls = []

    def forever() -> CycleOutcome:
        calls.append(1)
        return CycleOutcome(parked=1)

    sim.scheduler.cycle = forever  # type: ignore[method-assign]
    with pytest.raises(NotSettledError, match=f"did not settle after {MAX_CYCLES_PER_INSTANT} cycles"):
        sim.run()
    assert len(calls) == MAX_CYCLES_PER_INSTANT


def test_cli_exits_3_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from whatif.cli import main

    items = [flavor("l4"), cluster_queue("cq", group(flavor_quotas("l4", ("nvidia.com/gpu", "1"))))]
    items.append(local_queue("team-a", "user-queue", "cq"))
    (tmp_path / "objects.yaml").write_text(yaml.safe_dump_all(items))
    (tmp_path / "trace.yaml").write_text(yaml.safe_dump({"workloads": [wl("a", 0, 10)]}))
    monkeypatch.setattr(Scheduler, "cycle", lambda self: CycleOutcome(parked=1))
    code = main(["--manifests", str(tmp_path / "objects.yaml"), "--trace", str(tmp_path / "trace.yaml")])
    err = capsys.readouterr().err
    assert code == 3 and err.startswith("whatif: time 0, scheduling cycle") and err.count("\n") == 1
