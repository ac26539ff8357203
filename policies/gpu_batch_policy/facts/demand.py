"""What a Ray workload asks a scheduler for: its pod sets, per-pod demand and gang totals.

The shared model (``model.workloads``) gives the groups of a RayJob/RayCluster and per-pod requests;
this module adds the two counting rules the quota checks need, because the schedulers count
differently and a check that used the wrong one would either miss real failures or invent them:

* **Kueue** admits a Ray workload as one Workload: the head, every worker group at
  ``replicas × numOfHosts`` (``minReplicas`` plays no part) and, for a RayJob, its submitter --
  counted in :mod:`workload_kinds.ray` from Kueue 0.19.2's code.  The whole Workload must fit the
  ClusterQueue at once: that *is* the gang.
* **KAI** builds a PodGroup whose minMember is ``1 + Σ (minReplicas > 0 ? minReplicas : replicas)
  × numOfHosts`` over groups that are not suspended (``ray_grouper.go``; the model's
  ``RayGroup.kai_pod_count``), and accounts GPUs in fractions: a ``gpu-fraction`` pod takes
  ``fraction × gpu-fraction-num-devices`` devices from its queue (KAI ``docs/gpu-sharing``).
  KAI queues budget CPU in millicores and memory in MB of 10^6 bytes (Queue CRD descriptions).

The CRD defaults apply to absent fields (``replicas`` 0, ``numOfHosts`` 1), as the API server would
store them. A RayJob with ``clusterSelector`` runs on an existing cluster and brings no pods.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal

from ..primitives.quantity import QuantityError, parse_fraction
from ..primitives.values import Unknown, dig
from .kai.quota import cpu_to_kai, memory_to_kai
from .model.workloads import (
    GPU_FRACTION_ANNOTATION,
    GPU_MEMORY_ANNOTATION,
    GPU_RESOURCE,
    PodTemplate,
    RayGroup,
    RayWorkload,
)

GPU_FRACTION_DEVICES_ANNOTATION = "gpu-fraction-num-devices"


@dataclass(frozen=True)
class PodSet:
    """``count`` identical pods built from ``template`` (one Ray group).

    ``min_count``: the fewest pods Kueue may admit the pod set with (Kueue v0.19.2 ``PodSet.MinCount``,
    set by a Job's ``kueue.x-k8s.io/job-min-parallelism``); None when the pod set is all or nothing."""

    name: str
    count: int
    template: PodTemplate
    path: str
    min_count: int | None = None


class CannotTellError(Exception):
    """A demand depends on something unknown before apply (preview) or undeclared."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


def _need(value: int | Decimal | Unknown, what: str) -> int | Decimal:
    if isinstance(value, Unknown):
        raise CannotTellError(f"{what} ({value.path})")
    return value


def uses_existing_cluster(workload: RayWorkload) -> bool:
    """A RayJob with ``spec.clusterSelector`` submits to a running cluster: no pods of its own."""
    if workload.kind != "RayJob":
        return False
    selector = dig(workload.obj.spec, "clusterSelector")
    return isinstance(selector, dict) and bool(selector)


def _groups(workload: RayWorkload) -> list[RayGroup]:
    if not workload.workers_known:
        raise CannotTellError(f"{workload.describe()} worker groups")
    return workload.groups()


def kai_pod_sets(workload: RayWorkload) -> list[PodSet]:
    """The pods of KAI's gang (minMember) per group. Raises CannotTellError."""
    if uses_existing_cluster(workload):
        return []
    out: list[PodSet] = []
    for group in _groups(workload):
        count = int(_need(group.kai_pod_count(), f"{group.path} pod count"))
        out.append(PodSet(group.name, count, group.template, group.path))
    return out


def pod_request(template: PodTemplate, resource: str) -> Decimal:
    """One pod's effective request of ``resource`` in the API's base unit. Raises CannotTellError."""
    return Decimal(_need(template.request(resource), f"{template.path} {resource} request"))


def _annotation_number(template: PodTemplate, key: str) -> Decimal | None:
    raw = template.annotations.get(key)
    if raw is None:
        return None
    if isinstance(raw, Unknown):
        raise CannotTellError(f"{template.path} annotation {key}")
    try:
        return parse_fraction(raw)
    except QuantityError:
        return None


def kai_pod_gpus(template: PodTemplate) -> Decimal:
    """GPUs one pod takes from a KAI queue (fractions allowed). Raises CannotTellError.

    A ``gpu-memory`` request is MiB of a device the stack does not size, so it cannot be turned
    into queue GPUs before deploy; an unparsable ``gpu-fraction`` is reported by the wiring rule
    and cannot be counted here either.
    """
    if GPU_MEMORY_ANNOTATION in template.annotations:
        raise CannotTellError(f"{template.path} requests GPU memory, not a GPU count")
    if GPU_FRACTION_ANNOTATION in template.annotations:
        fraction = _annotation_number(template, GPU_FRACTION_ANNOTATION)
        if fraction is None:
            raise CannotTellError(f"{template.path} gpu-fraction is not a number")
        devices = _annotation_number(template, GPU_FRACTION_DEVICES_ANNOTATION) or Decimal(1)
        return fraction * devices
    return pod_request(template, GPU_RESOURCE)


def kai_pod_demand(template: PodTemplate, resource: str) -> Decimal:
    """One pod's demand on a KAI queue ``resource`` (cpu | gpu | memory) in KAI's unit."""
    if resource == "gpu":
        return kai_pod_gpus(template)
    if resource == "cpu":
        return cpu_to_kai(pod_request(template, "cpu"))
    if resource == "memory":
        return memory_to_kai(pod_request(template, "memory"))
    raise ValueError(f"KAI queues do not budget {resource!r}")


def total(pod_sets: Iterable[PodSet], per_pod: Callable[[PodTemplate], Decimal]) -> Decimal:
    """Σ count × per-pod demand over the pod sets (pod sets with count 0 are not evaluated)."""
    out = Decimal(0)
    for pod_set in pod_sets:
        if pod_set.count:
            out += pod_set.count * per_pod(pod_set.template)
    return out


def gang_pods(pod_sets: Iterable[PodSet]) -> int:
    return sum(p.count for p in pod_sets)
