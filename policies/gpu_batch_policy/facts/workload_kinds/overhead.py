"""A pod set's ``spec.overhead`` from its RuntimeClass, as Kueue (and the API server) fill it in.

kubernetes-sigs/kueue v0.19.2 ``pkg/workload/resources.go`` ``handlePodOverhead`` (called by
``AdjustResources`` before a Workload's requests are totalled): a pod set with
``runtimeClassName`` and no ``overhead`` gets the RuntimeClass's ``overhead.podFixed``; the API
server's RuntimeClass admission plugin does the same to every pod
(kubernetes v1.37.2 ``plugin/pkg/admission/runtimeclass/admission.go`` ``setOverhead``).  So a
gang's quota need includes it (``PodTemplate.request`` adds ``spec.overhead``).  A RuntimeClass
the stack does not declare adds nothing the pack can know.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ...primitives.values import dig
from ..demand import PodSet
from ..model import StackModel
from ..model.workloads import PodTemplate
from .base import Gang

NODE_GROUP = "node.k8s.io"


def _pod_fixed(model: StackModel) -> dict[str, dict[str, Any]]:
    def build() -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for runtime_class in model.kube_objects(NODE_GROUP, "RuntimeClass"):
            fixed = dig(runtime_class.props, "overhead", "podFixed")
            if isinstance(fixed, dict) and fixed:
                out[runtime_class.name] = fixed
        return out

    return model.memo("workload_kinds.runtime_overhead", build)


def _with_overhead(pod_set: PodSet, overheads: dict[str, dict[str, Any]]) -> PodSet:
    raw = pod_set.template.raw
    spec = dig(raw, "spec")
    name = dig(spec, "runtimeClassName")
    if not isinstance(raw, dict) or not isinstance(spec, dict) or not isinstance(name, str):
        return pod_set
    if spec.get("overhead") or name not in overheads:
        return pod_set
    template = PodTemplate(
        {**raw, "spec": {**spec, "overhead": dict(overheads[name])}}, pod_set.template.path
    )
    return dataclasses.replace(pod_set, template=template)


def with_runtime_overhead(model: StackModel, gangs: tuple[Gang, ...]) -> tuple[Gang, ...]:
    """``gangs`` with each pod set's RuntimeClass overhead filled in (``handlePodOverhead``)."""
    overheads = _pod_fixed(model)
    if not overheads:
        return gangs
    return tuple(
        Gang(g.subject, g.obj, tuple(_with_overhead(p, overheads) for p in g.pod_sets)) for g in gangs
    )
