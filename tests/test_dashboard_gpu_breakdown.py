"""Why the dashboard's GPU panels break down by GPU model and not by node pool
(components/observability/dashboard.py): no label of a scraped DCGM series carries the pool.

Checked against the sources that decide which labels a series has: NVIDIA/dcgm-exporter's
render templates (the GPU Operator's exporter; fetched mirror, skipped with the reason when
absent) and the GMP PodMonitoring/ClusterPodMonitoring CRDs' ``targetLabels.metadata`` keys
(../shared/schemas/gmp).  If either starts offering a pool label, these fail and the panels should
move to it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from gpu_batch_policy.facts.metrics.dcgm import SOURCE_TAG

from components.observability import queries as q
from components.observability.dashboard import gpu_panels
from tests.upstream import upstream_file

GMP = Path(__file__).resolve().parents[2] / "shared" / "schemas" / "gmp"
POOL_WORDS = re.compile(r"pool", re.IGNORECASE)


def _by_labels(promql: str) -> set[str]:
    found = re.search(r"by \(([^)]*)\)", promql)
    assert found, promql
    return {label.strip() for label in found.group(1).split(",")}


def _gpu_series_labels() -> set[str]:
    source = upstream_file(
        "NVIDIA/dcgm-exporter",
        SOURCE_TAG,
        "internal/pkg/rendermetrics/render_metrics.go",
        env="GPU_BATCH_DCGM_EXPORTER_GIT",
    )
    gpu_line = next(line for line in source.splitlines() if "modelName=" in line)
    return set(re.findall(r"(\w+)=\"", gpu_line.replace("{{ $metric.UUID }}", "UUID")))


def _gmp_target_labels() -> set[str]:
    """The labels GMP's managed collection writes on every scraped series: the protected target
    labels its ClusterPodMonitoring CRD forbids relabelling onto (``self != '<label>'`` rules)."""
    text = (GMP / "monitoring.googleapis.com_clusterpodmonitorings.yaml").read_text()
    rule = next(
        doc for doc in re.split(r"- messageExpression:", text) if "cannot relabel onto protected" in doc
    )
    return set(re.findall(r"self\s*!=\s*'(\w+)'", rule))


def test_the_gpu_panels_break_down_by_labels_dcgm_exporter_sets() -> None:
    """Each panel groups by labels the series really carry: the exporter's own, plus ``cluster``
    (issue 39: every query keeps it), which GMP writes as a target label."""
    labels = _gpu_series_labels()
    assert {"modelName", "Hostname", "gpu"} <= labels
    target = _gmp_target_labels()
    assert {"cluster", "namespace", "project_id"} <= target
    for promql in (q.gpu_utilization(), q.gpu_memory_used()):
        assert _by_labels(promql) <= labels | target
        assert "modelName" in _by_labels(promql)
    assert {legend for panel in gpu_panels() for legend, _ in panel.queries} == {"{{modelName}}"}


def test_no_dcgm_exporter_series_label_names_the_node_pool() -> None:
    source = upstream_file(
        "NVIDIA/dcgm-exporter",
        SOURCE_TAG,
        "internal/pkg/rendermetrics/render_metrics.go",
        env="GPU_BATCH_DCGM_EXPORTER_GIT",
    )
    assert not POOL_WORDS.search(source)


def _metadata_enums(node: Any) -> Iterator[list[str]]:
    if isinstance(node, dict):
        metadata = node.get("properties", {}).get("metadata") if "properties" in node else None
        if isinstance(metadata, dict) and "enum" in metadata.get("items", {}):
            yield metadata["items"]["enum"]
        for value in node.values():
            yield from _metadata_enums(value)
    elif isinstance(node, list):
        for value in node:
            yield from _metadata_enums(value)


def test_gmp_target_labels_offer_no_node_pool() -> None:
    for crd in ("podmonitorings", "clusterpodmonitorings"):
        enums = list(
            _metadata_enums(yaml.safe_load((GMP / f"monitoring.googleapis.com_{crd}.yaml").read_text()))
        )
        assert enums, crd
        keys = {key for enum in enums for key in enum}
        assert "node" in keys and not any(POOL_WORDS.search(k) for k in keys), keys
