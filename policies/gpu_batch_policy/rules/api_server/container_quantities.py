"""Container resource requests and limits are quantities the API server accepts.

Why a rule of its own: the demand arithmetic (``model.workloads.PodTemplate.request``) counts a
bad quantity as 0 so the capacity rules can still judge the rest, which means nothing else
reports it; yet the API server rejects the object (``resource.ParseQuantity``, see
:mod:`.quantity`), so ``pulumi up`` would fail after everything before it was created.

The rule judges any Kubernetes object of any program (Pods, Jobs, RayJobs, JobSets, Deployments,
objects rendered from charts): every ``resources`` mapping that has ``requests`` or ``limits``
(the shape of ``core/v1 ResourceRequirements``, wherever a pod template nests it) is checked,
walking the properties iteratively so no nesting depth can exhaust the stack.  Unknown values
are left to apply time.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.model.base import KubeObject, ObjectView
from ...primitives.quantity import QuantityError, parse_int_or_string, shown
from ...primitives.values import Unknown
from ..kit.builders import resource_policy
from ..kit.report import Reporter

_SECTIONS = ("requests", "limits")


def _requirements(props: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """(path, mapping) of every ResourceRequirements-shaped ``resources`` mapping in ``props``."""
    stack: list[tuple[str, Any]] = [("", props)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                sub = f"{path}.{key}" if path else str(key)
                if key == "resources" and isinstance(item, dict) and any(s in item for s in _SECTIONS):
                    yield sub, item
                stack.append((sub, item))
        elif isinstance(value, list):
            stack.extend((f"{path}[{index}]", item) for index, item in enumerate(value))


def check_container_quantities(subject: Any, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    obj = subject.obj if isinstance(subject, ObjectView) else subject
    if not isinstance(obj, KubeObject):
        return
    for path, requirements in _requirements(obj.props):
        for section in _SECTIONS:
            amounts = requirements.get(section)
            if not isinstance(amounts, dict):
                continue
            for resource, raw in amounts.items():
                if isinstance(raw, Unknown):
                    continue
                try:
                    parse_int_or_string(raw)
                except QuantityError as why:
                    reporter.violation(
                        obj,
                        f"{path}.{section}['{resource}'] is {shown(raw)}, not a quantity the API server "
                        f"accepts ({why})",
                        'write a Kubernetes quantity such as 2, "500m" or "16Gi" (no spaces or other digits)',
                    )


POLICIES: list[Policy] = [
    resource_policy(
        "container-resource-quantities",
        "Container resource requests and limits are Kubernetes quantities the API server accepts.",
        (KubeObject, ObjectView),
        check_container_quantities,
    ),
]
