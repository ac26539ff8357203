"""teams[].weeklyGpuBudget: advisory by default; a stack's policy config file raises it (prod)."""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from typing import Any

import pytest

from preview.analyzer import AnalyzerError, load_policy_config_file
from preview.cost.budget import POLICY, blocks, budget_findings
from preview.cost.estimate import plan_cost
from preview.cost.prices import price_table
from preview.findings.document import Locator
from preview.findings.levels import PREVIEW_POLICIES, pack_part, preview_level
from preview.findings.sarif import sarif_level
from preview.plan import plan_document
from tests.stack_runner import ROOT, config_value, run_stack, stack_files

POLICIES = ROOT / "policies"

# Test prices (not shipped data) for prod's two queued pools, so its budget can be checked.
PRICES = [
    {
        "machineType": machine,
        "region": "us-central1",
        "provisioning": "flex-start",
        "nodeHour": hour,
        "currency": "USD",
        "effective": "2026-01-01",
        "source": "https://example.com/test-price-sheet",
    }
    for machine, hour in (("g2-standard-24", "2.50"), ("a3-highgpu-8g", "80.00"))
]


def test_the_budget_is_advisory_unless_the_stacks_file_says_otherwise() -> None:
    assert POLICY in PREVIEW_POLICIES
    assert preview_level(None, POLICY) == "advisory"
    assert preview_level(load_policy_config_file(POLICIES / "config.dev.json"), POLICY) == "advisory"
    assert preview_level(load_policy_config_file(POLICIES / "config.prod.json"), POLICY) == "mandatory"
    assert preview_level({"all": "mandatory"}, POLICY) == "mandatory"
    assert preview_level({"all": "mandatory", POLICY: "advisory"}, POLICY) == "advisory"
    assert preview_level({POLICY: {"enforcementLevel": "disabled"}}, POLICY) == "disabled"
    assert preview_level({"all": "remediate"}, POLICY) == "advisory"


def test_a_wrong_level_is_one_line_naming_the_entry_and_value() -> None:
    with pytest.raises(AnalyzerError) as error:
        preview_level({POLICY: "remediate"}, POLICY)
    assert str(error.value) == (
        f"policy config '{POLICY}': got 'remediate' for {POLICY}, expected one of advisory, mandatory, disabled"
    )
    with pytest.raises(AnalyzerError, match="takes no properties, got \\['limit'\\]"):
        preview_level({POLICY: {"enforcementLevel": "mandatory", "limit": 3}}, POLICY)


def test_the_pack_is_given_the_file_without_the_previews_entries() -> None:
    prod = load_policy_config_file(POLICIES / "config.prod.json")
    given = pack_part(prod)
    assert given is not None and POLICY not in given
    assert {k: v for k, v in prod.items() if k != POLICY} == given
    assert pack_part(None) is None


def _findings(level: str, budget: str) -> list[Any]:
    teams = copy.deepcopy(config_value("prod", "gpu-batch:teams"))
    teams[0]["weeklyGpuBudget"] = budget
    edits: dict[str, Any] = {"gpu-batch:gpuPrices": PRICES, "gpu-batch:teams": teams}
    result = run_stack("prod", edits)
    files = stack_files("prod", edits)
    plan = json.loads(json.dumps(plan_document(files.project, "prod", result.resources, result.outputs)))
    cost = plan_cost(plan, price_table(files.config))
    return budget_findings(files.config, cost, Locator(ROOT, "gpu-batch", "prod", result.resources), level)


def test_prods_level_makes_a_breach_mandatory_and_fails_the_preview() -> None:
    [advisory] = _findings("advisory", "1")
    assert (
        advisory.level == "advisory"
        and sarif_level(advisory.__dict__) == "warning"
        and not blocks([advisory])
    )
    [mandatory] = _findings("mandatory", "1")
    assert (
        mandatory.level == "mandatory" and sarif_level(mandatory.__dict__) == "error" and blocks([mandatory])
    )
    assert mandatory.fingerprint == advisory.fingerprint  # same rule, key and resource
    # Within budget: nothing at any level; disabled checks nothing.
    assert _findings("mandatory", "100000000") == []
    assert _findings("disabled", "1") == []


