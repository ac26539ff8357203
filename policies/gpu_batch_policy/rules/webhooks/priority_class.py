"""The API server's PriorityClass rules: what it refuses to store, before deploy.

Sources (kubernetes/kubernetes, every release since scheduling.k8s.io/v1):

* ``pkg/apis/scheduling/validation/validation.go`` ``ValidatePriorityClass``: a name starting
  with ``system-`` must be one of the predefined system classes with their exact value and
  ``globalDefault: false`` (``pkg/apis/scheduling/v1/helpers.go`` ``IsKnownSystemPriorityClass``:
  ``system-node-critical`` = 2000001000, ``system-cluster-critical`` = 2000000000; the API server
  creates both itself); any other class has ``value`` <= ``HighestUserDefinablePriority`` =
  1000000000 (``pkg/apis/scheduling/types.go``).
* ``plugin/pkg/admission/priority/admission.go`` ``validatePriorityClass``: creating a class with
  ``globalDefault: true`` while another one is the default is Forbidden ("PriorityClass X is
  already marked as default. Only one default can exist"), so a stack that declares (or whose
  charts render) two defaults fails on whichever is created second.
* ``ValidatePriorityClass`` also runs ``apivalidation.ValidatePreemptionPolicy``
  (``pkg/apis/core/validation/validation.go``): ``preemptionPolicy`` is ``PreemptLowerPriority``
  or ``Never`` (NotSupported otherwise); the OpenAPI schema has no enum for it.
* ``plugin/pkg/admission/priority/admission.go`` ``admitPod``: a pod whose ``priorityClassName``
  names no PriorityClass is refused ("no PriorityClass with name X was found"), so every pod
  template of a workload (each pod set Kueue counts, of every kind in ``workload_kinds``) must
  name a class the stack holds or the API server creates (the two system classes).  Open world:
  with no PriorityClass in the stack, the class may live elsewhere ("not in this stack").

Every PriorityClass the stack holds counts, declared or rendered by a Helm release; one another
stack creates is outside what the pack can see.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.model import StackModel
from ...facts.model.base import KubeObject
from ...facts.open_world import World, world_schema
from ...facts.workload_kinds import kueue_gangs
from ...primitives.quantity import shown
from ...primitives.values import Unknown, as_bool, as_int
from ..kit.builders import stack_policy
from ..kit.references import unresolved
from ..kit.report import Reporter

SCHEDULING_GROUP = "scheduling.k8s.io"
SYSTEM_PREFIX = "system-"
SYSTEM_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
HIGHEST_USER_DEFINABLE_PRIORITY = 1000000000
PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")  # core/v1 PreemptionPolicy values


def _value_problem(obj: KubeObject, value: int) -> tuple[str, str] | None:
    if obj.name.startswith(SYSTEM_PREFIX):
        expected = SYSTEM_CLASSES.get(obj.name)
        if expected is None:
            return (
                f"is named '{obj.name}'; the API server reserves the '{SYSTEM_PREFIX}' prefix for its own "
                f"classes ({', '.join(SYSTEM_CLASSES)}) and refuses it",
                f"rename it without the '{SYSTEM_PREFIX}' prefix",
            )
        if value != expected:
            return (
                f"redefines system class '{obj.name}' with value {value} (the API server's is {expected}) and "
                "is refused",
                f"do not declare '{obj.name}': the API server creates it",
            )
        return None
    if value > HIGHEST_USER_DEFINABLE_PRIORITY:
        return (
            f"has value {value}; the API server refuses user-defined priorities above "
            f"{HIGHEST_USER_DEFINABLE_PRIORITY:,} (HighestUserDefinablePriority)",
            f"lower value to at most {HIGHEST_USER_DEFINABLE_PRIORITY}",
        )
    return None


def check_priority_classes(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    defaults: list[KubeObject] = []
    for obj in model.kube_objects(SCHEDULING_GROUP, "PriorityClass"):
        if not obj.identity_known:
            reporter.cannot_check(obj, "metadata.name")
            continue
        value = as_int(obj.props.get("value"))
        default = as_bool(obj.props.get("globalDefault"))
        if isinstance(value, Unknown):
            reporter.cannot_check(obj, "value")
        elif isinstance(value, int):
            problem = _value_problem(obj, value)
            if problem is not None:
                reporter.violation(obj, *problem)
        policy = obj.props.get("preemptionPolicy")
        if isinstance(policy, Unknown):
            reporter.cannot_check(obj, "preemptionPolicy")
        elif policy is not None and policy not in PREEMPTION_POLICIES:
            reporter.violation(
                obj,
                f"has preemptionPolicy {shown(policy)}; the API server supports only "
                f"{' and '.join(PREEMPTION_POLICIES)} (NotSupported)",
                f"set preemptionPolicy to {' or '.join(PREEMPTION_POLICIES)}, or drop it (PreemptLowerPriority)",
            )
        if isinstance(default, Unknown):
            reporter.cannot_check(obj, "globalDefault")
        elif default is True:
            if obj.name in SYSTEM_CLASSES:
                reporter.violation(
                    obj,
                    "marks a system priority class globalDefault, which the API server refuses",
                    "drop globalDefault",
                )
            defaults.append(obj)
    if len(defaults) > 1:
        names = ", ".join(f"'{d.name}'" for d in defaults)
        for obj in defaults:
            reporter.violation(
                obj,
                f"is one of {len(defaults)} PriorityClasses with globalDefault: true ({names}); the API server's "
                "priority admission allows one default, so whichever is created second is refused",
                "keep globalDefault: true on one class only",
            )


def check_pod_priority_classes(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    """Each pod template's ``priorityClassName`` names a PriorityClass (see the module docstring)."""
    world = World.from_config(config)
    declared = {o.name for o in model.kube_objects(SCHEDULING_GROUP, "PriorityClass")}
    complete = all(o.identity_known for o in model.kube_objects(SCHEDULING_GROUP, "PriorityClass"))
    for counted in kueue_gangs(model):
        named: dict[str, str] = {}
        for gang in counted.gangs:
            for pod_set in gang.pod_sets:
                name = pod_set.template.priority_class_name
                if isinstance(name, Unknown):
                    reporter.cannot_check(counted.obj, f"{pod_set.path} priorityClassName")
                elif name and name not in SYSTEM_CLASSES and name not in declared:
                    named.setdefault(name, pod_set.path or "the pod")
        for name, path in named.items():
            if not complete:
                reporter.cannot_check(counted.obj, f"PriorityClass '{name}' (names unknown until apply)")
                continue
            unresolved(
                world,
                reporter,
                counted.obj,
                ("PriorityClass", name, None),
                declared=declared,
                problem=f"{path} names priorityClassName '{name}', but no PriorityClass '{name}' exists, so the "
                "API server's priority admission refuses its pods ('no PriorityClass with name ... was found')",
                fix=f"declare PriorityClass '{name}' (scheduling.k8s.io/v1) or use one of: "
                f"{', '.join(sorted(declared | set(SYSTEM_CLASSES)))}",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "priority-class-admission",
        "PriorityClasses the API server accepts: user values <= 1,000,000,000, the 'system-' prefix reserved, "
        "at most one globalDefault: true, preemptionPolicy PreemptLowerPriority or Never.",
        check_priority_classes,
    ),
    stack_policy(
        "pod-priority-class-exists",
        "Every pod template of a workload names a PriorityClass that exists (declared, or a system class), "
        "as the API server's priority admission requires.",
        check_pod_priority_classes,
        config_schema=world_schema(),
    ),
]
