"""Heads sent straight back to their heap are tried again at the same instant, as Kueue v0.19.2's
scheduling loop does (kubernetes-sigs/kueue@v0.19.2).

``pkg/scheduler/scheduler.go`` ``processEntry``: an entry whose ``fits`` fails because an earlier
entry of the cycle took the capacity is ``markSkipped`` (its scan progress kept, gate
``FlavorFungibilityPreserveScanProgress``); ``requeueAndUpdate`` gives it
``RequeueReasonFailedAfterNomination``, which ``pkg/cache/queue/cluster_queue.go``
``RequeueIfNotPresent`` turns into ``immediate``: back into the heap, so ``schedule`` pops it again
in the very next cycle and its flavor scan resumes after the flavor it was skipped on.  The
instant ends only when a cycle would repeat (``whatif.simulator.Simulation._settle``).
"""

from __future__ import annotations

from typing import Any

from tests.whatif.kueue_cases import build, cluster_queue, flavor, flavor_quotas, group, local_queue
from tests.whatif.test_simulator import run


def _world() -> Any:
    return build(
        [
            flavor("f1"),
            flavor("f2"),
            # a: 8 cpu of f1; preempts lower priorities within the queue
            cluster_queue(
                "a",
                group(flavor_quotas("f1", ("cpu", "8"))),
                cohort="co",
                preemption={"withinClusterQueue": "LowerPriority"},
            ),
            # b: no f1 of its own (borrows a's), 4 cpu of f2; MayStopSearch stops at a borrowed f1
            cluster_queue(
                "b",
                group(flavor_quotas("f1", ("cpu", "0")), flavor_quotas("f2", ("cpu", "4"))),
                cohort="co",
            ),
            local_queue("ns", "qa", "a"),
            local_queue("ns", "qb", "b"),
        ]
    )


def _wl(name: str, queue: str, submit: float, cpu: str, priority: int = 0) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": "ns",
        "queue": queue,
        "priority": priority,
        "submit": submit,
        "duration": 1000,
        "podSets": [{"name": "main", "requests": {"cpu": cpu}}],
    }


def test_a_head_skipped_for_capacity_an_earlier_entry_took_resumes_its_scan_in_the_next_cycle() -> None:
    """t=0 ``v`` runs on a's f1 (4 of 8).  t=10 ``p`` (a, 8 cpu, higher priority) preempts ``v``,
    whose quota is released 100 s later.  t=20 ``b1`` (b, 2 cpu) fits f1 by borrowing the 4 free
    cpu and stops there (MayStopSearch, scan index 0 of 2: flavors pending); ``p`` goes first
    (it does not borrow), holds its 8 cpu for the cycle while waiting for ``v``, and ``b1``'s
    ``fits`` fails: skipped.  Kueue's next cycle -- at once -- resumes ``b1``'s scan at f2 and
    admits it there, at t=20, not when ``v``'s eviction lands."""
    doc = run(
        _world(),
        [_wl("v", "qa", 0, "4"), _wl("p", "qa", 10, "8", priority=100), _wl("b1", "qb", 20, "2")],
        eviction_delay=100,
    )
    admitted = [(e["time"], e["workload"], e["flavors"]) for e in doc["events"] if e["event"] == "admitted"]
    assert (20, "ns/b1", {"main": {"cpu": "f2"}}) in admitted
    assert (110, "ns/p", {"main": {"cpu": "f1"}}) in admitted
