"""The Cloud Monitoring dashboard of a stack (more pages when its queues need them): a row per
ClusterQueue, then the GPUs.

Per KAI queue: GPUs allocated, deserved (quota) and the scheduler's fair share (``kai_``
metrics).  Per ClusterQueue: pending workloads (active / inadmissible), admission wait p50/p95, GPU quota in
use against the nominal quota per flavor, evictions and preemptions by reason, and -- for a
queue with a ProvisioningRequest (DWS) admission check -- the provisioning-check wait.  Then GPU
utilisation and framebuffer memory from DCGM, per GPU model -- not per node pool, because no
series carries the pool: dcgm-exporter labels a GPU series ``gpu``, ``UUID``, ``pci_bus_id``,
``device``, ``modelName``, ``Hostname`` (+ pod labels when enabled), never node labels
(NVIDIA/dcgm-exporter 4.5.3-4.8.2 ``internal/pkg/rendermetrics/render_metrics.go``); GMP adds
only ``targetLabels.metadata`` keys ``container``/``namespace``/``node``/``pod``/
``top_level_controller_*`` and labels copied from the *scraped* pod (``fromPod``: the exporter's
pod, not its node; prometheus-engine CRDs in ../shared/schemas/gmp).  The pool label
``cloud.google.com/gke-nodepool`` would need a join on kube-state-metrics' ``kube_node_labels``,
which this stack does not scrape (components/gke.py ``monitoring_config``: SYSTEM_COMPONENTS and
DCGM only).  A GKE pool has one accelerator type, so each model line is the sum of the pools of
that model: the nearest breakdown the series allow.  The JSON is a Cloud Monitoring
``mosaicLayout`` (dashboards API v1: ``tiles[].widget.xyChart.dataSets[].timeSeriesQuery
.prometheusQuery``), written with sorted keys and no whitespace variation, so the same stack
always yields the same bytes.

Many queues: a dashboard holds at most :data:`MAX_TILES` tiles, so a stack with more panels gets
several dashboards ("pages"), each a run of whole queues in name order (a queue's rows never
straddle two pages), the GPU panels on the last.  A stack that fits one page gets exactly the one
dashboard it always had.  Cloud Monitoring limits the widgets of one dashboard (its quotas page,
"Dashboards"); :data:`MAX_TILES` is a conservative budget under that limit (see
docs/monitoring.md: the exact row could not be read where this was written).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import pulumi
import pulumi_gcp as gcp

from components.observability import queries as q

COLUMNS: Final = 48
MAX_TILES: Final = 40
# The stack output holding the first page's console address; page i's is ``dashboardUrl-i``.
DASHBOARD_OUTPUT: Final = "dashboardUrl"
TILE_WIDTH: Final = 16
TILE_HEIGHT: Final = 16


@dataclass(frozen=True)
class QueueView:
    """What the dashboard shows of one ClusterQueue."""

    name: str
    teams: tuple[str, ...]
    provisioning_check: bool


@dataclass(frozen=True)
class Panel:
    title: str
    queries: tuple[tuple[str, str], ...]  # (legend, PromQL)


def queue_panels(queue: QueueView) -> list[Panel]:
    cq = queue.name
    panels = [
        Panel(f"{cq}: pending workloads", (("{{status}}", q.pending(cq)),)),
        Panel(
            f"{cq}: admission wait (s)",
            (("p50", q.admission_wait(cq, 0.5)), ("p95", q.admission_wait(cq, 0.95))),
        ),
        Panel(
            f"{cq}: GPU quota in use",
            (("{{flavor}} used", q.gpu_quota_usage(cq)), ("{{flavor}} nominal", q.gpu_nominal_quota(cq))),
        ),
        Panel(f"{cq}: evictions by reason (1h)", (("{{reason}}", q.evictions(cq)),)),
        Panel(f"{cq}: preemptions by reason (1h)", (("{{reason}}", q.preemptions(cq)),)),
    ]
    if queue.provisioning_check:
        panels.append(
            Panel(
                f"{cq}: provisioning-check wait (s)",
                (("p50", q.provisioning_wait(cq, 0.5)), ("p95", q.provisioning_wait(cq, 0.95))),
            )
        )
    return panels


def kai_queue_panels(queue: str) -> list[Panel]:
    return [
        Panel(
            f"KAI {queue}: GPUs allocated / deserved / fair share",
            (
                ("allocated", q.kai_allocated_gpus(queue)),
                ("deserved", q.kai_deserved_gpus(queue)),
                ("fair share", q.kai_fair_share_gpus(queue)),
            ),
        )
    ]


def gpu_panels() -> list[Panel]:
    return [
        Panel("GPU utilisation (%)", (("{{modelName}}", q.gpu_utilization()),)),
        Panel("GPU memory used (MiB)", (("{{modelName}}", q.gpu_memory_used()),)),
    ]


def _tile(index: int, panel: Panel) -> dict[str, Any]:
    per_row = COLUMNS // TILE_WIDTH
    return {
        "xPos": (index % per_row) * TILE_WIDTH,
        "yPos": (index // per_row) * TILE_HEIGHT,
        "width": TILE_WIDTH,
        "height": TILE_HEIGHT,
        "widget": {
            "title": panel.title,
            "xyChart": {
                "dataSets": [
                    {
                        "plotType": "LINE",
                        # Every query keeps GMP's ``cluster`` label (queries.py): name the series by it.
                        "legendTemplate": f"{{{{{q.CLUSTER}}}}} {legend}",
                        "targetAxis": "Y1",
                        "timeSeriesQuery": {"prometheusQuery": promql},
                    }
                    for legend, promql in panel.queries
                ],
                "yAxis": {"scale": "LINEAR"},
            },
        },
    }


def _panel_groups(queues: Sequence[QueueView], kai_queues: Sequence[str]) -> list[list[Panel]]:
    """The panels in page order, each group the rows of one queue (or the GPUs)."""
    groups = [queue_panels(queue) for queue in sorted(queues, key=lambda v: v.name)]
    groups += [kai_queue_panels(queue) for queue in sorted(kai_queues)]
    return [*groups, gpu_panels()]


def _pages(groups: list[list[Panel]], max_tiles: int) -> list[list[Panel]]:
    pages: list[list[Panel]] = [[]]
    for group in groups:
        if len(group) > max_tiles:
            raise ValueError(f"one queue needs {len(group)} panels, more than a dashboard's {max_tiles}")
        if len(pages[-1]) + len(group) > max_tiles:
            pages.append([])
        pages[-1].extend(group)
    return pages


def _document(title: str, panels: list[Panel]) -> dict[str, Any]:
    return {
        "displayName": title,
        "mosaicLayout": {"columns": COLUMNS, "tiles": [_tile(i, p) for i, p in enumerate(panels)]},
        "labels": {"gpu-batch": ""},
    }


def dashboard_documents(
    title: str, queues: Sequence[QueueView], kai_queues: Sequence[str] = (), *, max_tiles: int = MAX_TILES
) -> list[dict[str, Any]]:
    """The stack's dashboards: one, or pages of at most ``max_tiles`` tiles titled ``(i/n)``."""
    pages = _pages(_panel_groups(queues, kai_queues), max_tiles)
    if len(pages) == 1:
        return [_document(title, pages[0])]
    return [_document(f"{title} ({i}/{len(pages)})", page) for i, page in enumerate(pages, 1)]


def _json(document: dict[str, Any]) -> str:
    """A dashboard as the ``dashboard_json`` input: deterministic bytes."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"))


def page_name(name: str, page: int) -> str:
    """Resource (and stack output) name of page ``page`` (1-based): the first keeps ``name``."""
    return name if page == 1 else f"{name}-{page}"


def stack_dashboards(
    name: str,
    project: str,
    title: str,
    queues: Sequence[QueueView],
    kai_queues: Sequence[str] = (),
    *,
    opts: pulumi.ResourceOptions | None = None,
) -> list[gcp.monitoring.Dashboard]:
    return [
        gcp.monitoring.Dashboard(page_name(name, i), project=project, dashboard_json=_json(doc), opts=opts)
        for i, doc in enumerate(dashboard_documents(title, queues, kai_queues), 1)
    ]
