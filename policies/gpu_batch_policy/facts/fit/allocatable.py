"""Per-node allocatable of a GKE Standard node: machine capacity minus GKE's reservations.

GKE docs "Plan GKE Standard node sizes", section "Node allocatable resources"
(cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes):

- memory reserved: 255 MiB on machines with less than 1 GiB; otherwise 25% of the first 4 GiB,
  20% of the next 4 GiB (up to 8), 10% of the next 8 GiB (up to 16), 6% of the next 112 GiB (up
  to 128) and 2% of anything above 128 GiB; plus the kubelet's hard eviction threshold of
  100 MiB;
- CPU reserved: 6% of the first core, 1% of the next core (up to 2), 0.5% of the next 2 cores
  (up to 4) and 0.25% of every core above 4.

GPUs are not reserved: a node advertises every attached ``nvidia.com/gpu``.
"""

from __future__ import annotations

from decimal import Decimal

from .machines import MachineShape
from .resources import GIB, MIB, Resources

EVICTION_THRESHOLD = 100 * MIB
SMALL_MACHINE_MEMORY_RESERVED = 255 * MIB

# (upper bound of the tier, share reserved within it); None = unbounded.
_MEMORY_TIERS: tuple[tuple[Decimal | None, Decimal], ...] = (
    (Decimal(4), Decimal("0.25")),
    (Decimal(8), Decimal("0.20")),
    (Decimal(16), Decimal("0.10")),
    (Decimal(128), Decimal("0.06")),
    (None, Decimal("0.02")),
)
_CPU_TIERS: tuple[tuple[Decimal | None, Decimal], ...] = (
    (Decimal(1), Decimal("0.06")),
    (Decimal(2), Decimal("0.01")),
    (Decimal(4), Decimal("0.005")),
    (None, Decimal("0.0025")),
)


def _tiered(amount: Decimal, tiers: tuple[tuple[Decimal | None, Decimal], ...]) -> Decimal:
    reserved = Decimal(0)
    lower = Decimal(0)
    for upper, share in tiers:
        top = amount if upper is None else min(amount, upper)
        if top > lower:
            reserved += (top - lower) * share
        if upper is None or amount <= upper:
            break
        lower = upper
    return reserved


def reserved_memory_bytes(memory_gib: Decimal) -> Decimal:
    if memory_gib < 1:
        return SMALL_MACHINE_MEMORY_RESERVED
    return _tiered(memory_gib, _MEMORY_TIERS) * GIB


def reserved_cpu_cores(vcpus: Decimal) -> Decimal:
    return _tiered(vcpus, _CPU_TIERS)


def node_allocatable(shape: MachineShape, gpus: int) -> Resources:
    """What pods can request on one node of this machine shape with ``gpus`` GPUs."""
    memory = shape.memory_gib * GIB - reserved_memory_bytes(shape.memory_gib) - EVICTION_THRESHOLD
    cpu = shape.vcpus - reserved_cpu_cores(shape.vcpus)
    return Resources(cpu=cpu, memory=memory, gpus=Decimal(gpus))
