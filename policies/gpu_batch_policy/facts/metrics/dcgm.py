"""The DCGM series the GPU Operator's dcgm-exporter exports by default.

Which file: NVIDIA/gpu-operator v26.7.0 ``internal/state/dcgm_exporter.go``
(``dcgmExporterDefaultCollectors = "/etc/dcgm-exporter/dcp-metrics-included.csv"``, set as
``DCGM_EXPORTER_COLLECTORS``; ``assets/state-dcgm-exporter/0800_daemonset.yaml``) unless the
ClusterPolicy's ``dcgmExporter.config.name`` points at a custom ConfigMap
(``controllers/object_controls.go``: then ``DCGM_EXPORTER_COLLECTORS`` is that file, whose
content the pack cannot see, so nothing is judged).

What it holds: NVIDIA/dcgm-exporter ``etc/dcp-metrics-included.csv``.  The operator pins image
``4.6.0-4.8.3-distroless`` (deployments/gpu-operator/values.yaml ``dcgmExporter.version``); the
dcgm-exporter snapshot available here stops at tag ``4.5.3-4.8.2``, so the full list is that
tag's (:data:`SOURCE_TAG`) and the test compares against the operator's tag whenever the mirror
has it.  At the pinned tag itself only a part could be read (:func:`read_at_pinned_tag`): the
first rows of ``etc/default-counters.csv`` @ 4.6.0-4.8.3
(https://raw.githubusercontent.com/NVIDIA/dcgm-exporter/4.6.0-4.8.3/etc/default-counters.csv, up
to ``DCGM_FI_DEV_XID_ERRORS``), whose active rows at 4.5.3-4.8.2 are the same as
dcp-metrics-included.csv's (the test checks that on the mirror).  Those rows agree with this list,
name and type.  Not verified at the pinned tag: the rows after XID (memory, NVLink, remapped rows,
the DCP ``DCGM_FI_PROF_*``).  One change after 4.5.3-4.8.2 is known from the mirror's main branch:
commit 58a2532 (2026-05-11) retypes ``DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL`` from counter to gauge;
whether 4.6.0-4.8.3 (released 2026-07-15) carries it could not be read, so the tagged type stays.
The 4.6.0-4.8.3 release notes (github.com/NVIDIA/dcgm-exporter/releases/tag/4.6.0-4.8.3, "Metrics
and Kubernetes") rename the ``Hostname`` label to ``hostname`` (#655): label, not metric, names.
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

#: The last row read in ``etc/default-counters.csv`` @ 4.6.0-4.8.3 (the readable part of the file;
#: see the module docstring): the catalog's rows up to it are verified at the pinned tag.
READ_AT_PINNED_TAG_THROUGH: Final = "DCGM_FI_DEV_XID_ERRORS"

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


def read_at_pinned_tag() -> tuple[tuple[str, MetricType], ...]:
    """The catalog's rows that were read at the operator's pinned tag (its first rows)."""
    names = [name for name, _ in DCP_METRICS_INCLUDED]
    return DCP_METRICS_INCLUDED[: names.index(READ_AT_PINNED_TAG_THROUGH) + 1]


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
