"""Objects a chart renders differently at another cluster minor: its ``Capabilities`` gates.

Why: Helm fills ``.Capabilities.APIVersions`` and ``.Capabilities.KubeVersion`` from the cluster
at install and upgrade (helm/helm v3.20.2 ``pkg/action/action.go`` ``getCapabilities``), so a GKE
minor upgrade that starts serving an API changes what the *next* ``helm upgrade`` renders: the
Kueue 0.19.2 chart renders its MutatingAdmissionPolicy and binding only when
``admissionregistration.k8s.io/v1/MutatingAdmissionPolicy`` is served
(``charts/kueue/templates/map/manifests.yaml``).  The offline Helm engine renders with Helm's
default capabilities only (``gpu_batch_policy.facts.charts.render``), so the gates are read from the
templates themselves and judged with :data:`SERVED_FROM`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

API_GATE: Final = re.compile(r'\.Capabilities\.APIVersions\.Has\s+"([^"]+)"')
KUBE_VERSION: Final = re.compile(r"\.Capabilities\.KubeVersion")
# The first Kubernetes minor that serves each API by default (GA versions only).
SERVED_FROM: Final[dict[str, tuple[int, int]]] = {
    # Kubernetes 1.36: MutatingAdmissionPolicy GA (admissionregistration.k8s.io/v1); issue 28
    # ("renders MutatingAdmissionPolicies only on Kubernetes 1.36+").
    "admissionregistration.k8s.io/v1/MutatingAdmissionPolicy": (1, 36),
    "admissionregistration.k8s.io/v1/MutatingAdmissionPolicyBinding": (1, 36),
    # Kubernetes 1.34: Dynamic Resource Allocation GA (resource.k8s.io/v1).
    "resource.k8s.io/v1/DeviceClass": (1, 34),
}


@dataclass(frozen=True)
class Gate:
    template: str
    api: str | None  # None: the template reads .Capabilities.KubeVersion


def gates(chart: Path) -> list[Gate]:
    """Every template of the chart (and its subcharts) that reads the cluster's capabilities."""
    found: list[Gate] = []
    for path in sorted(chart.rglob("templates/**/*")):
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        where = str(path.relative_to(chart))
        found += [Gate(where, api) for api in sorted(set(API_GATE.findall(text)))]
        if KUBE_VERSION.search(text):
            found.append(Gate(where, None))
    return found


def minor(text: str) -> tuple[int, int] | None:
    """``1.33.5-gke.1080000`` / ``1.33`` -> (1, 33)."""
    match = re.match(r"v?(\d+)\.(\d+)", text.strip())
    return (int(match.group(1)), int(match.group(2))) if match else None


def flipped(chart: Path, old: tuple[int, int], new: tuple[int, int]) -> list[str]:
    """One line per gate whose outcome can differ between the two cluster minors."""
    low, high = min(old, new), max(old, new)
    lines = []
    for gate in gates(chart):
        if gate.api is None:
            lines.append(
                f"`{gate.template}` reads `.Capabilities.KubeVersion`: check what it renders at {new[0]}.{new[1]}"
            )
            continue
        served = SERVED_FROM.get(gate.api)
        if served is None:
            lines.append(
                f"`{gate.template}` renders on `{gate.api}` being served (not in the served-from table)"
            )
        elif low < served <= high:
            state = "starts" if new >= served else "stops"
            lines.append(
                f"`{gate.template}` renders `{gate.api}` objects only from Kubernetes {served[0]}.{served[1]}: "
                f"{state} rendering them at {new[0]}.{new[1]}"
            )
    return lines
