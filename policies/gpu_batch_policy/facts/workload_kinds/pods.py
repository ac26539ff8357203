"""Plain Pods and Kueue pod groups.

Kueue: a Pod is a Workload of one pod; pods sharing the label ``kueue.x-k8s.io/pod-group-name``
in one namespace are ONE Workload of all of them, declared size
``kueue.x-k8s.io/pod-group-total-count`` (kubernetes-sigs/kueue v0.19.2
``pkg/controller/jobs/pod/pod_controller.go`` ``constructPodSets`` L744-760,
``constructGroupPodSets`` L795-830; names in ``pkg/controller/jobs/pod/constants/constants.go``
L27-29).  The group's pods are those the stack declares.
KAI: a bare pod is its own PodGroup with minMember 1 (``defaultgrouper/default_grouper.go``
``GetPodGroupMetadata``: ``MinAvailable: 1``).
"""

from __future__ import annotations

from collections.abc import Iterable

from ...primitives.values import Unknown
from ..demand import CannotTellError, PodSet
from ..model.base import KubeObject
from ..model.workloads import PodTemplate
from .base import Gang

GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"


def _pod_set(obj: KubeObject) -> PodSet:
    raw = {"metadata": obj.props.get("metadata"), "spec": obj.props.get("spec")}
    return PodSet(obj.name, 1, PodTemplate(raw, ""), "spec")


def kueue_gangs(pods: Iterable[KubeObject]) -> list[Gang]:
    """One gang per ungrouped pod and one per (namespace, pod group)."""
    groups: dict[tuple[str, str], list[KubeObject]] = {}
    out: list[Gang] = []
    for pod in pods:
        group = pod.labels.get(GROUP_LABEL)
        if isinstance(group, Unknown):
            raise CannotTellError(f"{pod.describe()} label {GROUP_LABEL}")
        if group is None:
            out.append(Gang(pod, pod, (_pod_set(pod),)))
        else:
            groups.setdefault((pod.namespace or "default", group), []).append(pod)
    for members in groups.values():
        out.append(Gang(members[0], members[0], tuple(_pod_set(p) for p in members)))
    return out


def kai_gangs(pods: Iterable[KubeObject]) -> list[Gang]:
    return [Gang(pod, pod, (_pod_set(pod),)) for pod in pods]
