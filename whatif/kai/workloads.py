"""Trace workloads as KAI PodGroups: queue, priority, preemptibility and per-pod requests.

The trace format is the Kueue what-if's (``whatif/trace.py``), read the KAI way:

- ``queue`` names the KAI leaf queue (the ``kai.scheduler/queue`` label); ``namespace`` plays no
  part in KAI's queueing;
- ``priorityClass`` is a PriorityClass name (the chart's train / build-preemptible / build /
  inference or the stack's own), or ``priority`` an integer; neither: 50
  (``DefaultPodGroupPriority``); below 100 the PodGroup is preemptible
  (``CalculatePreemptibility``);
- every pod of the pod sets is in the gang (minMember = all pods);
- ``requests`` may carry the pod annotations KAI reads for GPU sharing: ``gpu-fraction``
  (``"0.5"``) and ``gpu-fraction-num-devices``.  ``gpu-memory`` is refused: turning MiB into a
  fraction needs the GPU's memory (``GpuMemoryAsGpuFraction``).
"""

from __future__ import annotations

from whatif.errors import NotModelledError, WhatIfError
from whatif.kai.cluster import PodSpec
from whatif.kai.model import DEFAULT_JOB_PRIORITY
from whatif.kai.session import preemptible
from whatif.pack import GPU_FRACTION_ANNOTATION, GPU_FRACTION_DEVICES_ANNOTATION, GPU_MEMORY_ANNOTATION
from whatif.trace import TraceEntry

GPU_REQUEST = "nvidia.com/gpu"
FRACTION = GPU_FRACTION_ANNOTATION
FRACTION_DEVICES = GPU_FRACTION_DEVICES_ANNOTATION
GPU_MEMORY = GPU_MEMORY_ANNOTATION
KNOWN = {"cpu", "memory", GPU_REQUEST, FRACTION, FRACTION_DEVICES}


def priority_of(entry: TraceEntry, classes: dict[str, int], where: str) -> tuple[int, bool]:
    if entry.priority_class is not None:
        if entry.priority_class not in classes:
            raise WhatIfError(
                f"trace {where}.priorityClass: got {entry.priority_class!r}, expected one of {sorted(classes)}"
            )
        value = classes[entry.priority_class]
    else:
        value = DEFAULT_JOB_PRIORITY if entry.priority is None else entry.priority
    return value, preemptible(value)


def pod_specs(entry: TraceEntry, where: str) -> tuple[PodSpec, ...]:
    """Per-pod requests in KAI's units (millicores, bytes, GPUs) for every pod of the gang."""
    out: list[PodSpec] = []
    for i, ps in enumerate(entry.pod_sets):
        path = f"trace {where}.podSets[{i}].requests"
        req = ps.requests  # milli-units
        if GPU_MEMORY in req:
            raise NotModelledError(
                f"{path}.{GPU_MEMORY}: GPU-memory requests are not modelled (use gpu-fraction)"
            )
        extra = sorted(set(req) - KNOWN)
        if extra:
            raise WhatIfError(
                f"{path}.{extra[0]}: got a resource KAI queues do not budget, expected one of {sorted(KNOWN)}"
            )
        whole = req.get(GPU_REQUEST, 0)
        if whole % 1000:
            raise WhatIfError(
                f"{path}.{GPU_REQUEST}: got {whole / 1000:g}, expected whole GPUs (use gpu-fraction)"
            )
        fraction = req.get(FRACTION, 0) / 1000
        if fraction and not 0 < fraction < 1:
            raise WhatIfError(
                f"{path}.{FRACTION}: got {fraction:g}, expected a number strictly between 0 and 1"
            )
        if fraction and whole:
            raise WhatIfError(f"{path}: got both {GPU_REQUEST} and {FRACTION}, expected one of them")
        devices = req.get(FRACTION_DEVICES, 1000) // 1000 or 1
        spec = PodSpec(
            cpu=float(req.get("cpu", 0)),
            memory=req.get("memory", 0) / 1000,
            gpus=whole // 1000,
            fraction=fraction,
            devices=devices,
        )
        out.extend([spec] * ps.count)
    return tuple(out)
