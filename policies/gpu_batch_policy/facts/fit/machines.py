"""vCPUs and memory of Compute Engine machine types, for node allocatable.

One pack-side table: the general-purpose types the stacks and most users pick for system pools
(E2, N1, N2, N2D, C2, C3) and the accelerator-optimised types of the GPU table
(``model.gke.MACHINE_TYPE_GPUS``).  Memory is in GiB as Compute Engine states it ("GB" in its
tables is binary).  Sources: Compute Engine docs "General-purpose machine family"
(cloud.google.com/compute/docs/general-purpose-machines: E2 standard 4 GB/vCPU, highmem 8,
highcpu 1; N2/N2D/C3 standard 4, highmem 8, highcpu 1 (C3 highcpu 2); N1 standard 3.75;
C2 4) and "Accelerator-optimized machine family" (cloud.google.com/compute/docs/
accelerator-optimized-machines: G2, A2, A3, A4).  A type not listed here is "cannot check",
never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True)
class MachineShape:
    """What the VM has before GKE reserves anything."""

    vcpus: Decimal
    memory_gib: Decimal


def _family(prefix: str, gib_per_vcpu: str, sizes: tuple[int, ...]) -> dict[str, MachineShape]:
    per = Decimal(gib_per_vcpu)
    return {f"{prefix}-{n}": MachineShape(Decimal(n), per * n) for n in sizes}


def _fixed(table: dict[str, tuple[int, int]]) -> dict[str, MachineShape]:
    return {name: MachineShape(Decimal(cpu), Decimal(mem)) for name, (cpu, mem) in table.items()}


_E2 = (2, 4, 8, 16, 32)
_N2 = (2, 4, 8, 16, 32, 48, 64, 80, 96, 128)
_N2D = (2, 4, 8, 16, 32, 48, 64, 80, 96, 128, 224)
_N1 = (1, 2, 4, 8, 16, 32, 64, 96)
_C3 = (4, 8, 22, 44, 88, 176)

MACHINE_SHAPES: dict[str, MachineShape] = {
    **_family("e2-standard", "4", _E2),
    **_family("e2-highmem", "8", (2, 4, 8, 16)),
    **_family("e2-highcpu", "1", _E2),
    # Shared-core E2: 2 vCPUs of burstable time; GKE counts 2 (capacity.cpu = 2 on the node).
    **_fixed({"e2-micro": (2, 1), "e2-small": (2, 2), "e2-medium": (2, 4)}),
    **_family("n1-standard", "3.75", _N1),
    **_family("n2-standard", "4", _N2),
    **_family("n2-highmem", "8", _N2),
    **_family("n2-highcpu", "1", _N2),
    **_family("n2d-standard", "4", _N2D),
    **_family("c2-standard", "4", (4, 8, 16, 30, 60)),
    **_family("c3-standard", "4", _C3),
    **_family("c3-highmem", "8", _C3),
    **_family("c3-highcpu", "2", _C3),
    # G2 (NVIDIA L4): 4 GiB per vCPU.
    **_family("g2-standard", "4", (4, 8, 12, 16, 24, 32, 48, 96)),
    **_fixed(
        {
            "a2-highgpu-1g": (12, 85),
            "a2-highgpu-2g": (24, 170),
            "a2-highgpu-4g": (48, 340),
            "a2-highgpu-8g": (96, 680),
            "a2-megagpu-16g": (96, 1360),
            "a2-ultragpu-1g": (12, 170),
            "a2-ultragpu-2g": (24, 340),
            "a2-ultragpu-4g": (48, 680),
            "a2-ultragpu-8g": (96, 1360),
            "a3-highgpu-1g": (26, 234),
            "a3-highgpu-2g": (52, 468),
            "a3-highgpu-4g": (104, 936),
            "a3-highgpu-8g": (208, 1872),
            "a3-megagpu-8g": (208, 1872),
            "a3-ultragpu-8g": (224, 2952),
            "a4-highgpu-8g": (224, 3968),
            "a4x-highgpu-4g": (140, 884),
        }
    ),
}


def machine_shape(machine_type: str) -> MachineShape | None:
    """vCPUs and GiB of ``machine_type``; None when the pack does not know it ("cannot check")."""
    return MACHINE_SHAPES.get(machine_type)
