"""Which workers a dispatched workload's copies go to, and when: Kueue v0.19.2's dispatchers.

kubernetes-sigs/kueue@v0.19.2:

- ``cmd/kueue/main.go``: the dispatcher is the manager's Configuration
  ``multiKueue.dispatcherName``, ``AllAtOnce`` when unset; any other name is an external
  dispatcher (not modelled: refused).
- ``pkg/controller/admissionchecks/multikueue/workload.go`` ``nominateAndSynchronizeWorkers``:
  ``AllAtOnce`` nominates every worker of the MultiKueueConfig at once.
- ``pkg/controller/workloaddispatcher/incrementaldispatcher.go`` ``nominateWorkers`` /
  ``getNextNominatedWorkers`` / ``stepSize``: ``Incremental`` nominates ``stepSize`` workers
  (default ``DefaultStepSize`` 3; the Configuration's ``incrementalDispatcherConfig.stepSize``
  under the ``MultiKueueIncrementalDispatcherConfig`` gate, on by default) and adds the next
  ``stepSize`` once a round of ``incrementalDispatcherRoundTimeout`` (5 minutes) has passed,
  keeping the earlier nominations; the not yet nominated workers in the MultiKueueConfig's order
  (gate ``MultiKueueIncrementalDispatcherRespectConfigOrder``, on by default), sorted by name when
  the gate is off.  The next round starts when the reconcile requeued after the remaining round
  time runs: taken as exactly 300 s after the previous one (the controller's requeue latency is
  not modelled).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from whatif.errors import NotModelledError, WhatIfError

ALL_AT_ONCE = "kueue.x-k8s.io/multikueue-dispatcher-all-at-once"
INCREMENTAL = "kueue.x-k8s.io/multikueue-dispatcher-incremental"
DEFAULT_STEP_SIZE = 3  # incrementaldispatcher.go DefaultStepSize
ROUND_SECONDS = 300.0  # incrementaldispatcher.go incrementalDispatcherRoundTimeout (5 * time.Minute)
STEP_SIZE_GATE = "MultiKueueIncrementalDispatcherConfig"  # kube_features.go: Beta, on in 0.19
CONFIG_ORDER_GATE = "MultiKueueIncrementalDispatcherRespectConfigOrder"  # Beta, on in 0.19


@dataclass(frozen=True)
class Dispatcher:
    name: str = ALL_AT_ONCE
    step_size: int = DEFAULT_STEP_SIZE
    config_order: bool = True

    @property
    def incremental(self) -> bool:
        return self.name == INCREMENTAL

    @property
    def label(self) -> str:
        if self.incremental:
            order = "the MultiKueueConfig's order" if self.config_order else "name order"
            return f"Incremental ({self.step_size} workers per {ROUND_SECONDS:g} s round, in {order})"
        return "AllAtOnce"


def dispatcher_of(config: dict[str, Any] | None, gates: dict[str, bool]) -> Dispatcher:
    """The manager's dispatcher from its Kueue Configuration and feature gates."""
    mk = (config or {}).get("multiKueue") or {}
    if not isinstance(mk, dict):
        raise WhatIfError(f"Kueue Configuration multiKueue: got {mk!r}, expected a mapping")
    name = mk.get("dispatcherName") or ALL_AT_ONCE
    if name not in (ALL_AT_ONCE, INCREMENTAL):
        raise NotModelledError(
            f"Kueue Configuration multiKueue.dispatcherName {name!r} is an external dispatcher: only "
            f"{ALL_AT_ONCE} and {INCREMENTAL} are modelled"
        )
    step = DEFAULT_STEP_SIZE
    idc = mk.get("incrementalDispatcherConfig") or {}
    raw = idc.get("stepSize") if isinstance(idc, dict) else None
    if raw is not None and gates.get(STEP_SIZE_GATE, True):
        if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
            raise WhatIfError(
                f"Kueue Configuration multiKueue.incrementalDispatcherConfig.stepSize: got {raw!r}, "
                "expected an integer >= 1"
            )
        step = raw
    return Dispatcher(str(name), step, gates.get(CONFIG_ORDER_GATE, True))


def next_nominated(nominated: list[str], clusters: list[str], dispatcher: Dispatcher) -> list[str]:
    """``getNextNominatedWorkers``: the next batch after ``nominated`` (empty: no more workers)."""
    workers = [c for c in clusters if c not in set(nominated)]
    if not dispatcher.config_order:
        workers.sort()
    return workers[: dispatcher.step_size]


def rounds(clusters: list[str], dispatcher: Dispatcher) -> list[tuple[float, list[str]]]:
    """Seconds after the quota reservation at which each batch of workers gets its copy."""
    if not dispatcher.incremental:
        return [(0.0, list(clusters))] if clusters else []
    out: list[tuple[float, list[str]]] = []
    nominated: list[str] = []
    while batch := next_nominated(nominated, clusters, dispatcher):
        out.append((len(out) * ROUND_SECONDS, batch))
        nominated += batch
    return out
