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

Every PriorityClass the stack holds counts, declared or rendered by a Helm release; one another
stack creates is outside what the pack can see.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...builders import stack_policy
from ...model import StackModel
from ...model.base import KubeObject
from ...report import Reporter
from ...values import Unknown, as_bool, as_int

SCHEDULING_GROUP = "scheduling.k8s.io"
SYSTEM_PREFIX = "system-"
SYSTEM_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
HIGHEST_USER_DEFINABLE_PRIORITY = 1000000000


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


POLICIES: list[Policy] = [
    stack_policy(
        "priority-class-admission",
        "PriorityClasses the API server accepts: user values <= 1,000,000,000, the 'system-' prefix reserved, "
        "at most one globalDefault: true.",
        check_priority_classes,
    ),
]
