"""``kai-podgroup-members``: a PodGroup created beside its pods gets at least minMember of them.

A pod that names a PodGroup in its ``pod-group-name`` annotation joins that PodGroup, and KAI's
podgrouper leaves it alone (kai-scheduler/KAI-Scheduler v0.17.0 ``pkg/podgrouper/pod_controller.go``
``isOrphanPodWithPodGroup``), so the stack's own PodGroup is the gang: without subgroups,
``max(spec.minMember, 1)`` pods must be alive; with subgroups, each leaf subgroup's ``minMember``
of the pods labelled ``kai.scheduler/subgroup-name`` with its name (``kai.pod_groups``).  Only pods
KAI schedules attach (``schedulerName: kai-scheduler``): another scheduler binds its pods without
ever looking at the PodGroup.  A pod set with fewer alive pods than its minimum is never ready
(``pkg/scheduler/api/podgroup_info/subgroup_info/podset.go`` ``IsReadyForScheduling``), so the
group waits forever: a mandatory finding when the stack declares some of its pods but fewer than
the minimum.  When no pod of the stack joins the group its pods come from elsewhere (a controller
whose pod template carries the annotation, another stack): "cannot check".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.demand import CannotTellError
from ...facts.kai.pod_groups import SUBGROUP_LABEL, ExplicitPodGroup, explicit_pod_groups
from ...facts.model import StackModel
from ...facts.workload_kinds.queue_names import KAI_SCHEDULER_NAME
from ...primitives.values import Unknown, as_int, as_str, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter


def _minimum(raw: Any, where: str, floor: int) -> int:
    value = as_int(raw)
    if isinstance(value, Unknown):
        raise CannotTellError(where)
    return max(value if value is not None else floor, floor)


def shortfalls(group: ExplicitPodGroup) -> list[tuple[str, int, int]]:
    """(where, pods needed, pods of the stack that attach) for each pod set short of its minimum."""
    spec = group.obj.spec
    attaching = [p for p in group.members if as_str(dig(p.spec, "schedulerName")) == KAI_SCHEDULER_NAME]
    subgroups = dig(spec, "subGroups")
    if isinstance(subgroups, Unknown):
        raise CannotTellError("spec.subGroups")
    if not isinstance(subgroups, list) or not subgroups:
        needed = _minimum(dig(spec, "minMember"), "spec.minMember", 1)
        return [("spec.minMember", needed, len(attaching))] if len(attaching) < needed else []
    parents = {as_str(dig(s, "parent")) for s in subgroups}
    out: list[tuple[str, int, int]] = []
    for index, sub in enumerate(subgroups):
        name = as_str(dig(sub, "name"))
        if not isinstance(name, str) or name in parents:
            continue  # a parent subgroup holds no pods itself
        needed = _minimum(dig(sub, "minMember"), f"spec.subGroups[{index}].minMember", 0)
        mine = [p for p in attaching if p.labels.get(SUBGROUP_LABEL) == name]
        if len(mine) < needed:
            out.append((f"spec.subGroups[{index}] ('{name}') minMember", needed, len(mine)))
    return out


def check_pod_group_members(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for group in explicit_pod_groups(model):
        if not group.members:
            reporter.not_in_stack(
                group,
                "the pods of this PodGroup (no pod of the stack names it in its pod-group-name annotation)",
            )
            continue
        try:
            short = shortfalls(group)
        except CannotTellError as why:
            reporter.cannot_check(group, why.what)
            continue
        others = sum(1 for p in group.members if as_str(dig(p.spec, "schedulerName")) != KAI_SCHEDULER_NAME)
        aside = f" ({others} of its pods name another scheduler and never join it)" if others else ""
        for where, needed, have in short:
            reporter.violation(
                group,
                f"{where} needs {needed} pods but only {have} of the stack's pods attach{aside}; the pod set is "
                "never ready, so KAI never starts the group",
                "lower minMember to the pods that join it, or declare more pods with schedulerName: kai-scheduler, "
                "the pod-group-name annotation (and the subgroup label)",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "kai-podgroup-members",
        "A KAI PodGroup declared beside its pods gets at least minMember of them (per leaf subgroup), counting "
        "only pods scheduled by kai-scheduler.",
        check_pod_group_members,
    ),
]
