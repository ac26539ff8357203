"""Workloads (KubeRay RayJob/RayCluster, pod templates), KAI queues and namespaces.

Gang size follows KAI's podgrouper (kai-kuberay-skypilot.md §1.6,
``ray_grouper.go calcJobNumOfPodsAndSubGroups``): 1 for the head, plus for every worker group that
is neither suspended nor zero-sized ``(minReplicas if minReplicas > 0 else replicas) × numOfHosts``.
Per-pod GPUs come from ``nvidia.com/gpu`` limits/requests of the containers (Kubernetes: an
extended resource's request defaults to its limit) and, for KAI GPU sharing, the pod annotation
``gpu-fraction`` (kai-kuberay-skypilot.md §1.4).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ...primitives.values import Quantity, Unknown, as_bool, as_int, as_str, dig, quantity, str_map
from .base import KubeObject, ObjectView

GPU_RESOURCE = "nvidia.com/gpu"
KAI_QUEUE_LABEL = "kai.scheduler/queue"
GPU_FRACTION_ANNOTATION = "gpu-fraction"
GPU_MEMORY_ANNOTATION = "gpu-memory"


@dataclass(frozen=True)
class PodTemplate:
    """A pod template (``template`` of a Ray group or any controller), as plain values."""

    raw: dict[str, Any] | Unknown
    path: str

    @property
    def labels(self) -> dict[str, str | Unknown]:
        return str_map(dig(self.raw, "metadata", "labels"))

    @property
    def annotations(self) -> dict[str, str | Unknown]:
        return str_map(dig(self.raw, "metadata", "annotations"))

    @property
    def scheduler_name(self) -> str | Unknown | None:
        return as_str(dig(self.raw, "spec", "schedulerName"))

    @property
    def priority_class_name(self) -> str | Unknown | None:
        return as_str(dig(self.raw, "spec", "priorityClassName"))

    def request(self, resource: str) -> Decimal | Unknown:
        """Effective per-pod request of ``resource``, as Kueue and the scheduler compute it.

        kubernetes/component-helpers v0.37.2 ``resource/helpers.go`` ``PodRequests`` (which Kueue
        v0.19.2 ``pkg/workload/workload.go`` ``totalRequestsFromPodSets`` calls): the containers'
        sum; each sidecar (an init container with ``restartPolicy: Always``) adds to it, and every
        other init container needs itself plus the sidecars before it, the largest of those being
        a floor (``aggregateContainerResourcesByFn``); pod-level ``spec.resources.requests`` of
        cpu, memory or hugepages replace the sum (``applyPodLevelResources``); ``spec.overhead``
        is added.  A container's request is ``requests[r]``, else ``limits[r]`` (Kueue
        ``pkg/workload/resources.go`` ``UseLimitsAsMissingRequestsInPod``).  Missing -> 0.  A bad
        quantity counts as 0 (the CRD/API rules report it).
        """
        if isinstance(self.raw, Unknown):
            return self.raw
        total = Decimal(0)
        sidecars = Decimal(0)
        floor = Decimal(0)
        for key, is_init in (("containers", False), ("initContainers", True)):
            containers = dig(self.raw, "spec", key)
            if isinstance(containers, Unknown):
                return containers
            for container in containers if isinstance(containers, list) else []:
                amount = _container_request(container, resource)
                if isinstance(amount, Unknown):
                    return amount
                if not is_init:
                    total += amount
                elif dig(container, "restartPolicy") == "Always":
                    total += amount
                    sidecars += amount
                    floor = max(floor, sidecars)
                else:
                    floor = max(floor, amount + sidecars)
        pod: Decimal | Unknown | None = max(total, floor)
        if _pod_level(resource):
            pod_level = _amount(dig(self.raw, "spec", "resources", "requests", resource), "spec.resources")
            # applyPodLevelResources: a pod-level request replaces the containers' sum.
            pod = pod if pod_level is None else pod_level
        overhead = _overhead(self.raw, resource)
        if isinstance(pod, Unknown) or isinstance(overhead, Unknown):
            return pod if isinstance(pod, Unknown) else overhead
        return (pod or Decimal(0)) + overhead

    def gpus(self) -> Decimal | Unknown:
        """Whole GPUs per pod (``nvidia.com/gpu``)."""
        return self.request(GPU_RESOURCE)

    def gpu_fraction(self) -> Quantity | None:
        """KAI ``gpu-fraction`` annotation, parsed; None when absent."""
        raw = dig(self.raw, "metadata", "annotations", GPU_FRACTION_ANNOTATION)
        return None if raw is None else quantity(raw)


def _amount(raw: Any, where: str) -> Decimal | Unknown | None:
    """A quantity's amount (None when absent; a bad one counts as 0)."""
    if raw is None:
        return None
    q = quantity(raw)
    if q.unknown:
        return Unknown(where)
    return q.value if q.value is not None else Decimal(0)


