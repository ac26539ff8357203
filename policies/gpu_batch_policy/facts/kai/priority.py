"""Whether a workload is non-preemptible under KAI, which confines it to in-quota resources.

KAI treats a PriorityClass value >= 100 as non-preemptible (``docs/priority/README.md``; PodGroup
CRD "values below 100 are considered preemptible"), and the proportion plugin only lets a
non-preemptible job use what fits inside ``quota`` on its leaf queue and every ancestor
(``capacity_policy/quota_check.go``). Where the priority comes from, in KAI's order
(``defaultgrouper/default_grouper.go`` ``CalcPodGroupPriorityClass`` /
``calcPriorityClassWithDefaults``): the
``priorityClassName`` label on the workload (for Ray also ``ray.io/priority-class-name``, read by
``ray_grouper.go``), the same label on its pods, then ``pod.spec.priorityClassName``; with none of
them a Ray workload is ``train`` (50). The explicit ``kai.scheduler/preemptibility`` label
(``preemptible`` | ``non-preemptible``) overrides the value rule.

The chart installs ``train`` 50, ``build-preemptible`` 75, ``build`` 100 and ``inference`` 125
unconditionally (``templates/priorityclasses``); a stack may declare its own
``scheduling.k8s.io/v1`` PriorityClass objects (``value`` at the top level).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...primitives.values import Unknown, as_int
from ..model import RayWorkload, StackModel
from ..model.base import KubeObject
from ..model.workloads import PodTemplate

PRIORITY_LABEL = "priorityClassName"
RAY_PRIORITY_LABEL = "ray.io/priority-class-name"
PREEMPTIBILITY_LABEL = "kai.scheduler/preemptibility"
NON_PREEMPTIBLE_FROM = 100
KAI_BUILTIN_PRIORITIES: dict[str, int] = {
    "train": 50,
    "build-preemptible": 75,
    "build": 100,
    "inference": 125,
}


@dataclass(frozen=True)
class Preemptibility:
    """``non_preemptible`` is None when it cannot be told before deploy (``why`` says what)."""

    non_preemptible: bool | None
    why: str


def priority_class_name(workload: RayWorkload) -> str | Unknown | None:
    """The priority class KAI reads for the workload, in KAI's precedence order."""
    for key in (PRIORITY_LABEL, RAY_PRIORITY_LABEL):
        value = workload.obj.labels.get(key)
        if value is not None:
            return value
    if workload.head is not None:
        value = workload.head.template.labels.get(PRIORITY_LABEL)
        if value is not None:
            return value
        return workload.head.template.priority_class_name
    return None


def _declared_priorities(model: StackModel) -> dict[str, int | Unknown | None]:
    """PriorityClass name -> value, read once per stack (asked per workload)."""

    def build() -> dict[str, int | Unknown | None]:
        out: dict[str, int | Unknown | None] = {}
        for obj in model.kube_objects("scheduling.k8s.io", "PriorityClass"):
            out[obj.name] = as_int(obj.props.get("value"))
        return out

    return model.memo("kai.priority.declared", build)


def preemptibility(workload: RayWorkload, model: StackModel) -> Preemptibility:
    explicit = workload.obj.labels.get(PREEMPTIBILITY_LABEL)
    if isinstance(explicit, Unknown):
        return Preemptibility(None, f"label {PREEMPTIBILITY_LABEL} is unknown until apply")
    if explicit in ("preemptible", "non-preemptible"):
        return Preemptibility(explicit == "non-preemptible", f"label {PREEMPTIBILITY_LABEL}={explicit}")
    name = priority_class_name(workload)
    if isinstance(name, Unknown):
        return Preemptibility(None, "priority class name is unknown until apply")
    if name is None:
        return Preemptibility(False, "no priority class: KAI defaults Ray workloads to train (50)")
    return _by_value(model, name, "priority class")


# The priority class KAI v0.17.0's podgrouper gives a workload that names none, per top-owner kind
# (``calcPriorityClassWithDefaults``' default): ``plugins/deployment`` and ``plugins/spotrequest``
# pass ``InferencePriorityClass``, ``plugins/kubeflow/notebook`` ``BuildPriorityClass``, the default
# grouper (Jobs, JobSets, pods, Kubeflow jobs, ...) ``TrainPriorityClass``.
KAI_DEFAULT_PRIORITY_BY_KIND = {("apps", "Deployment"): "inference", ("kubeflow.org", "Notebook"): "build"}
KAI_DEFAULT_PRIORITY = "train"


def object_preemptibility(obj: KubeObject, templates: list[PodTemplate], model: StackModel) -> Preemptibility:
    """:func:`preemptibility` for any workload kind: the explicit ``kai.scheduler/preemptibility``
    label, else the priority class (the owner's ``priorityClassName`` label, a pod template's, a
    pod template's ``spec.priorityClassName``, else the kind's KAI default) and its value."""
    explicit = obj.labels.get(PREEMPTIBILITY_LABEL)
    if isinstance(explicit, Unknown):
        return Preemptibility(None, f"label {PREEMPTIBILITY_LABEL} is unknown until apply")
    if explicit in ("preemptible", "non-preemptible"):
        return Preemptibility(explicit == "non-preemptible", f"label {PREEMPTIBILITY_LABEL}={explicit}")
    name: str | Unknown | None = obj.labels.get(PRIORITY_LABEL)
    for template in templates:
        name = name if name is not None else template.labels.get(PRIORITY_LABEL)
    for template in templates:
        name = name if name is not None else template.priority_class_name
    source = "priority class"
    if name is None:
        name = KAI_DEFAULT_PRIORITY_BY_KIND.get((obj.group, obj.kind), KAI_DEFAULT_PRIORITY)
        source = f"KAI's default priority class for a {obj.kind}"
    if isinstance(name, Unknown):
        return Preemptibility(None, "priority class name is unknown until apply")
    return _by_value(model, name, source)


def _by_value(model: StackModel, name: str, source: str) -> Preemptibility:
    """Non-preemptible when the class's value (the stack's PriorityClass, else KAI's built-in) is >= 100."""
    declared = _declared_priorities(model)
    value = declared[name] if name in declared else KAI_BUILTIN_PRIORITIES.get(name)
    if isinstance(value, Unknown) or value is None:
        return Preemptibility(None, f"priority class '{name}' has no value the pack can read")
    return Preemptibility(value >= NON_PREEMPTIBLE_FROM, f"{source} '{name}' = {value}")
