"""DWS capacity as GKE provides it, and Kueue's retries of a failed ProvisioningRequest.

Upstream: kubernetes-sigs/kueue@v0.19.2 ``pkg/controller/admissionchecks/provisioning/controller.go``
``syncCheckStates`` (Failed within ``backoffLimitCount`` -> Retry with
``UpdateAdmissionCheckRequeueState``, else Rejected), ``pkg/util/wait/backoff.go`` ``WaitTime``,
``apis/kueue/v1beta2/provisioningrequestconfig_types.go`` (retryStrategy defaults 3 / 60 / 1800).
"""

from __future__ import annotations

import itertools
from typing import Any

from tests.whatif.kueue_cases import provisioning_cluster
from tests.whatif.test_simulator import wl
from whatif.capacity import GPU, Pool, Retry, nodes_needed
from whatif.cluster import Cluster
from whatif.results import document
from whatif.simulator import Simulation
from whatif.trace import parse_trace


def gang(name: str, submit: float, duration: float, count: int = 1) -> dict[str, Any]:
    """``count`` one-GPU pods."""
    return {
        **wl(name, submit, duration),
        "podSets": [{"name": "workers", "count": count, "requests": {GPU: "1"}}],
    }


def run(c: Cluster, workloads: list[dict[str, Any]], delay: Any = 300) -> dict[str, Any]:
    trace = parse_trace({"workloads": workloads, "provisioningDelaySeconds": delay})
    return document(c, Simulation(c, trace).run())


def times(doc: dict[str, Any], name: str) -> list[tuple[float, str]]:
    return [(e["time"], e["event"]) for e in doc["events"] if e["workload"] == f"team-a/{name}"]


def test_backoff_doubles_from_the_base_up_to_the_cap() -> None:
    """``WaitTime(n)``: 60 s * 2^(n-1), capped at backoffMaxSeconds (CRD defaults)."""
    assert [Retry().backoff(n) for n in range(1, 7)] == [60, 120, 240, 480, 960, 1800]
    assert Retry(3, 10, 25).backoff(3) == 25


def test_pods_are_packed_onto_nodes_of_the_pool_machine_type() -> None:
    two_gpu = Pool("p", 2, 8)
    assert nodes_needed(two_gpu, [(3, 1000)]) == 2  # 3 one-GPU pods on 2-GPU nodes
    assert nodes_needed(two_gpu, [(2, 2000), (1, 1000)]) == 3
    assert nodes_needed(two_gpu, [(1, 4000)]) is None  # a pod bigger than any node
    assert nodes_needed(two_gpu, [(4, 0)]) == 0  # pods without GPUs ride along


def test_a_gang_no_pool_can_hold_is_retried_per_retry_strategy_then_rejected() -> None:
    """Attempts 1 and 2 fail and are retried after 60 s and 120 s; attempt 3 is past
    backoffLimitCount 2, so the check is Rejected and the workload never admitted."""
    c = provisioning_cluster(Pool("l4-pool", 1, 4), retry={"backoffLimitCount": 2, "backoffBaseSeconds": 60})
    doc = run(c, [gang("too-big", 0, 60, count=5)])
    assert times(doc, "too-big") == [(300, "requeued"), (660, "requeued"), (1080, "inadmissible")]
    assert "Rejected after 2 retries" in doc["events"][-1]["reason"]
    assert "l4-pool cannot hold the gang" in doc["events"][0]["reason"]
    fig = doc["queues"]["cq"]
    assert fig["neverAdmitted"] == ["team-a/too-big"] and fig["failedProvisioningRequests"] == 3


def test_a_saturated_pool_makes_waits_grow() -> None:
    """Quota is plentiful (100 GPUs) but the pool has 2 one-GPU nodes: each later gang waits for
    nodes, not quota, and its wait grows; with a pool that is big enough every wait is the
    provisioning delay."""
    retry = {"backoffLimitCount": 30, "backoffBaseSeconds": 60, "backoffMaxSeconds": 300}
    load = [gang(f"g{i}", i * 60, 1800) for i in range(8)]
    saturated = run(provisioning_cluster(Pool("l4-pool", 1, 2), retry=retry), load)
    roomy = run(provisioning_cluster(Pool("l4-pool", 1, 8), retry=retry), load)
    admitted = {e["workload"]: e["time"] for e in saturated["events"] if e["event"] == "admitted"}
    waits = [admitted[f"team-a/g{i}"] - i * 60 for i in range(8)]
    assert waits[:2] == [300, 300]
    assert all(later >= earlier for earlier, later in itertools.pairwise(waits))
    assert waits[-1] > 4 * 1800 / 2  # the eighth waits for three rounds of two nodes
    fig, roomy_fig = saturated["queues"]["cq"], roomy["queues"]["cq"]
    assert fig["waitForQuotaSeconds"] == 0 and fig["waitForCapacitySeconds"] > 1800
    assert roomy_fig["waitSeconds"]["max"] == 300 and roomy_fig["failedProvisioningRequests"] == 0
    # GPU use is against what the pool can hold (2 GPUs), not the 100-GPU quota
    assert fig["gpuCapacity"] == 2 and fig["gpuUtilisation"] > 0.8
    assert saturated["pools"]["l4-pool"]["nodeUtilisation"] == fig["gpuUtilisation"]


def test_nodes_and_their_workload_end_at_max_run_duration() -> None:
    """``long`` holds the only node until GKE removes it at 600 s; ``next`` fails at 10, 70, 190
    and 430 (back-off 60, 120, 240, 480) and gets the node on its attempt at 910."""
    c = provisioning_cluster(
        Pool("l4-pool", 1, 1), parameters={"maxRunDurationSeconds": "600"}, retry={"backoffLimitCount": 5}
    )
    doc = run(c, [gang("long", 0, 3600), gang("next", 10, 60)], delay=0)
    assert times(doc, "long") == [(0, "admitted"), (600, "finished")]
    ended = next(e for e in doc["events"] if e["workload"] == "team-a/long" and e["event"] == "finished")
    assert "maxRunDurationSeconds" in ended["reason"]
    assert times(doc, "next")[-2:] == [(910, "admitted"), (970, "finished")]


def test_check_capacity_checks_the_pool_without_provisioning() -> None:
    """check-capacity answers at once (no provisioning delay) and fails like a queued request."""
    c = provisioning_cluster(
        Pool("standing", 1, 1),
        provisioning_class="check-capacity.autoscaling.x-k8s.io",
        retry={"backoffLimitCount": 0},
    )
    doc = run(c, [gang("first", 0, 100), gang("second", 0, 100)], delay=900)
    assert times(doc, "first") == [(0, "admitted"), (100, "finished")]
    assert times(doc, "second") == [(0, "inadmissible")]


def test_provisioning_time_is_drawn_per_request_from_the_profile_range() -> None:
    c = provisioning_cluster(Pool("l4-pool", 1, 50))
    doc = run(c, [gang(f"g{i}", 0, 60) for i in range(20)], delay=[100, 900])
    admitted = [e["time"] for e in doc["events"] if e["event"] == "admitted"]
    assert len(set(admitted)) > 10 and all(100 <= t <= 900 for t in admitted)
    again = run(
        provisioning_cluster(Pool("l4-pool", 1, 50)), [gang(f"g{i}", 0, 60) for i in range(20)], [100, 900]
    )
    assert again == doc
