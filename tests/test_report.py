"""The capacity report reviewers read: numbers that follow from the stack, not templates."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from preview.analyzer import AnalysisResult, Diagnostic
from preview.report import render_report
from tests.stack_runner import config_value, run_stack, unedited_run


def _row(report: str, *cells: str) -> str:
    """The table row whose first cells are ``cells``."""
    prefix = "| " + " | ".join(cells) + " |"
    rows = [line for line in report.splitlines() if line.startswith(prefix)]
    assert len(rows) == 1, f"no single row starting {prefix!r} in:\n{report}"
    return rows[0]


def test_prod_queue_rows_show_nominal_borrowable_and_largest_gang() -> None:
    report = render_report("prod", unedited_run("prod").resources, None)
    # research-l4 owns 12 L4s, may borrow 6; 18 fit in the 24-GPU l4-queued pool.
    assert _row(report, "research-l4", "ml", "l4").startswith(
        "| research-l4 | ml | l4 | 12 | 6 | 18 | l4-queued (24 GPUs) |"
    )
    assert _row(report, "l4-queued") == (
        "| l4-queued | g2-standard-24 | 2 | 12 | 24 | queued provisioning | "
        "GKE: driver LATEST + GKE device plugin (no KAI fractions) |"
    )
    assert "co_ml --> cq_research_l4" in report
    assert "cq_research_l4 --> lq_research_default" in report
    assert "cq_research_h100 --> lq_research_h100" in report


def test_largest_gang_is_bounded_by_one_queued_pool() -> None:
    """dev's seed queue has a 10000-GPU 'infinite' quota; one DWS request can only get 10."""
    report = render_report("dev", unedited_run("dev").resources, None)
    assert _row(report, "cluster-queue").startswith("| cluster-queue | - | l4-dws | 10000 | 0 | 10 |")


def test_largest_gang_follows_the_pool_size() -> None:
    pools: list[dict[str, Any]] = copy.deepcopy(config_value("dev", "gpu-batch:gpuPools"))
    pools[0]["maxNodes"] = 3
    report = render_report("dev", run_stack("dev", {"gpu-batch:gpuPools": pools}).resources, None)
    assert _row(report, "cluster-queue").startswith("| cluster-queue | - | l4-dws | 10000 | 0 | 3 |")


def test_kai_queues_and_hierarchy() -> None:
    report = render_report("kai", unedited_run("kai").resources, None)
    assert _row(report, "team-a") == "| team-a | department-1 | 2 | 4 | 1 |"
    assert "kai_department_1 --> kai_team_a" in report


@pytest.mark.parametrize("mandatory", [True, False])
def test_policy_results_are_listed(mandatory: bool) -> None:
    finding = Diagnostic(
        policy_name="kueue-gang-fits-queue",
        policy_pack="gpu-batch",
        level="mandatory" if mandatory else "advisory",
        message="RayJob 'x' needs 16 GPUs; the queue can get 12. Fix: raise nominalQuota",
        description="",
        urn="urn:x",
        resource_type="kubernetes:ray.io/v1:RayJob",
        resource_name="x",
    )
    analysis = AnalysisResult(pack_name="gpu-batch", policies=(), config={}, diagnostics=(finding,))
    report = render_report("prod", unedited_run("prod").resources, analysis)
    assert ("**failed**" in report) is mandatory
    level = "mandatory" if mandatory else "advisory"
    assert (
        f"| {level} | kueue-gang-fits-queue | kubernetes:ray.io/v1:RayJob 'x' | RayJob 'x' needs 16 GPUs"
        in report
    )
