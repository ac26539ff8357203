"""What every workload family module returns: gangs of pod sets, counted as one scheduler does.

A :class:`Gang` is one unit of admission: one Kueue Workload, or one KAI PodGroup's minimum
(minMember).  Its pod sets reuse :class:`gpu_batch_policy.facts.demand.PodSet`, so the quota and
capacity helpers that judge Ray gangs today (``rules.capacity``, ``rules.kai``) judge every kind.
Absent fields take the API server's defaults, as a stored object would have them; a count that
depends on a value unknown before apply raises :class:`CannotTellError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...primitives.values import Unknown, as_int, dig
from ..demand import CannotTellError, PodSet
from ..model.base import KubeObject
from ..model.workloads import PodTemplate


@dataclass(frozen=True)
class Gang:
    """Pods a scheduler admits (Kueue) or starts (KAI minMember) all at once."""

    subject: Any  # what a finding names: the KubeObject, or the RayWorkload view of it
    obj: KubeObject
    pod_sets: tuple[PodSet, ...]

    @property
    def pods(self) -> int:
        return sum(p.count for p in self.pod_sets)


def count_at(raw: Any, path: tuple[str | int, ...], default: int, where: str) -> int:
    """An integer field with its API default; unknown -> CannotTellError; nonsense -> default
    (the API server rejects it; schema rules report that)."""
    value = as_int(dig(raw, *path))
    if isinstance(value, Unknown):
        raise CannotTellError(f"{where} ({value.path})")
    return default if value is None else value


def template_at(raw: Any, path: tuple[str | int, ...], where: str) -> PodTemplate:
    """The pod template at ``path`` (an empty template when absent)."""
    value = dig(raw, *path)
    if isinstance(value, Unknown):
        raise CannotTellError(f"{where} ({value.path})")
    return PodTemplate(value if isinstance(value, dict) else {}, where)


def annotation_int(obj: KubeObject, key: str) -> int | None:
    """An integer annotation (None when absent or not an integer)."""
    raw = obj.annotations.get(key)
    if isinstance(raw, Unknown):
        raise CannotTellError(f"{obj.describe()} annotation {key}")
    try:
        return int(str(raw).strip()) if raw is not None else None
    except ValueError:
        return None


def with_container(template: PodTemplate, name: str, requests: dict[str, str]) -> PodTemplate:
    """``template`` with one more container requesting ``requests`` (a sidecar a scheduler counts)."""
    raw = dict(template.raw) if isinstance(template.raw, dict) else {}
    spec = dict(raw.get("spec") or {})
    containers = list(spec.get("containers") or [])
    containers.append({"name": name, "resources": {"requests": dict(requests)}})
    spec["containers"] = containers
    raw["spec"] = spec
    return PodTemplate(raw, template.path)
