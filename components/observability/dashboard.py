"""One Cloud Monitoring dashboard per stack: a row per ClusterQueue, then the GPUs.

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
                        "legendTemplate": legend,
                        "targetAxis": "Y1",
                        "timeSeriesQuery": {"prometheusQuery": promql},
                    }
                    for legend, promql in panel.queries
                ],
                "yAxis": {"scale": "LINEAR"},
            },
        },
    }


def dashboard_document(
    title: str, queues: Sequence[QueueView], kai_queues: Sequence[str] = ()
) -> dict[str, Any]:
    panels = [p for queue in sorted(queues, key=lambda v: v.name) for p in queue_panels(queue)]
    panels += [p for queue in sorted(kai_queues) for p in kai_queue_panels(queue)]
    panels += gpu_panels()
    return {
        "displayName": title,
        "mosaicLayout": {"columns": COLUMNS, "tiles": [_tile(i, p) for i, p in enumerate(panels)]},
        "labels": {"gpu-batch": ""},
    }


def dashboard_json(title: str, queues: Sequence[QueueView], kai_queues: Sequence[str] = ()) -> str:
    """The dashboard as the ``dashboard_json`` input: deterministic bytes."""
    return json.dumps(dashboard_document(title, queues, kai_queues), sort_keys=True, separators=(",", ":"))


def stack_dashboard(
    name: str,
    project: str,
    title: str,
    queues: Sequence[QueueView],
    kai_queues: Sequence[str] = (),
    *,
    opts: pulumi.ResourceOptions | None = None,
) -> gcp.monitoring.Dashboard:
    return gcp.monitoring.Dashboard(
        name, project=project, dashboard_json=dashboard_json(title, queues, kai_queues), opts=opts
    )