def _overhead(raw: Any, resource: str) -> Decimal | Unknown:
    found = _amount(dig(raw, "spec", "overhead", resource), "spec.overhead")
    return Decimal(0) if found is None else found


def _pod_level(resource: str) -> bool:
    """component-helpers ``IsSupportedPodLevelResource``: cpu, memory, hugepages-*."""
    return resource in ("cpu", "memory") or resource.startswith("hugepages-")


def _container_request(container: Any, resource: str) -> Decimal | Unknown:
    for section in ("requests", "limits"):
        raw = dig(container, "resources", section, resource)
        if raw is None:
            continue
        q = quantity(raw)
        if q.unknown:
            return Unknown(f"resources.{section}.{resource}")
        return q.value if q.value is not None else Decimal(0)
    return Decimal(0)


@dataclass(frozen=True)
class RayGroup:
    """The head group or one worker group of a Ray cluster spec."""

    name: str
    is_head: bool
    replicas: int | Unknown | None
    min_replicas: int | Unknown | None
    max_replicas: int | Unknown | None
    num_of_hosts: int | Unknown | None
    suspend: bool | Unknown | None
    template: PodTemplate
    path: str

    def kai_pod_count(self) -> int | Unknown:
        """Pods this group adds to the gang under KAI's counting rule (head: 1)."""
        return self._pod_count(use_min_replicas=True)

    def replica_pod_count(self) -> int | Unknown:
        """Pods at the group's configured size: ``replicas × numOfHosts`` (head: 1)."""
        return self._pod_count(use_min_replicas=False)

    def _pod_count(self, use_min_replicas: bool) -> int | Unknown:
        """``size × numOfHosts``, where size is ``minReplicas`` when that is > 0 and
        ``use_min_replicas`` (KAI's rule), else ``replicas``; suspended groups add nothing."""
        if self.is_head:
            return 1
        if isinstance(self.suspend, Unknown):
            return self.suspend
        if self.suspend:
            return 0
        min_r = self.min_replicas if use_min_replicas else None
        if isinstance(min_r, Unknown):
            return min_r
        if isinstance(self.replicas, Unknown):
            return self.replicas
        if isinstance(self.num_of_hosts, Unknown):
            return self.num_of_hosts
        base = min_r if min_r and min_r > 0 else (self.replicas or 0)
        hosts = self.num_of_hosts if self.num_of_hosts is not None else 1
        return max(base, 0) * hosts

    @property
    def min_exceeds_replicas(self) -> bool:
        """KAI's grouper errors when minReplicas > replicas."""
        return (
            isinstance(self.min_replicas, int)
            and isinstance(self.replicas, int)
            and self.min_replicas > self.replicas
        )


@dataclass(frozen=True)
class RayWorkload(ObjectView):
    """A ``ray.io`` RayJob or RayCluster (RayService too: same ``rayClusterConfig`` shape)."""

    cluster_spec: dict[str, Any] | Unknown | None
    head: RayGroup | None
    workers: tuple[RayGroup, ...]
    workers_known: bool
    # RayJob only; None = not set, which the CRD defaults to K8sJobMode.
    submission_mode: str | Unknown | None

    @property
    def kind(self) -> str:
        return self.obj.kind

    def groups(self) -> list[RayGroup]:
        return ([self.head] if self.head else []) + list(self.workers)

    def gang_size(self) -> int | Unknown:
        """KAI minMember: head 1 + Σ counted worker pods."""
        if not self.workers_known:
            return Unknown(f"{self.obj.pulumi_name}.workerGroupSpecs")
        total = 0
        for group in self.groups():
            count = group.kai_pod_count()
            if isinstance(count, Unknown):
                return count
            total += count
        return total

    def gang_gpus(self) -> Decimal | Unknown:
        """GPUs of the whole gang under the same counting rule (whole GPUs only)."""
        if not self.workers_known:
            return Unknown(f"{self.obj.pulumi_name}.workerGroupSpecs")
        total = Decimal(0)
        for group in self.groups():
            count = group.kai_pod_count()
            gpus = group.template.gpus()
            if isinstance(count, Unknown):
                return count
            if isinstance(gpus, Unknown):
                return gpus
            total += gpus * count
        return total


