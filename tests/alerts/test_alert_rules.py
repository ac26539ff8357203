"""Each generated alert fires on a series that should trigger it and stays quiet on one that should not.

The queue alerts' series come from the what-if simulator run on the dev stack's own objects
(Kueue v0.19.2 admission, DWS ProvisioningRequests with a chosen provisioning delay), converted
into Kueue's metrics as upstream observes them (tests/alerts/series.py); the alert's PromQL is
evaluated on them (tests/alerts/promql_eval.py) with its ``duration`` ("for") honoured.  The
ClusterQueue status gauge follows the simulator's verdict on the stack's objects (a ClusterQueue
whose AdmissionCheck is missing is one Kueue holds inactive).  What the simulator does not model
is synthetic and says so: DCGM (GPU utilisation, XID errors), and evictions for
``PodsReadyTimeout`` -- the what-if has no waitForPodsReady (it starts every admitted pod at once,
whatif/README.md, "Simplified or ignored"), so only the ``AdmissionCheck`` eviction path is driven by
it and ``PodsReadyTimeout`` is a synthetic counter.
"""

from __future__ import annotations

from typing import Any

import pytest

from components.observability import queries as q
from components.observability.alerts import AlertRule, AlertThresholds, cluster_rules, queue_rules
from components.observability.dashboard import QueueView
from preview.harness import RunResult
from tests.alerts import series
from tests.alerts.promql_eval import Evaluator, Series
from tests.stack_runner import unedited_run
from whatif.cluster import build_cluster
from whatif.errors import WhatIfError
from whatif.pack import StackModel
from whatif.simulator import Outcome, Simulation
from whatif.sources import flavor_pools
from whatif.trace import parse_trace

CQ = "cluster-queue"
LIMITS = AlertThresholds(
    max_provisioning_wait_seconds=7200, idle_gpu_utilization_percent=10, window_minutes=15
)
STEP = 60.0


@pytest.fixture(scope="module")
def dev() -> StackModel:
    run: RunResult = unedited_run("dev")
    return StackModel.from_plain([(r.type, r.inputs, r.urn, r.name) for r in run.resources])


def simulate(model: StackModel, workloads: list[dict[str, Any]], delay: float) -> Outcome:
    cluster = build_cluster(model)
    cluster.pools = flavor_pools(model)
    trace = parse_trace({"workloads": workloads})
    return Simulation(cluster, trace, provisioning_delay=delay).run()


def job(name: str, submit: float, gpus: int = 1, duration: float = 4 * 3600) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": "default",
        "queue": "user-queue",
        "submit": submit,
        "duration": duration,
        "podSets": [{"name": "main", "count": gpus, "requests": {"cpu": "1", "nvidia.com/gpu": "1"}}],
    }


def rule(key_suffix: str, rules: list[AlertRule]) -> AlertRule:
    (found,) = [r for r in rules if r.key.endswith(key_suffix)]
    return found


