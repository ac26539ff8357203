"""The report's Monitoring section: each team's dashboard rows and alerts, and which Kueue metrics
need which setting -- judged from the stack's own Kueue configuration, as the pack judges it."""

from __future__ import annotations

import dataclasses
import json

import yaml

from components.observability.dashboard import QueueView, dashboard_documents
from preview.records import RecordedResource
from preview.report import capacity_sections
from preview.report.monitoring import DASHBOARD, _dashboards, _output
from tests.stack_runner import unedited_run

RELEASE = "kubernetes:helm.sh/v3:Release"


def _section(lines: list[str]) -> str:
    text = "\n".join(lines)
    start = text.index("### Monitoring")
    return text[start : text.index("\n### ", start + 1)]


def test_dev_team_row_links_its_dashboard_rows_and_alerts() -> None:
    section = _section(capacity_sections("dev", unedited_run("dev").resources))
    assert "`kueue-system/kueue`" in section and "`kuberay-system/kuberay-operator`" in section
    row = next(line for line in section.splitlines() if line.startswith("| `default` |"))
    assert "`user-queue` → `cluster-queue`" in row
    assert "rows `cluster-queue: …`" in row and "stack output `dashboardUrl`" in row
    assert "provisioning-check wait p95 above 7200s" in row
    assert "| metrics.enableClusterQueueResources: true | yes |" in section


def test_a_kueue_without_cluster_queue_resources_is_shown_as_missing_it() -> None:
    resources = list(unedited_run("dev").resources)
    for i, r in enumerate(resources):
        if r.type == RELEASE and r.inputs["name"] == "kueue":
            values = r.inputs["values"]
            doc = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
            doc["metrics"].pop("enableClusterQueueResources")
            edited = {**values, "managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(doc)}}
            resources[i] = dataclasses.replace(r, inputs={**r.inputs, "values": edited})
    section = _section(capacity_sections("dev", resources))
    assert "| metrics.enableClusterQueueResources: true | **no** |" in section
    assert "`kueue_cluster_queue_resource_usage`" in section


def test_a_queue_on_a_later_dashboard_page_links_that_pages_output() -> None:
    """A stack with more queues than one dashboard holds: the report names the page's own stack
    output (``dashboardUrl-2`` for page 2), the one stacks/compose/monitoring.py exports."""
    views = [QueueView(f"q{i}", ("t",), provisioning_check=True) for i in range(7)]
    resources = [
        RecordedResource(f"urn:{i}", DASHBOARD, f"d{i}", "", "", True, {"dashboardJson": json.dumps(doc)}, {})
        for i, doc in enumerate(dashboard_documents("gpu-batch big", views))
    ]
    boards = {title: queues for title, queues in _dashboards(resources)}
    assert boards["gpu-batch big (2/2)"] == {"q6"}
    assert [_output(t) for t in boards] == ["dashboardUrl", "dashboardUrl-2"]
    assert _output("gpu-batch small") == "dashboardUrl"
