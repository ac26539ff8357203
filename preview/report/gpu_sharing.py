"""Report cells and the section on how GPUs reach pods: driver/device-plugin source and fractions.

Two questions a reviewer of a GPU stack asks that the pool sizes do not answer:

- *Who gives this pool's pods their GPUs?*  GKE's driver and device plugin (optionally shared by
  GKE's time-sharing / MPS, each physical GPU then advertised as N ``nvidia.com/gpu``), or the
  NVIDIA GPU Operator -- the only one under which KAI's ``gpu-fraction`` pods get a GPU.  The
  answer is the policy pack's (``gpu_batch_policy.facts.gpu_stack``), so report and rules agree.
- *How many GPUs do the fractional pods take?*  KAI charges a ``gpu-fraction`` pod
  ``fraction × gpu-fraction-num-devices`` GPUs of its queue (``gpu_batch_policy.facts.demand``
  ``kai_pod_gpus``, from KAI ``docs/gpu-sharing`` @ v0.17.0); a ``gpu-memory`` pod is MiB of a
  device whose size only the node's GFD label ``nvidia.com/gpu.memory`` tells, so it is shown, not
  converted.  Each GPU KAI shares is held by one ``gpu-reservation`` pod requesting a whole
  ``nvidia.com/gpu`` (KAI ``pkg/binder/binding/resourcereservation/resource_reservation.go``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal

from gpu_batch_policy.facts.demand import CannotTellError, kai_pod_gpus
from gpu_batch_policy.facts.fit.placement import placement
from gpu_batch_policy.facts.gpu_stack import (
    describe_source,
    gpu_source,
    operator_installed,
    operator_manages,
    setup_of,
)
from gpu_batch_policy.facts.model import NodePool, StackModel
from gpu_batch_policy.facts.model.workloads import GPU_FRACTION_ANNOTATION, GPU_MEMORY_ANNOTATION, RayWorkload
from gpu_batch_policy.facts.open_world import World
from gpu_batch_policy.facts.pod_templates import OwnedTemplate, owned_templates
from gpu_batch_policy.primitives.values import Unknown, as_int, dig

Table = Callable[[Sequence[str], Sequence[Sequence[object]]], list[str]]


def gpu_stack_cell(model: StackModel, pool: NodePool) -> str:
    """How the pool gets its driver and device plugin (one table cell)."""
    setup = setup_of(pool)
    source = gpu_source(setup, operator_manages(setup, operator_installed(model, World())))
    return describe_source(setup, source)


def _pods(owned: OwnedTemplate) -> int | None:
    if isinstance(owned.owner, RayWorkload):
        for group in owned.owner.groups():
            if group.name == owned.name:
                count = group.replica_pod_count()
                return count if isinstance(count, int) else None
        return None
    if owned.owner.kind in ("Deployment", "StatefulSet", "ReplicaSet"):
        replicas = as_int(dig(owned.owner.props, "spec", "replicas"))
        return 1 if replicas is None else (replicas if isinstance(replicas, int) else None)
    return 1


def _fraction_rows(model: StackModel) -> Iterator[list[object]]:
    gpu_pools = [p for p in model.node_pools() if p.gpus_per_node() != 0]
    for owned in owned_templates(model):
        notes = owned.template.annotations
        key = next((k for k in (GPU_FRACTION_ANNOTATION, GPU_MEMORY_ANNOTATION) if k in notes), None)
        if key is None:
            continue
        value = notes[key]
        pods = _pods(owned)
        try:
            per_pod: Decimal | None = kai_pod_gpus(owned.template)
        except CannotTellError:
            per_pod = None
        share = "-" if per_pod is None or pods is None else f"{(per_pod * pods).normalize():f}"
        ids = {id(p) for p in gpu_pools}
        possible = [p for p in placement(model, owned.template).possible if id(p) in ids] or gpu_pools
        yield [
            f"{owned.owner.describe()} {owned.name}",
            "unknown" if pods is None else pods,
            f"{key}: {'unknown' if isinstance(value, Unknown) else value}",
            share if key == GPU_FRACTION_ANNOTATION else "MiB of a GPU (sized by the node's GPU memory)",
            "; ".join(f"{p.name}: {gpu_stack_cell(model, p)}" for p in possible) or "no GPU pool",
        ]


def fraction_section(model: StackModel, table: Table) -> list[str]:
    """The "Fractional GPUs (KAI)" section; empty when no pod asks for a fraction."""
    rows = list(_fraction_rows(model))
    if not rows:
        return []
    return [
        "### Fractional GPUs (KAI)",
        "",
        *table(["pods of", "pods", "asks", "queue GPUs (pods × fraction)", "GPU pools it can use"], rows),
        "",
        "KAI charges each `gpu-fraction` pod its fraction of a GPU against the queue's `gpu` quota and "
        "holds every shared GPU with one `gpu-reservation` pod requesting a whole `nvidia.com/gpu`; the pod "
        "sees its share only under NVIDIA's runtime, i.e. on a pool whose GPUs come from the GPU Operator.",
        "",
    ]