def firing_times(alert: AlertRule, data: list[Series], end: float) -> list[float]:
    """Sample times at which the alert fires: its query is non-empty at every sample in the last
    ``duration`` seconds (Prometheus' ``for``)."""
    evaluator = Evaluator(data)
    times = [i * STEP for i in range(int(end // STEP) + 1)]
    true_at = {t for t in times if evaluator.instant(alert.query, t)}
    hold = alert.duration_seconds
    return [t for t in times if t >= hold and all(u in true_at for u in times if t - hold <= u <= t)]


DWS = QueueView(CQ, ("ml",), provisioning_check=True)


def test_provisioning_wait_alert_follows_the_simulated_dws_delay(dev: StackModel) -> None:
    alert = rule("provisioning-wait", queue_rules(DWS, LIMITS))
    trace = [job(f"j{i}", i * 600) for i in range(6)]
    end = 10 * 3600.0
    slow = simulate(dev, trace, delay=3 * 3600)
    assert all(wl.capacity_wait == 3 * 3600 for wl in slow.workloads)
    fired = firing_times(alert, series.admission_check_wait(slow, CQ, end), end)
    assert fired and min(fired) >= 3 * 3600 + alert.duration_seconds
    fast = simulate(dev, trace, delay=600)
    assert firing_times(alert, series.admission_check_wait(fast, CQ, end), end) == []


def test_eviction_alert_fires_on_failed_provisioning_requests(dev: StackModel) -> None:
    alert = rule("evictions", queue_rules(DWS, LIMITS))
    end = 6 * 3600.0
    # 11 GPUs: more than the dev pool's 10 single-L4 nodes, so each ProvisioningRequest fails.
    too_big = simulate(dev, [job("big", 0, gpus=11)], delay=300)
    assert any(ev.event == "requeued" for ev in too_big.events)
    assert firing_times(alert, series.evictions(too_big, CQ, end), end)
    fits = simulate(dev, [job("fits", 0, gpus=4)], delay=300)
    assert firing_times(alert, series.evictions(fits, CQ, end), end) == []


def test_eviction_alert_fires_on_a_pods_ready_timeout_counter() -> None:
    """Synthetic: the what-if does not model waitForPodsReady.  Kueue v0.19.2 counts the eviction
    in ``kueue_evicted_workloads_total{reason="PodsReadyTimeout"}``; a ``Preempted`` eviction is
    not this alert's business."""
    alert = rule("evictions", queue_rules(DWS, LIMITS))
    end = 3600.0

    def evicted(reason: str) -> Series:
        counts = [(i * STEP, 0.0 if i < 20 else 1.0) for i in range(int(end // STEP) + 1)]
        return series.constant(
            "kueue_evicted_workloads_total", {"cluster_queue": CQ, "reason": reason}, counts
        )

    fired = firing_times(alert, [evicted(q.PODS_READY_TIMEOUT)], end)
    assert fired and min(fired) == 20 * STEP
    assert firing_times(alert, [evicted("Preempted")], end) == []


def cluster_queue_status(model: StackModel, cluster_queue: str, end: float) -> list[Series]:
    """``kueue_cluster_queue_status`` as Kueue v0.19.2 reports it for the simulator's verdict on
    ``model``: one series per status, 1 on the current one (pkg/metrics/metrics.go
    ``ReportClusterQueueStatus``).  The what-if cluster model refuses a ClusterQueue that Kueue
    holds inactive (whatif/cluster.py ``_checks``: a missing AdmissionCheck), and Kueue then
    reports ``pending`` (pkg/cache/scheduler/clusterqueue.go ``updateQueueStatus``: missing
    flavors or admission checks make the status pending)."""
    try:
        build_cluster(model)
    except WhatIfError as error:
        assert "would be inactive" in str(error), error
        current = "pending"
    else:
        current = "active"
    return [
        series.constant(
            "kueue_cluster_queue_status",
            {"cluster_queue": cluster_queue, "status": s},
            [(i * STEP, 1.0 if s == current else 0.0) for i in range(int(end // STEP) + 1)],
        )
        for s in ("pending", "active", "terminating")
    ]


def test_inactive_queue_alert_follows_the_simulators_verdict(dev: StackModel) -> None:
    alert = rule("inactive", queue_rules(DWS, LIMITS))
    end = 3600.0
    assert firing_times(alert, cluster_queue_status(dev, CQ, end), end) == []
    run: RunResult = unedited_run("dev")
    without_check = StackModel.from_plain(
        [(r.type, r.inputs, r.urn, r.name) for r in run.resources if not r.type.endswith(":AdmissionCheck")]
    )
    fired = firing_times(alert, cluster_queue_status(without_check, CQ, end), end)
    assert fired and min(fired) == alert.duration_seconds


def test_idle_gpus_alert_needs_admitted_work_and_low_utilisation(dev: StackModel) -> None:
    alert = rule("gpus-idle", cluster_rules(LIMITS))
    end = 8 * 3600.0
    outcome = simulate(dev, [job("a", 0, gpus=2, duration=4 * 3600)], delay=300)
    active = series.admitted_active(outcome, CQ, end)

    def util(value: float) -> Series:
        return series.constant(
            "DCGM_FI_DEV_GPU_UTIL",
            {"gpu": "0", "modelName": "NVIDIA L4"},
            [(t * STEP, value) for t in range(481)],
        )

    fired = firing_times(alert, [active, util(3.0)], end)
    assert fired and min(fired) >= 300 + alert.duration_seconds
    assert max(fired) <= 300 + 4 * 3600  # quiet once the work has finished
    assert firing_times(alert, [active, util(85.0)], end) == []


def test_xid_alert() -> None:
    alert = rule("xid-errors", cluster_rules(LIMITS))
    end = 600.0

    def xid(value: float) -> Series:
        return series.constant(
            "DCGM_FI_DEV_XID_ERRORS", {"gpu": "0", "Hostname": "n1"}, [(t * STEP, value) for t in range(11)]
        )

    assert firing_times(alert, [xid(79.0)], end)
    assert firing_times(alert, [xid(0.0)], end) == []


def test_xid_alert_names_the_node_under_either_exporter_label() -> None:
    # dcgm-exporter <= 4.5.3-4.8.2 writes Hostname, the operator's pinned 4.6.0-4.8.3 hostname.
    alert = rule("xid-errors", cluster_rules(LIMITS))
    for label in ("Hostname", "hostname"):
        data = [series.constant("DCGM_FI_DEV_XID_ERRORS", {"gpu": "3", label: "n7"}, [(0.0, 48.0)])]
        result = Evaluator(data).instant(alert.query, 0.0)
        assert isinstance(result, dict)
        assert list(result) == [tuple(sorted({"gpu": "3", label: "n7"}.items()))]


def test_every_generated_rule_is_exercised() -> None:
    keys = {r.key.removeprefix(f"{CQ}-") for r in queue_rules(DWS, LIMITS) + cluster_rules(LIMITS)}
    assert keys == {"provisioning-wait", "evictions", "inactive", "gpus-idle", "xid-errors"}
