"""MultiKueue's workload reconciler, ported case by case to the simulator on the example stack.

Each test names the case it ports from kubernetes-sigs/kueue@v0.19.2
``pkg/controller/admissionchecks/multikueue/workload_test.go`` ``TestWlReconcile`` and checks the
same outcome at the level the what-if models (which workers hold a copy, when the manager's
workload is admitted, finished or loses its copies).  The example stack: manager quota 32 GPUs,
two workers with 16 GPUs of quota and a 2-node 8-GPU DWS pool each.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.whatif.multikueue.conftest import GANG
from whatif.errors import NotModelledError
from whatif.multikueue.fleet import Fleet
from whatif.multikueue.run import MultiKueueRun
from whatif.trace import parse_trace


def _run(found: Fleet, workloads: list[dict[str, Any]], us: float, eu: float) -> MultiKueueRun:
    trace = parse_trace(
        {
            "workerProvisioningDelaySeconds": {"us-east4": us, "europe-west4": eu},
            "workloads": [
                {"namespace": "research", "queue": "default", "duration": 3600, "podSets": GANG, **w}
                for w in workloads
            ],
        }
    )
    run = MultiKueueRun(found, trace)
    run.run()
    return run


def _worker(run: MultiKueueRun, worker: str) -> list[tuple[float, str, str]]:
    return [(e.time, e.workload, e.event) for e in run.worker_sims[worker].events]


def test_wl_with_reservation_creates_missing_workloads_and_not_admitted_remotes_are_kept(
    found: Fleet,
) -> None:
    """ "wl with reservation, creates missing workloads" and "remote wl with reservation but not
    admitted - other workers not deleted": both workers get a copy at the reservation, and while
    their ProvisioningRequests run neither copy is deleted."""
    run = _run(found, [{"name": "a", "submit": 0}], us=1800, eu=900)
    for worker in ("us-east4", "europe-west4"):
        assert [w.submit for w in run.worker_sims[worker].workloads] == [0]
    assert _worker(run, "europe-west4") == [(900, "research/a", "admitted"), (4500, "research/a", "finished")]
    assert _worker(run, "us-east4") == [(900, "research/a", "deleted")]  # not before eu admitted


def test_remote_wl_finished_marks_the_local_workload_finished(found: Fleet) -> None:
    """ "remote wl is finished, the local workload and Job are marked completed": the manager's
    quota is released when the copy ends, so the fifth gang (manager quota holds four) starts."""
    run = _run(found, [{"name": f"g{i}", "submit": 0} for i in range(5)], us=60, eu=60)
    manager = [(e.time, e.workload, e.event) for e in run.sim.events]
    assert (3660, "research/g0", "finished") in manager
    fifth = [t for t, wl, ev in manager if wl == "research/g4" and ev == "admitted"]
    assert fifth and fifth[0] >= 3660


def test_wl_without_reservation_clears_the_workload_objects(found: Fleet) -> None:
    """ "wl without reservation, clears the workload objects": a manager workload preempted on the
    manager (its ClusterQueue preempts LowerPriority) loses every copy, reserved or pending, and
    is dispatched again once readmitted."""
    low = [{"name": f"low{i}", "submit": 0, "priority": 0} for i in range(4)]
    run = _run(found, [*low, {"name": "high", "submit": 60, "priority": 100}], us=7200, eu=7200)
    manager = [(e.time, e.workload, e.event) for e in run.sim.events]
    victims = [wl for t, wl, ev in manager if ev == "preempted" and t == 60]
    assert len(victims) == 1
    for worker in ("us-east4", "europe-west4"):
        deleted = [(t, wl) for t, wl, ev in _worker(run, worker) if ev == "deleted"]
        assert (60, victims[0]) in deleted
        assert [w.key for w in run.worker_sims[worker].workloads].count(victims[0]) == 2  # re-dispatched


def test_handle_workload_evicted_on_worker_cluster_is_refused(found: Fleet) -> None:
    """ "handle workload evicted on worker cluster": the check goes to Retry and the manager
    re-admits; its timing is not modelled, so a worker preempting an admitted copy is one line."""
    workloads = [{"name": f"low{i}", "submit": 0, "priority": 0} for i in range(4)]
    workloads.append({"name": "high", "submit": 600, "priority": 100})
    with pytest.raises(NotModelledError, match=r"evicted research/low\d after admitting it"):
        _run(found, workloads, us=60, eu=60)
