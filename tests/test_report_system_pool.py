"""The capacity report's "System pool" section shows the pack's own always-on sums."""

from __future__ import annotations

from gpu_batch_policy.facts.model import StackModel

from preview.report import system_pool_section
from tests.policies.pack_objects import cpu_pool, gke_cluster
from tests.policies.rendered_stack import rendered_stack, system_pool_edit


def test_skypilot_system_pool_requested_vs_allocatable() -> None:
    before_issue_10 = system_pool_edit("skypilot", machineType="e2-standard-4", minNodes=1, maxNodes=3)
    text = "\n".join(system_pool_section(rendered_stack("skypilot", before_issue_10)))
    assert "### System pool" in text
    row = next(line for line in text.splitlines() if line.startswith("| system (e2-standard-4)"))
    assert "| 3 |" in row
    assert "cpu 3.92, memory 13.3Gi" in row  # per node
    assert "cpu 8.5, memory 16.5Gi" in row  # Kueue + two API servers (no ingress-nginx: issue 27)
    assert "cpu 11.76, memory 39.91Gi" in row
    assert row.endswith("| fits |")


def test_a_system_pool_too_small_is_marked() -> None:
    model = rendered_stack(
        "skypilot", system_pool_edit("skypilot", machineType="e2-standard-8", minNodes=1, maxNodes=1)
    )
    row = next(line for line in system_pool_section(model) if line.startswith("| system"))
    assert "**does not fit**" in row


def test_a_cpu_pool_without_workloads_is_listed_with_nothing_requested() -> None:
    resources = [gke_cluster(), cpu_pool()]
    model = StackModel.from_plain([(r.type, r.props, r.urn, r.name) for r in resources])
    row = next(line for line in system_pool_section(model) if line.startswith("| system"))
    assert "cpu 0, memory 0Gi" in row and "cpu 3.92" in row
