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
from tests.stack_runner import ROOT, shared_unless_edited, stack_files, unedited_run

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
    result = shared_unless_edited(stack, edits)
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


def test_with_shipped_prices_one_quota_change_moves_only_that_teams_row() -> None:
    from preview.cost.section import cost_changes
    from preview.report import markdown_table
    from tests.stack_runner import config_value

    base = _cost("skypilot")
    kueue = config_value("skypilot", "gpu-batch:kueueQueues")
    team1 = next(q for q in kueue["clusterQueues"] if q["name"] == "skypilot-cluster-queue-team1")
    team1["resourceGroups"][0]["flavors"][0]["resources"]["nvidia.com/gpu"]["nominalQuota"] = "2"
    head = _cost("skypilot", {"gpu-batch:kueueQueues": kueue})
    rows = [r for r in cost_changes(base, head, "main", markdown_table) if r.startswith("| skypilot")]
    # 1 -> 2 L4s at the cited 0.706832255 per g2-standard-4 node-hour (one L4 per node).
    assert rows == [
        "| skypilot-cluster-queue-team1 | 1 -> 2 | 0.71 USD | 1.41 USD | +0.70 USD | 1.41 USD -> 2.12 USD |"
    ]


def test_gke_management_fee_is_per_cluster_of_the_stack_and_cited() -> None:
    from preview.cost.prices import cluster_fee
    from preview.cost.section import cost_section
    from preview.report import markdown_table

    fee = cluster_fee()
    assert fee is not None and fee.per_cluster_hour == Decimal("0.10")
    assert fee.source == "https://cloud.google.com/kubernetes-engine/pricing"
    for stack, clusters in (("dev", 1), ("multiregion", 3)):  # multiregion: manager + 2 workers
        result = unedited_run(stack)
        doc = cost_document(stack, stack_model(result.resources), price_table({}), None, fee)
        management = doc["clusterManagement"]
        assert (management["clusters"], management["perHour"]) == (clusters, f"{Decimal('0.10') * clusters}")
        line = next(x for x in cost_section(doc, markdown_table) if x.startswith("GKE cluster management"))
        assert f"{clusters} cluster(s) x 0.10 USD per hour" in line and "in no team's row" in line
    # Without a cited fee: no money, and the section says unpriced.
    doc = cost_document("dev", stack_model(unedited_run("dev").resources), price_table({}))
    assert doc["clusterManagement"]["perHour"] is None
    assert "GKE cluster management fee for 1 cluster(s): unpriced." in cost_section(doc, markdown_table)


def test_a_malformed_fee_in_the_table_is_one_line_with_its_key(tmp_path: Any) -> None:
    from preview.cost.prices import cluster_fee
    from stacks.errors import ConfigError

    table = tmp_path / "prices.yaml"
    table.write_text(
        'clusterManagementFee: {perClusterHour: 0.1, effective: "2026-01-01", source: "https://x.example"}\n'
    )
    with pytest.raises(ConfigError) as error:
        cluster_fee(table)
    assert str(error.value) == (
        "config error: prices.yaml: clusterManagementFee.perClusterHour: got 0.1, expected a string"
    )


@pytest.mark.parametrize("stack", stack_names(ROOT))
def test_every_machine_type_of_a_repo_stack_has_a_cited_on_demand_price_or_a_reason(stack: str) -> None:
    from preview.cost.prices import region_of

    table = price_table({}, TABLE)
    model = stack_model(unedited_run(stack).resources)
    for pool in model.node_pools():  # the system pools' CPU machines too
        machine = pool.res.get("nodeConfig", "machineType")
        location = pool.res.get("location")
        if not isinstance(location, str):
            cluster = model.cluster_of(pool)
            location = cluster.res.get("location") if cluster is not None else None
        assert isinstance(machine, str) and isinstance(location, str), f"{stack}: {pool.name}"
        key = (machine, region_of(location), "on-demand")
        assert key in table or key[:2] in NO_ON_DEMAND_SOURCE, (
            f"{stack}: {key} has no cited price and no reason"
        )


# Machine types a repo stack uses that the billing-catalog source above prices nowhere or not there.
NO_ON_DEMAND_SOURCE = {("a3-ultragpu-8g", "us-central1"), ("a3-megagpu-8g", "us-central1")}
