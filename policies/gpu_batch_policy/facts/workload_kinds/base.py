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


def at_minimum(pod_sets: tuple[PodSet, ...] | list[PodSet]) -> tuple[PodSet, ...]:
    """The smallest gang Kueue tries when PartialAdmission is on: every pod set at its ``min_count``.

    kubernetes-sigs/kueue v0.19.2 ``pkg/scheduler/scheduler.go`` ``getInitialAssignments``: when the
    whole Workload neither fits nor can preempt, and ``features.PartialAdmission`` is on (Beta, on by
    default since 0.5: ``pkg/features/kube_features.go``) and ``wl.CanBePartiallyAdmitted()`` (some
    pod set has ``Count > MinCount``), ``flavorassigner.NewPodSetReducer`` ``Search`` tries counts
    between each pod set's ``MinCount`` and ``Count`` (``pkg/scheduler/flavorassigner/
    podset_reducer.go``: its deltas are ``Count - MinCount``), the least at every ``MinCount``.  So
    a gang that does not fit at its minimum never fits; one that does may be admitted shrunk."""
    return tuple(
        PodSet(p.name, p.min_count, p.template, p.path, p.min_count) if p.min_count is not None else p
        for p in pod_sets
    )


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