def _ray_group(raw: Any, path: str, is_head: bool, index: int) -> RayGroup:
    template = dig(raw, "template")
    name = as_str(dig(raw, "groupName"))
    return RayGroup(
        name="head" if is_head else (name if isinstance(name, str) else f"worker-group-{index}"),
        is_head=is_head,
        replicas=None if is_head else as_int(dig(raw, "replicas")),
        min_replicas=None if is_head else as_int(dig(raw, "minReplicas")),
        max_replicas=None if is_head else as_int(dig(raw, "maxReplicas")),
        num_of_hosts=None if is_head else as_int(dig(raw, "numOfHosts")),
        suspend=None if is_head else as_bool(dig(raw, "suspend")),
        template=PodTemplate(template if isinstance(template, (dict, Unknown)) else {}, f"{path}.template"),
        path=path,
    )


def ray_workload(obj: KubeObject) -> RayWorkload:
    spec = obj.spec
    if obj.kind == "RayJob":
        base = "spec.rayClusterSpec"
        cluster_spec = dig(spec, "rayClusterSpec")
    elif obj.kind == "RayService":
        base = "spec.rayClusterConfig"
        cluster_spec = dig(spec, "rayClusterConfig")
    else:
        base = "spec"
        cluster_spec = spec
    head_raw = dig(cluster_spec, "headGroupSpec")
    head = _ray_group(head_raw, f"{base}.headGroupSpec", True, 0) if head_raw is not None else None
    workers_raw = dig(cluster_spec, "workerGroupSpecs")
    workers = tuple(
        _ray_group(w, f"{base}.workerGroupSpecs[{i}]", False, i)
        for i, w in enumerate(workers_raw if isinstance(workers_raw, list) else [])
    )
    return RayWorkload(
        obj=obj,
        cluster_spec=cluster_spec if isinstance(cluster_spec, (dict, Unknown)) else None,
        head=head,
        workers=workers,
        workers_known=not isinstance(workers_raw, Unknown) and not isinstance(cluster_spec, Unknown),
        submission_mode=as_str(dig(spec, "submissionMode")) if obj.kind == "RayJob" else None,
    )


@dataclass(frozen=True)
class KaiResource:
    """``spec.resources.<cpu|gpu|memory>`` of a KAI Queue: -1 = unlimited; limit unset/0 = none."""

    quota: float | Unknown | None
    limit: float | Unknown | None
    over_quota_weight: float | Unknown | None


@dataclass(frozen=True)
class KaiQueue(ObjectView):
    parent_queue: str | Unknown | None
    # None when spec.resources is absent (the KAI webhook rejects that).
    resources: dict[str, KaiResource] | Unknown | None
    priority: int | Unknown | None


def _num(raw: Any) -> float | Unknown | None:
    if isinstance(raw, Unknown):
        return raw
    if isinstance(raw, bool):
        return None
    if isinstance(raw, (int, float)):
        return float(raw)
    if isinstance(raw, str):
        try:
            return float(raw)
        except ValueError:
            return None
    return None


def kai_queue(obj: KubeObject) -> KaiQueue:
    spec = obj.spec
    res_raw = dig(spec, "resources")
    resources: dict[str, KaiResource] | Unknown | None
    if isinstance(res_raw, Unknown):
        resources = res_raw
    elif isinstance(res_raw, dict):
        resources = {
            str(k): KaiResource(_num(dig(v, "quota")), _num(dig(v, "limit")), _num(dig(v, "overQuotaWeight")))
            for k, v in res_raw.items()
        }
    else:
        resources = None
    return KaiQueue(obj, as_str(dig(spec, "parentQueue")), resources, as_int(dig(spec, "priority")))


@dataclass(frozen=True)
class Namespace(ObjectView):
    @property
    def labels(self) -> dict[str, str | Unknown]:
        return self.obj.labels
