"""The DCGM series the GPU Operator's dcgm-exporter exports by default.

Which file: NVIDIA/gpu-operator v26.7.0 ``internal/state/dcgm_exporter.go``
(``dcgmExporterDefaultCollectors = "/etc/dcgm-exporter/dcp-metrics-included.csv"``, set as
``DCGM_EXPORTER_COLLECTORS``; ``assets/state-dcgm-exporter/0800_daemonset.yaml``) unless the
ClusterPolicy's ``dcgmExporter.config.name`` points at a custom ConfigMap
(``controllers/object_controls.go``: then ``DCGM_EXPORTER_COLLECTORS`` is that file, whose
content the pack cannot see, so nothing is judged).

What it holds: NVIDIA/dcgm-exporter ``etc/dcp-metrics-included.csv``.  The operator pins image
``4.6.0-4.8.3-distroless`` (deployments/gpu-operator/values.yaml ``dcgmExporter.version``); the
dcgm-exporter snapshot available here stops at tag ``4.5.3-4.8.2``, so the list is that tag's
(:data:`SOURCE_TAG`) and the test compares against the operator's tag whenever the mirror has it.
Rows of type ``label`` (``DCGM_FI_DRIVER_VERSION``) become a label on the other series, not a
series of their own (dcgm-exporter ``internal/pkg/counters``), so they are not metrics here.

GKE's managed DCGM: GKE documents its metric list only as a web page this project cannot cite
at a pinned revision, so series under managed DCGM are not judged.
"""

from __future__ import annotations

from typing import Final

from .kueue import MetricType

SOURCE_TAG: Final = "4.5.3-4.8.2"
OPERATOR_PINNED_TAG: Final = "4.6.0-4.8.3"
PREFIX: Final = "DCGM_"

DCP_METRICS_INCLUDED: Final[tuple[tuple[str, MetricType], ...]] = (
    ("DCGM_FI_DEV_SM_CLOCK", "gauge"),
    ("DCGM_FI_DEV_MEM_CLOCK", "gauge"),
    ("DCGM_FI_DEV_MEMORY_TEMP", "gauge"),
    ("DCGM_FI_DEV_GPU_TEMP", "gauge"),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge"),
    ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter"),
    ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter"),
    ("DCGM_FI_DEV_GPU_UTIL", "gauge"),
    ("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge"),
    ("DCGM_FI_DEV_ENC_UTIL", "gauge"),
    ("DCGM_FI_DEV_DEC_UTIL", "gauge"),
    ("DCGM_FI_DEV_XID_ERRORS", "gauge"),
    ("DCGM_FI_DEV_FB_FREE", "gauge"),
    ("DCGM_FI_DEV_FB_USED", "gauge"),
    ("DCGM_FI_DEV_FB_RESERVED", "gauge"),
    ("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter"),
    ("DCGM_FI_DEV_VGPU_LICENSE_STATUS", "gauge"),
    ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter"),
    ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter"),
    ("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge"),
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge"),
    ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge"),
    ("DCGM_FI_PROF_DRAM_ACTIVE", "gauge"),
    ("DCGM_FI_PROF_PCIE_TX_BYTES", "gauge"),
    ("DCGM_FI_PROF_PCIE_RX_BYTES", "gauge"),
)
_NAMES: Final = frozenset(name for name, _ in DCP_METRICS_INCLUDED)


def dcgm_problem(series: str) -> str | None:
    """Why the operator's default dcgm-exporter never exports ``series`` (None: it does, or it
    is not a DCGM series).  Call only when that exporter, with its default counters, is the
    stack's DCGM source."""
    if not series.startswith(PREFIX) or series in _NAMES:
        return None
    return (
        f"the GPU Operator v26.7.0's dcgm-exporter exports no {series} with its default counters "
        f"(NVIDIA/dcgm-exporter etc/dcp-metrics-included.csv @ {SOURCE_TAG})"
    )
