"""The simulator's shortcuts change no outcome (issue 22, item 6).

Two shortcuts have no Kueue counterpart and must give exactly what the long way gives:
- held cohort trees (``Scheduler.hold_settled``, ``QueueManager.hold`` / ``wake``): a tree whose
  cycle would repeat is not nominated again until something touches it;
- the hopeless-search bound of fair preemption (``FairPreemption._hopeless``): a search that no
  run of the strategies can make succeed stops before listing candidates.
Each is switched off and the events of the same seeded random scenarios (the invariant test's
generator: cohorts, limits, flavors, gangs, priorities, policies, fair sharing with weights),
with victims released at once and after 30 s, must be identical.  Speed is measured by
``python -m benchmarks.whatif_bench``, never here.
"""

from __future__ import annotations

import json
import random

import pytest

from tests.whatif.test_invariants import _cluster, _trace
from whatif.errors import NotSettledError
from whatif.fairsharing.preemption import FairPreemption
from whatif.simulator import Simulation

SEEDS = range(300)


def _events(seed: int, delay: float, *, hold: bool = True) -> str:
    rng = random.Random(seed)
    cluster = _cluster(rng)
    trace = _trace(rng, sorted(cluster.cluster_queues))
    sim = Simulation(cluster, trace, eviction_delay=delay)
    sim.scheduler.hold_settled = hold
    try:
        return json.dumps([e.to_json() for e in sim.run().events])
    except NotSettledError as error:
        return str(error)


@pytest.mark.parametrize("delay", [0.0, 30.0])
def test_holding_settled_trees_changes_no_event(delay: float) -> None:
    differ = [s for s in SEEDS if _events(s, delay) != _events(s, delay, hold=False)]
    assert differ == []


@pytest.mark.parametrize("delay", [0.0, 30.0])
def test_the_hopeless_search_bound_changes_no_event(delay: float, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = {s: _events(s, delay) for s in SEEDS}
    searched = []

    def never(self: FairPreemption, strategies: tuple[str, ...]) -> bool:
        searched.append(1)
        return False

    monkeypatch.setattr(FairPreemption, "_hopeless", never)
    differ = [s for s in SEEDS if _events(s, delay) != fast[s]]
    assert searched  # fair-sharing scenarios did search
    assert differ == []
