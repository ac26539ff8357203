"""Each team's GPU bill: cited prices only, unpriced never $0, one quota change -> one row."""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from typing import Any

import pytest

from preview.cost.estimate import cost_document, plan_cost
from preview.cost.prices import TABLE, price_table, region_of
from preview.cost.section import cost_changes, cost_section
from preview.plan import plan_document
from preview.report import markdown_table, stack_model
from preview.stack_files import stack_names
from stacks.errors import ConfigError
from tests.stack_runner import ROOT, config_value, run_stack, stack_files, unedited_run

# A test price (not shipped data): prod's L4 pool is g2-standard-24 (2 L4s) queued in us-central1.
L4_PRICE = {
    "machineType": "g2-standard-24",
    "region": "us-central1",
    "provisioning": "flex-start",
    "nodeHour": "2.50",
    "currency": "USD",
    "effective": "2026-01-01",
    "source": "https://example.com/test-price-sheet",
}


def _prod_cost(queues: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    edits: dict[str, Any] = {"gpu-batch:gpuPrices": [L4_PRICE]}
    if queues is not None:
        kueue = copy.deepcopy(config_value("prod", "gpu-batch:kueueQueues"))
        kueue["clusterQueues"] = queues
        edits["gpu-batch:kueueQueues"] = kueue
    result = run_stack("prod", edits)
    files = stack_files("prod", edits)
    plan = plan_document(files.project, "prod", result.resources, result.outputs)
    return plan_cost(json.loads(json.dumps(plan)), price_table(files.config))


def _what_if_queues() -> dict[str, Any]:
    from whatif.pack import StackModel
    from whatif.profiles import generate_trace, load_profile, profile_path
    from whatif.run import simulate

    result = unedited_run("prod")
    model = StackModel.from_plain((r.type, r.inputs, r.urn, r.name) for r in result.resources)
    path = profile_path("prod")
    queues: dict[str, Any] = simulate(model, generate_trace(load_profile(path), model, path.name))["queues"]
    return queues


def _queue(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(q for q in doc["queues"] if q["queue"] == name)


def test_a_cited_price_prices_the_queues_behind_its_pool_and_the_rest_stay_unpriced() -> None:
    doc = _prod_cost()
    l4 = _queue(doc, "research-l4")
    # 12 nominal L4 GPUs at 2.50 per 2-GPU node-hour; ceiling 12 + borrowingLimit 6.
    assert (l4["nominalPerHour"], l4["ceilingPerHour"], l4["complete"]) == ("15.00", "22.50", True)
    [flavor] = l4["flavors"]
    assert flavor["gpuHour"] == "1.25" and flavor["pools"][0]["price"]["source"] == L4_PRICE["source"]
    h100 = _queue(doc, "research-h100")
    assert h100["complete"] is False and h100["nominalPerHour"] is None
    # The expected week: the what-if's GPU-hours for the queue (utilisation x capacity x 168 h)
    # at its GPU-hour price; the unpriced queue keeps its GPU-hours and no money.
    figures = _what_if_queues()
    # The mean L4s the queue held (whatif gpusHeldByFlavor) over a 168-hour week.
    l4_hours = Decimal(str(figures["research-l4"]["gpusHeldByFlavor"]["l4"])) * 168
    assert Decimal(l4["expectedWeeklyGpuHours"]) == l4_hours.quantize(Decimal("0.1"))
    assert Decimal(l4["expectedWeekly"]) == (l4_hours * Decimal("1.25")).quantize(Decimal("0.01"))
    assert h100["expectedWeeklyGpuHours"] is not None and h100["expectedWeekly"] is None
    assert "a3-highgpu-8g" in h100["flavors"][0]["unpriced"]
    lines = "\n".join(cost_section(doc, markdown_table))
    assert "| research-h100 | research/h100 | 16 | unpriced | unpriced |" in lines
    assert "0.00" not in lines.split("research-h100")[1].splitlines()[0]


def test_one_quota_change_changes_only_that_teams_row() -> None:
    base = _prod_cost()
    queues = copy.deepcopy(config_value("prod", "gpu-batch:kueueQueues")["clusterQueues"])
    research_l4 = next(q for q in queues if q["name"] == "research-l4")
    l4 = next(f for f in research_l4["resourceGroups"][0]["flavors"] if f["name"] == "l4")
    l4["resources"]["nvidia.com/gpu"]["nominalQuota"] = "8"
    head = _prod_cost(queues)
    lines = cost_changes(base, head, "main", markdown_table)
    rows = [line for line in lines if line.startswith("| ") and not line.startswith("| queue")]
    assert rows == ["| research-l4 | 12 -> 8 | 15.00 USD | 10.00 USD | -5.00 USD | 22.50 USD -> 17.50 USD |"]
    assert cost_changes(base, base, "main", markdown_table)[-2] == "No queue's GPU quota or price changed."


def test_quota_the_pools_can_never_serve_is_shown_in_money() -> None:
    queues = copy.deepcopy(config_value("prod", "gpu-batch:kueueQueues")["clusterQueues"])
    research_l4 = next(q for q in queues if q["name"] == "research-l4")
    l4 = next(f for f in research_l4["resourceGroups"][0]["flavors"] if f["name"] == "l4")
    # l4-queued holds at most 12 nodes x 2 L4s = 24 GPUs.
    l4["resources"]["nvidia.com/gpu"]["nominalQuota"] = "30"
    flavor = _queue(_prod_cost(queues), "research-l4")["flavors"][0]
    assert (flavor["servableGpus"], flavor["unservableGpus"], flavor["unservablePerHour"]) == (
        "24",
        "6",
        "7.50",
    )


@pytest.mark.parametrize("stack", stack_names(ROOT))
def test_every_repo_stack_has_a_cost_section_and_nothing_is_priced_without_a_source(stack: str) -> None:
    result = unedited_run(stack)
    doc = cost_document(stack, stack_model(result.resources), price_table(stack_files(stack).config))
    assert doc["queues"], "every repo stack has GPU quota to price"
    for queue in doc["queues"]:
        for flavor in queue["flavors"]:
            if flavor["gpuHour"] is None:
                assert flavor["unpriced"] and flavor["nominalPerHour"] is None and queue["complete"] is False
            else:
                assert all(p["price"]["source"].startswith("https://") for p in flavor["pools"])
    assert cost_section(doc, markdown_table)[0] == "### GPU cost per team"


def test_a_wrong_price_fails_with_its_key_path() -> None:
    bad = {**L4_PRICE, "nodeHour": 2.5}
    with pytest.raises(ConfigError) as error:
        price_table({"gpu-batch:gpuPrices": json.dumps([bad])})
    assert str(error.value) == ("config error: gpu-batch:gpuPrices[0].nodeHour: got 2.5, expected a string")
    with pytest.raises(ConfigError, match=r"gpuPrices\[0\]\.source: got 'http://x'"):
        price_table({"gpu-batch:gpuPrices": json.dumps([{**L4_PRICE, "source": "http://x"}])})


def test_the_shipped_table_parses_and_every_entry_cites_a_source() -> None:
    prices = price_table({}, TABLE)
    assert all(
        p.source.startswith("https://") and p.effective and p.node_hour > Decimal(0) for p in prices.values()
    )
    assert region_of("us-west1-b") == "us-west1" and region_of("us-central1") == "us-central1"


H100_PRICE = {**L4_PRICE, "machineType": "a3-highgpu-8g", "nodeHour": "80.00"}


def _budget_findings(
    research_budget: str | None, prices: list[dict[str, str]]
) -> tuple[list[Any], dict[str, Any]]:
    from preview.cost.budget import budget_findings
    from preview.findings.document import Locator

    teams = copy.deepcopy(config_value("prod", "gpu-batch:teams"))
    if research_budget is not None:
        teams[0]["weeklyGpuBudget"] = research_budget
    edits: dict[str, Any] = {"gpu-batch:gpuPrices": prices, "gpu-batch:teams": teams}
    result = run_stack("prod", edits)  # the program accepts the key
    files = stack_files("prod", edits)
    plan = json.loads(json.dumps(plan_document(files.project, "prod", result.resources, result.outputs)))
    cost = plan_cost(plan, price_table(files.config))
    return budget_findings(files.config, cost, Locator(ROOT, "gpu-batch", "prod", result.resources)), cost


def test_a_team_over_its_weekly_budget_is_an_advisory_finding_on_its_team_entry() -> None:
    found, cost = _budget_findings("1", [L4_PRICE, H100_PRICE])
    week = sum(Decimal(_queue(cost, q)["expectedWeekly"]) for q in ("research-l4", "research-h100"))
    [finding] = found
    assert finding.level == "advisory" and not finding.cannotCheck
    assert finding.keyPath == "gpu-batch:teams[0].weeklyGpuBudget"
    assert f"expected weekly GPU cost {week} USD" in finding.message
    lines = (ROOT / "Pulumi.prod.yaml").read_text().splitlines()
    assert (
        lines[finding.location["line"] - 1].strip() == "- name: research"
    )  # the key itself is not in the file
    # Within budget: nothing; no price for the H100 pool: cannot check, never a pass.
    assert _budget_findings(str(week + 1), [L4_PRICE, H100_PRICE])[0] == []
    [unchecked] = _budget_findings(str(week + 1), [L4_PRICE])[0]
    assert unchecked.cannotCheck and "research-h100" in unchecked.message
    assert _budget_findings(None, [L4_PRICE])[0] == []
