"""The capacity report's "Monitoring" section (issue 30).

Two questions a reviewer asks before deploy: where does each team look (its ClusterQueues' rows of
the stack's dashboard, and the alerts labelled with its queues), and will those panels have data
-- which Kueue metrics need which setting, and whether this stack's Kueue has it.  The settings
come from the pack's own reading of the stack's Kueue configuration
(``gpu_batch_policy.facts.metrics.kueue_settings``), the same the ``promql-metric-exported`` rule judges by.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from gpu_batch_policy.facts.metrics.kueue import KUEUE_METRICS, SETTING_KEYS
from gpu_batch_policy.facts.metrics.kueue_settings import kueue_metric_settings
from gpu_batch_policy.facts.model import StackModel

from components.observability.dashboard import DASHBOARD_OUTPUT, page_name
from preview.records import RecordedResource

DASHBOARD = "gcp:monitoring/dashboard:Dashboard"
ALERT = "gcp:monitoring/alertPolicy:AlertPolicy"
POD_MONITORING = "kubernetes:monitoring.googleapis.com/v1:PodMonitoring"
_CQ_MATCHER = re.compile(r'cluster_queue="([^"]+)"')
_PAGE = re.compile(r" \((\d+)/\d+\)$")

Table = Callable[[Sequence[str], Iterable[Sequence[object]]], list[str]]


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _output(title: str) -> str:
    """The stack output with a dashboard's address: page ``i`` of ``(i/n)`` is ``dashboardUrl-i``
    (stacks/compose/monitoring.py)."""
    page = _PAGE.search(title)
    return page_name(DASHBOARD_OUTPUT, int(page.group(1)) if page else 1)


def _dashboards(resources: Sequence[RecordedResource]) -> list[tuple[str, set[str]]]:
    """(title, ClusterQueues it has panels for) per dashboard the stack declares."""
    found = []
    for r in resources:
        if r.type != DASHBOARD or not isinstance(r.inputs.get("dashboardJson"), str):
            continue
        try:
            doc = json.loads(r.inputs["dashboardJson"])
        except ValueError:
            continue
        title = str(doc.get("displayName", r.name)) if isinstance(doc, dict) else r.name
        found.append((title, {cq for text in _strings(doc) for cq in _CQ_MATCHER.findall(text)}))
    return found


def _alerts_by_queue(resources: Sequence[RecordedResource]) -> dict[str, list[str]]:
    """Alert conditions by the ``queue`` label they put on incidents (per condition:
    ``conditionPrometheusQueryLanguage.labels``; a policy's own ``userLabels`` for a policy
    written that way)."""
    out: dict[str, list[str]] = {}
    for r in resources:
        if r.type != ALERT:
            continue
        conditions = r.inputs.get("conditions")
        for condition in conditions if isinstance(conditions, list) else []:
            promql = (
                condition.get("conditionPrometheusQueryLanguage") if isinstance(condition, dict) else None
            )
            labels = promql.get("labels") if isinstance(promql, dict) else None
            if isinstance(labels, dict) and isinstance(labels.get("queue"), str):
                out.setdefault(labels["queue"], []).append(str(condition.get("displayName", r.name)))
        labels = r.inputs.get("userLabels")
        if isinstance(labels, dict) and isinstance(labels.get("queue"), str):
            out.setdefault(labels["queue"], []).append(str(r.inputs.get("displayName", r.name)))
    return out


def _team_rows(model: StackModel, resources: Sequence[RecordedResource]) -> list[list[object]]:
    dashboards = _dashboards(resources)
    alerts = _alerts_by_queue(resources)
    rows: list[list[object]] = []
    for lq in sorted(model.local_queues(), key=lambda q: (q.namespace, q.name)):
        cq = lq.cluster_queue
        if not isinstance(cq, str):
            continue
        boards = [title for title, queues in dashboards if cq in queues]
        rows.append(
            [
                f"`{lq.namespace}`",
                f"`{lq.name}` → `{cq}`",
                ", ".join(f"{b} (rows `{cq}: …`; link: stack output `{_output(b)}`)" for b in boards)
                or "none",
                ", ".join(sorted(alerts.get(re.sub(r"[^a-z0-9_-]", "_", cq.lower()), []))) or "none",
            ]
        )
    return rows


def _setting_rows(model: StackModel) -> list[list[object]]:
    settings = kueue_metric_settings(model, {})

    def state(setting: str) -> str:
        if settings.unknown is not None:
            return "unknown until apply"
        return "yes" if setting in settings.on else "**no**"

    rows: list[list[object]] = []
    for setting, key in SETTING_KEYS.items():
        names = sorted(m.name for m in KUEUE_METRICS if setting in m.needs)
        rows.append([key, state(setting) + settings.assumption, ", ".join(f"`{n}`" for n in names)])
    return rows


def monitoring_section(model: StackModel, resources: Sequence[RecordedResource], table: Table) -> list[str]:
    monitors = [r for r in resources if r.type == POD_MONITORING]
    if not monitors and not any(r.type in (DASHBOARD, ALERT) for r in resources):
        return []
    out = ["### Monitoring", ""]
    if monitors:
        scraped = sorted(
            f"`{r.inputs['metadata'].get('namespace', '?')}/{r.inputs['metadata'].get('name', '?')}`"
            for r in monitors
            if isinstance(r.inputs.get("metadata"), dict)
        )
        out += [f"Scraped by GKE's managed Prometheus (PodMonitoring): {', '.join(scraped)}.", ""]
    rows = _team_rows(model, resources)
    if rows:
        out += table(["namespace", "LocalQueue → ClusterQueue", "dashboard", "alerts"], rows)
        out.append("")
    if model.kueue_releases():
        out += ["Kueue metrics that exist only under a setting, and whether this stack's Kueue has it:", ""]
        out += table(["setting", "on in this stack", "metrics"], _setting_rows(model))
        out.append("")
    return out
