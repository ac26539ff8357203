"""The expected week: the what-if's GPU-hours per flavor (Kueue) or per queue (KAI), each at its
own cited GPU-hour price."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from preview.cost.estimate import cost_document, expected_week
from preview.cost.prices import price_table
from preview.cost.usage import weekly_gpu_hours
from preview.report import stack_model
from tests.stack_runner import shared_unless_edited, stack_files, unedited_run
from tests.whatif.kueue_cases import build, cluster_queue, flavor, flavor_quotas, group, local_queue
from whatif.kai.model import build_kai
from whatif.kai.run import declared_kai_pod_sets, simulate_kai
from whatif.pack import StackModel
from whatif.profiles import generate_trace, load_profile, profile_path
from whatif.results import document
from whatif.simulator import Simulation
from whatif.trace import parse_trace


def _workload(name: str, duration: float) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": "team-a",
        "queue": "user-queue",
        "submit": 0,
        "duration": duration,
        "podSets": [{"name": "workers", "count": 1, "requests": {"nvidia.com/gpu": "1"}}],
    }


def test_the_what_if_splits_a_queues_gpu_time_by_the_flavor_each_workload_was_assigned() -> None:
    # Kueue tries a resource group's flavors in order: one GPU of on-demand, then spot.
    cluster = build(
        [
            flavor("on-demand"),
            flavor("spot"),
            cluster_queue(
                "cq",
                group(
                    flavor_quotas("on-demand", ("nvidia.com/gpu", "1")),
                    flavor_quotas("spot", ("nvidia.com/gpu", "2")),
                ),
            ),
            local_queue("team-a", "user-queue", "cq"),
        ]
    )
    trace = parse_trace({"workloads": [_workload("a", 100), _workload("b", 100), _workload("c", 50)]})
    doc = document(cluster, Simulation(cluster, trace).run())
    admitted = {
        e["workload"]: e["flavors"]["workers"]["nvidia.com/gpu"]
        for e in doc["events"]
        if e["event"] == "admitted"
    }
    assert admitted == {"team-a/a": "on-demand", "team-a/b": "spot", "team-a/c": "spot"}
    figures = doc["queues"]["cq"]
    # Span 100 s: on-demand held 1 GPU throughout; spot 1 GPU for 100 s and 1 for 50 s.
    assert figures["gpusHeldByFlavor"] == {"on-demand": 1.0, "spot": 1.5}
    # The same GPU-seconds as the queue's utilisation (rounded to 4 places there): 2.5 of 3 GPUs.
    assert figures["gpuUtilisation"] == round(
        sum(figures["gpusHeldByFlavor"].values()) / figures["gpuCapacity"], 4
    )


def _flavor(name: str, gpu_hour: str | None) -> dict[str, Any]:
    return {"flavor": name, "gpuHour": gpu_hour}


def test_each_flavors_gpu_hours_are_priced_at_that_flavors_price() -> None:
    flavors = [_flavor("on-demand", "0.70"), _flavor("spot", "0.40")]
    week = expected_week(flavors, {"on-demand": Decimal(168), "spot": Decimal(252)})
    assert week == {
        "expectedWeeklyGpuHours": "420.0",
        "expectedWeekly": f"{168 * Decimal('0.70') + 252 * Decimal('0.40')}",
    }
    assert [(f["expectedWeeklyGpuHours"], f["expectedWeekly"]) for f in flavors] == [
        ("168.0", "117.60"),
        ("252.0", "100.80"),
    ]
    # A flavor that held GPUs without a price: the queue's week is unpriced, never a partial sum.
    flavors = [_flavor("on-demand", "0.70"), _flavor("spot", None)]
    week = expected_week(flavors, {"on-demand": Decimal(168), "spot": Decimal(252)})
    assert week["expectedWeekly"] is None and flavors[0]["expectedWeekly"] == "117.60"
    assert flavors[1]["expectedWeekly"] is None
    # An unpriced flavor that held nothing costs nothing this week; GPU-hours on a flavor the
    # cost does not know are unpriced; no what-if is no figure at all.
    assert expected_week(flavors, {"on-demand": Decimal(168)})["expectedWeekly"] == "117.60"
    assert expected_week([_flavor("l4", "1")], {"other": Decimal(1)})["expectedWeekly"] is None
    assert expected_week([_flavor("l4", None)], {})["expectedWeekly"] is None
    assert expected_week([_flavor("l4", "1")], {})["expectedWeekly"] == "0.00"
    assert expected_week([_flavor("l4", "1")], None) == {
        "expectedWeeklyGpuHours": None,
        "expectedWeekly": None,
    }


def test_kai_queues_get_an_expected_week_from_the_kai_what_if_at_the_cited_price() -> None:
    result = unedited_run("kai")
    items = [(r.type, r.inputs, r.urn, r.name) for r in result.resources]
    doc = cost_document(
        "kai",
        stack_model(result.resources),
        price_table(stack_files("kai").config),
        weekly_gpu_hours("kai", items),
    )
    model = StackModel.from_plain(items)
    path = profile_path("kai")
    trace = generate_trace(load_profile(path), model, path.name, declared_kai_pod_sets)
    kai = simulate_kai(model, trace, build_kai(model))["queues"]
    for queue in (q for q in doc["queues"] if q["scheduler"] == "kai"):
        figures = kai[queue["queue"]]
        hours = Decimal(str(figures["gpuUtilisation"])) * Decimal(str(figures["gpuCapacity"])) * 168
        assert hours > 0 and queue["expectedWeeklyGpuHours"] == f"{hours.quantize(Decimal('0.1'))}"
        gpu_hour = Decimal(queue["flavors"][0]["gpuHour"])  # g2-standard-8's cited on-demand price
        assert queue["expectedWeekly"] == f"{(hours * gpu_hour).quantize(Decimal('0.01'))}"


def test_a_kai_queue_without_a_gpu_limit_is_capped_by_the_nodes_and_quota_beyond_them_is_money() -> None:
    from tests.stack_runner import config_value

    queues = {q["queue"]: q["flavors"][0] for q in _kai_cost()["queues"]}
    # g2-standard-8 x maxNodes 4 = 4 L4s.  department-1's limit is -1: its ceiling is the nodes'.
    assert queues["department-1"]["servableGpus"] == "4" and queues["department-1"]["ceilingGpus"] == "4"
    assert (
        queues["department-1"]["ceilingPerHour"]
        == f"{(4 * Decimal('0.853624271')).quantize(Decimal('0.01'))}"
    )
    assert queues["team-a"]["ceilingGpus"] == "4" and queues["team-a"]["unservableGpus"] == "0"
    # A deserved quota of 6 GPUs on 4 L4s: 2 can never be served, shown in money; team-a's limit
    # of 3 is its ceiling, below the nodes.
    tree = config_value("kai", "gpu-batch:kaiQueues")
    tree[0]["resources"]["gpu"]["quota"] = 6
    tree[0]["children"][0]["resources"]["gpu"]["limit"] = 3
    queues = {q["queue"]: q["flavors"][0] for q in _kai_cost({"gpu-batch:kaiQueues": tree})["queues"]}
    assert queues["department-1"]["unservableGpus"] == "2"
    assert (
        queues["department-1"]["unservablePerHour"]
        == f"{(2 * Decimal('0.853624271')).quantize(Decimal('0.01'))}"
    )
    assert queues["team-a"]["ceilingGpus"] == "3"


def _kai_cost(edits: dict[str, Any] | None = None) -> dict[str, Any]:
    result = shared_unless_edited("kai", edits)
    return cost_document("kai", stack_model(result.resources), price_table(stack_files("kai", edits).config))
