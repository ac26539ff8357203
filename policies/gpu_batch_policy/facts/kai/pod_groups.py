"""Explicit KAI PodGroups (``scheduling.run.ai`` PodGroup) and the gang minimum they impose.

A bare pod that names a PodGroup in its ``pod-group-name`` annotation is left alone by KAI's
podgrouper (kai-scheduler/KAI-Scheduler v0.17.0 ``pkg/podgrouper/pod_controller.go``
``isOrphanPodWithPodGroup``), so the PodGroup the stack declares is the gang:

* ``spec.queue`` is the KAI queue ("if queue does not exist, the PodGroup will not be scheduled",
  ``pkg/apis/scheduling/v2alpha2/podgroup_types.go`` ``PodGroupSpec.Queue``);
* without subgroups, ``max(spec.minMember, 1)`` of its pods start together, 1 when unset
  (``pkg/scheduler/api/podgroup_info/job_info.go`` ``setSubGroups``);
* with subgroups, every leaf subgroup's ``minMember`` pods (labelled
  ``kai.scheduler/subgroup-name``, ``pkg/common/constants`` ``SubGroupLabelKey``) start together.
  ``minSubGroup`` (only N of the children needed) makes the minimum depend on which children
  start, so such a group counts nothing here.

The member pods are those the stack declares in the PodGroup's namespace.  The gang is a lower
bound: the cheapest pods (by GPUs) of each set are counted, never more than are declared, so a
gang found too big for its queue's limit is too big whichever pods KAI picks.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ...primitives.values import Unknown, as_int, as_str, dig
from ..demand import CannotTellError, PodSet
from ..model import StackModel
from ..model.base import KubeObject, ObjectView
from ..model.workloads import PodTemplate

KAI_SCHEDULING_GROUP = "scheduling.run.ai"
POD_GROUP_ANNOTATION = "pod-group-name"  # pkg/common/constants PodGroupAnnotationForPod
SUBGROUP_LABEL = "kai.scheduler/subgroup-name"  # pkg/common/constants SubGroupLabelKey


@dataclass(frozen=True)
class ExplicitPodGroup(ObjectView):
    """A declared PodGroup and the pods the stack declares for it."""

    queue: str | Unknown | None
    members: tuple[KubeObject, ...]


def explicit_pod_groups(model: StackModel) -> list[ExplicitPodGroup]:
    """Every ``scheduling.run.ai`` PodGroup of the stack, with its declared member pods."""
    return model.memo("kai.explicit_pod_groups", lambda: _build(model))


def _build(model: StackModel) -> list[ExplicitPodGroup]:
    pods = [o for o in model.objects if o.group == "" and o.kind == "Pod"]
    out: list[ExplicitPodGroup] = []
    for obj in model.kube_objects(KAI_SCHEDULING_GROUP, "PodGroup"):
        namespace = obj.namespace or "default"
        members = tuple(
            p
            for p in pods
            if (p.namespace or "default") == namespace and p.annotations.get(POD_GROUP_ANNOTATION) == obj.name
        )
        queue = as_str(dig(obj.spec, "queue"))
        out.append(ExplicitPodGroup(obj, queue or None, members))
    return out


def _template(pod: KubeObject) -> PodTemplate:
    return PodTemplate({"metadata": pod.props.get("metadata"), "spec": pod.props.get("spec")}, "spec")


def _cheapest(pods: list[KubeObject], count: int, name: str) -> list[PodSet]:
    def gpus(pod: KubeObject) -> Decimal:
        amount = _template(pod).gpus()
        if isinstance(amount, Unknown):
            raise CannotTellError(f"{pod.describe()} GPU request")
        return amount

    chosen = sorted(pods, key=gpus)[: max(count, 0)]
    return [PodSet(f"{name}/{p.name}", 1, _template(p), "spec") for p in chosen]


def _min(raw: Any, where: str, floor: int) -> int | None:
    value = as_int(raw)
    if isinstance(value, Unknown):
        raise CannotTellError(where)
    return None if value is None else max(value, floor)


def gang_pod_sets(group: ExplicitPodGroup) -> list[PodSet]:
    """The pods KAI must start at once for ``group`` (a lower bound; see the module docstring)."""
    spec = group.obj.spec
    subgroups = dig(spec, "subGroups")
    if isinstance(subgroups, Unknown):
        raise CannotTellError(f"{group.describe()} spec.subGroups")
    members = list(group.members)
    if not isinstance(subgroups, list) or not subgroups:
        minimum = _min(dig(spec, "minMember"), f"{group.describe()} spec.minMember", 1) or 1
        return _cheapest(members, minimum, "minMember")
    if dig(spec, "minSubGroup") is not None or any(dig(s, "minSubGroup") is not None for s in subgroups):
        return []
    parents = {as_str(dig(s, "parent")) for s in subgroups}
    out: list[PodSet] = []
    for index, sub in enumerate(subgroups):
        name = as_str(dig(sub, "name"))
        if not isinstance(name, str) or name in parents:
            continue  # an unnamed subgroup is the schema's finding; a parent holds no pods itself
        minimum = _min(dig(sub, "minMember"), f"{group.describe()} spec.subGroups[{index}].minMember", 0) or 0
        mine = [p for p in members if p.labels.get(SUBGROUP_LABEL) == name]
        out.extend(_cheapest(mine, minimum, name))
    return out