def test_a_budget_that_cannot_be_checked_stays_an_advisory_note_under_prods_level() -> None:
    teams = copy.deepcopy(config_value("prod", "gpu-batch:teams"))
    teams[0]["weeklyGpuBudget"] = "1"
    edits: dict[str, Any] = {"gpu-batch:teams": teams}  # prod's queued pools have no cited price
    result = run_stack("prod", edits)
    files = stack_files("prod", edits)
    plan = json.loads(json.dumps(plan_document(files.project, "prod", result.resources, result.outputs)))
    cost = plan_cost(plan, price_table(files.config))
    locator = Locator(ROOT, "gpu-batch", "prod", result.resources)
    [note] = budget_findings(files.config, cost, locator, "mandatory")
    assert note.cannotCheck and note.level == "advisory" and not blocks([note])
    assert sarif_level(note.__dict__) == "note"


def test_a_kai_teams_budget_is_checked_against_its_kai_queues_week_at_the_shipped_price() -> None:
    def findings(budget: str) -> tuple[list[Any], dict[str, Any]]:
        teams = copy.deepcopy(config_value("kai", "gpu-batch:teams"))
        teams[0]["weeklyGpuBudget"] = budget
        edits: dict[str, Any] = {"gpu-batch:teams": teams}
        result = run_stack("kai", edits)
        files = stack_files("kai", edits)
        plan = json.loads(json.dumps(plan_document(files.project, "kai", result.resources, result.outputs)))
        cost = plan_cost(plan, price_table(files.config))
        locator = Locator(ROOT, "gpu-batch", "kai", result.resources)
        return budget_findings(files.config, cost, locator), cost

    found, cost = findings("1")
    week = next(q for q in cost["queues"] if q["scheduler"] == "kai" and q["queue"] == "team-a")[
        "expectedWeekly"
    ]
    [finding] = found
    assert not finding.cannotCheck and f"expected weekly GPU cost {week} USD (team-a:" in finding.message
    assert findings(str(Decimal(week) + 1))[0] == []


def test_end_to_end_a_mandatory_budget_breach_fails_the_preview_and_is_a_sarif_error(tmp_path: Any) -> None:
    from preview.cli import main
    from tests.test_findings_sarif import _project

    text = (ROOT / "Pulumi.dev.yaml").read_text()
    anchor = "      clusterQueue: cluster-queue\n"
    assert text.count(anchor) == 1
    price = (
        "  gpu-batch:gpuPrices: [{machineType: g2-standard-4, region: us-west1, provisioning: flex-start, "
        'nodeHour: "0.50", effective: "2026-01-01", source: "https://example.com/test-price-sheet"}]\n'
    )
    text = text.replace(anchor, anchor + '      weeklyGpuBudget: "1"\n').replace(
        "config:\n", "config:\n" + price, 1
    )
    project = _project(tmp_path, text)
    results = {}
    for level in ("advisory", "mandatory"):
        policy_config = tmp_path / f"config.{level}.json"
        dev = json.loads((POLICIES / "config.dev.json").read_text())
        policy_config.write_text(json.dumps({**dev, POLICY: level}))
        out = tmp_path / level
        argv = ["--stack", "dev", "--project-dir", str(project), "--out", str(out), "--quiet"]
        code = main([*argv, "--policy-config", str(policy_config)])
        findings = json.loads((out / "dev" / "findings.json").read_text())["findings"]
        sarif = json.loads((out / "dev" / "findings.sarif").read_text())
        [budget] = [f for f in findings if f["policy"] == POLICY]
        [result] = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == POLICY]
        results[level] = (code, budget["level"], result["level"])
    assert results == {"advisory": (0, "advisory", "warning"), "mandatory": (1, "mandatory", "error")}
