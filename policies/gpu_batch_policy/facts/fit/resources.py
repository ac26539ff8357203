"""CPU, memory and GPUs as one value: what a pod requests and what a node offers.

CPU is in cores and memory in bytes (``Decimal``, as ``kubernetes.utils.quantity`` parses
them), GPUs are ``nvidia.com/gpu``.  The scheduler's NodeResourcesFit filter compares exactly
these per resource (kubernetes/kubernetes ``pkg/scheduler/framework/plugins/noderesources/
fit.go``), so "fits" is "every resource ≤".
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from ...primitives.values import fmt_num

GIB = Decimal(1024**3)
MIB = Decimal(1024**2)


@dataclass(frozen=True)
class Resources:
    cpu: Decimal = Decimal(0)
    memory: Decimal = Decimal(0)
    gpus: Decimal = Decimal(0)

    def __add__(self, other: Resources) -> Resources:
        return Resources(self.cpu + other.cpu, self.memory + other.memory, self.gpus + other.gpus)

    def __sub__(self, other: Resources) -> Resources:
        return Resources(self.cpu - other.cpu, self.memory - other.memory, self.gpus - other.gpus)

    def times(self, factor: int | Decimal) -> Resources:
        return Resources(self.cpu * factor, self.memory * factor, self.gpus * factor)

    def fits_in(self, room: Resources) -> bool:
        return self.cpu <= room.cpu and self.memory <= room.memory and self.gpus <= room.gpus

    def short_of(self, room: Resources) -> list[str]:
        """The resources that exceed ``room``, e.g. ``["cpu 4 > 3.92"]``."""
        out: list[str] = []
        for name, want, have in (
            ("cpu", self.cpu, room.cpu),
            ("memory", self.memory, room.memory),
            ("nvidia.com/gpu", self.gpus, room.gpus),
        ):
            if want > have:
                out.append(f"{name} {fmt_res(name, want)} > {fmt_res(name, have)}")
        return out

    def describe(self) -> str:
        text = f"cpu {fmt_res('cpu', self.cpu)}, memory {fmt_res('memory', self.memory)}"
        return text + (f", nvidia.com/gpu {fmt_num(self.gpus)}" if self.gpus else "")


def fmt_res(name: str, amount: Decimal) -> str:
    """Human form: cores to 3 decimals, memory in GiB to 2 decimals."""
    if name == "memory":
        return f"{fmt_num((amount / GIB).quantize(Decimal('0.01')))}Gi"
    if name == "cpu":
        return fmt_num(amount.quantize(Decimal("0.001")))
    return fmt_num(amount)
