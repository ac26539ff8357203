"""The shipped price table (preview/cost/prices.yaml): every repo stack's GPU pool is priced from
a cited entry or knowingly unpriced, and a reservation is billed at its on-demand rate."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from preview.cost.estimate import cost_document
from preview.cost.prices import TABLE, price_table
from preview.report import stack_model
from preview.stack_files import stack_names
from tests.stack_runner import ROOT, run_stack, stack_files

CYCLENERD = (
    "https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator/blob/"
    "fd66b26ff84fee5cdd94f341ea89206e76c06b99/pricing.yml"
)

# (machine type, region, provisioning) of a repo stack's GPU pool that no citable source prices
# (the reasons are in prices.yaml's header).  A new combination in a repo stack must either get
# a cited price or be added here with its reason: the test below fails otherwise.
KNOWN_UNPRICED = {
    ("g2-standard-4", "us-west1", "flex-start"): "no dated copy of GCP's DWS rates",
    ("g2-standard-24", "us-central1", "flex-start"): "no dated copy of GCP's DWS rates",
    ("a3-highgpu-8g", "us-central1", "flex-start"): "no dated copy of GCP's DWS rates",
    ("a3-highgpu-8g", "us-east4", "flex-start"): "no dated copy of GCP's DWS rates",
    ("a3-highgpu-8g", "europe-west4", "flex-start"): "no dated copy of GCP's DWS rates",
    ("a3-ultragpu-8g", "us-central1", "flex-start"): "no dated copy of GCP's DWS rates",
    ("a3-megagpu-8g", "us-central1", "reservation"): "the billing-catalog source has no us-central1 A3 Mega",
}


def _cost(stack: str, edits: dict[str, Any] | None = None) -> dict[str, Any]:
    result = run_stack(stack, edits)
    return cost_document(stack, stack_model(result.resources), price_table(stack_files(stack, edits).config))


def _pools(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for q in doc["queues"] for f in q["flavors"] for p in f["pools"]]


@pytest.mark.parametrize("stack", stack_names(ROOT))
def test_every_repo_stack_pool_is_priced_from_the_table_or_knowingly_unpriced(stack: str) -> None:
    table = price_table({}, TABLE)
    for pool in _pools(_cost(stack)):
        key = (pool["machineType"], pool["region"], pool["provisioning"])
        if pool["price"] is None:
            assert key in KNOWN_UNPRICED, f"{stack}: {key} has neither a cited price nor a reason"
        else:
            assert key not in KNOWN_UNPRICED, f"{stack}: {key} is priced now: drop it from KNOWN_UNPRICED"
            cited = pool["price"]
            entry = table[(cited["machineType"], cited["region"], cited["provisioning"])]
            assert cited == entry.cited() and cited["source"].startswith("https://")


def test_the_shipped_entries_are_one_dated_source_and_spot_is_below_on_demand() -> None:
    table = price_table({}, TABLE)
    assert {(p.source, p.effective, p.currency) for p in table.values()} == {(CYCLENERD, "2026-07-30", "USD")}
    # A copy with swapped or shifted columns would break this: Spot is a discount on list price.
    for (machine, region, how), price in table.items():
        if how == "spot":
            assert price.node_hour < table[(machine, region, "on-demand")].node_hour
    # The figures as the source prints them: an L4 node and an 8 x H100 node in us-central1.
    assert table[("g2-standard-4", "us-central1", "on-demand")].node_hour == Decimal("0.706832255")
    assert table[("a3-highgpu-8g", "us-central1", "on-demand")].node_hour == Decimal("88.4899999025753")


def test_the_kai_and_skypilot_stacks_show_money_from_the_cited_on_demand_price() -> None:
    sky = _cost("skypilot")
    for queue in sky["queues"]:
        [flavor] = queue["flavors"]
        # g2-standard-4 carries one L4: the GPU-hour is the node-hour.
        assert flavor["gpuHour"] == "0.706832255" and queue["complete"] is True
        nominal = Decimal(flavor["nominalGpus"])
        assert queue["nominalPerHour"] == f"{(nominal * Decimal('0.706832255')).quantize(Decimal('0.01'))}"
        assert flavor["pools"][0]["price"]["source"] == CYCLENERD
    kai = {q["queue"]: q for q in _cost("kai")["queues"]}
    assert kai["team-a"]["flavors"][0]["gpuHour"] == "0.853624271"  # g2-standard-8, one L4
    assert kai["team-a"]["complete"] is True and kai["team-a"]["nominalPerHour"] is not None


MEGA_ON_DEMAND = {
    "machineType": "a3-megagpu-8g",
    "region": "us-central1",
    "provisioning": "on-demand",
    "nodeHour": "96.00",
    "currency": "USD",
    "effective": "2026-01-01",
    "source": "https://example.com/test-contract",
}


def test_a_reservation_pool_is_billed_at_its_on_demand_price_as_committed_cost() -> None:
    unpriced = next(q for q in _cost("gpudirect")["queues"] if q["queue"] == "training-reserved")
    assert unpriced["flavors"][0]["gpuHour"] is None and unpriced["committedPerHour"] is None
    doc = _cost("gpudirect", {"gpu-batch:gpuPrices": [MEGA_ON_DEMAND]})
    reserved = next(q for q in doc["queues"] if q["queue"] == "training-reserved")
    [flavor] = reserved["flavors"]
    assert flavor["committed"] is True and flavor["gpuHour"] == "12.00"  # 96.00 / 8 GPUs
    assert flavor["pools"][0]["provisioning"] == "reservation"
    assert flavor["pools"][0]["price"]["provisioning"] == "on-demand"  # the rate it is billed at
    assert reserved["committedPerHour"] == reserved["nominalPerHour"] is not None
    # A reservation price of its own (a committed-use contract) wins over the on-demand rate.
    own = {**MEGA_ON_DEMAND, "provisioning": "reservation", "nodeHour": "60.00"}
    doc = _cost("gpudirect", {"gpu-batch:gpuPrices": [MEGA_ON_DEMAND, own]})
    reserved = next(q for q in doc["queues"] if q["queue"] == "training-reserved")
    assert reserved["flavors"][0]["gpuHour"] == "7.50"
