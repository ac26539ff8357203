"""The one table of GCP GPU machine types: which accelerator each carries, and how many.

GKE attaches GPUs to the accelerator-optimised machine families with a fixed accelerator type
and count per machine type; asking for anything else fails at node-pool creation, after a
long wait.  Validation (stack config) and capacity maths (GPU capacity of a pool, the largest
gang a pool can hold) both read this table so they can never disagree.

Source: GoogleCloudPlatform/cluster-toolkit ``modules/internal/gpu-definition/main.tf`` (the last
version before it moved to the API), accelerator strings as GKE spells them; see
shared/docs/reference/kueue.md §8.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GpuMachine:
    """A machine type's fixed GPU attachment."""

    machine_type: str
    accelerator_type: str
    gpus_per_node: int


def _family(accelerator: str, counts: dict[str, int]) -> dict[str, GpuMachine]:
    return {name: GpuMachine(name, accelerator, count) for name, count in counts.items()}


GPU_MACHINES: dict[str, GpuMachine] = {
    **_family(
        "nvidia-l4",
        {
            "g2-standard-4": 1,
            "g2-standard-8": 1,
            "g2-standard-12": 1,
            "g2-standard-16": 1,
            "g2-standard-32": 1,
            "g2-standard-24": 2,
            "g2-standard-48": 4,
            "g2-standard-96": 8,
        },
    ),
    **_family(
        "nvidia-tesla-a100",
        {
            "a2-highgpu-1g": 1,
            "a2-highgpu-2g": 2,
            "a2-highgpu-4g": 4,
            "a2-highgpu-8g": 8,
            "a2-megagpu-16g": 16,
        },
    ),
    **_family(
        "nvidia-a100-80gb",
        {"a2-ultragpu-1g": 1, "a2-ultragpu-2g": 2, "a2-ultragpu-4g": 4, "a2-ultragpu-8g": 8},
    ),
    **_family(
        "nvidia-h100-80gb",
        {"a3-highgpu-1g": 1, "a3-highgpu-2g": 2, "a3-highgpu-4g": 4, "a3-highgpu-8g": 8},
    ),
    **_family("nvidia-h100-mega-80gb", {"a3-megagpu-8g": 8}),
    **_family("nvidia-h200-141gb", {"a3-ultragpu-8g": 8}),
    **_family("nvidia-b200", {"a4-highgpu-8g": 8}),
    **_family("nvidia-gb200", {"a4x-highgpu-4g": 4}),
}


def gpu_machine(machine_type: str) -> GpuMachine | None:
    """The GPU attachment of ``machine_type``, or None when it is not a known GPU machine type."""
    return GPU_MACHINES.get(machine_type)
