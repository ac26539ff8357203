"""A gang's pod sets as Kueue totals them: RuntimeClass overhead and LimitRange defaults filled in.

kubernetes-sigs/kueue v0.19.2 ``pkg/workload/resources.go`` ``AdjustResources`` runs before a
Workload's requests are totalled (``pkg/workload/workload.go`` ``totalRequestsFromPodSets``):

1. ``handlePodOverhead``: a pod set with ``runtimeClassName`` and no ``overhead`` gets the
   RuntimeClass's ``overhead.podFixed`` (the API server's RuntimeClass admission does the same to
   every pod: kubernetes v1.37.2 ``plugin/pkg/admission/runtimeclass/admission.go`` ``setOverhead``);
2. ``handlePodLimitRange``: the LimitRanges of the Workload's namespace, summarised
   (``pkg/util/limitrange/limitrange.go`` ``Summarize`` / ``addToSummary``: the first
   ``default`` / ``defaultRequest`` of each resource wins), give every container and init
   container the ``Container`` type's ``default`` limits and ``defaultRequest`` requests it lacks
   (``MergeResourceListKeepFirst``: the container's own values win) -- the LimitRanger admission
   plugin does the same to every pod;
3. ``handleLimitsToRequests``: a limit without a request counts as the request
   (``PodTemplate.request`` reads requests, else limits).

So a namespace LimitRange that defaults ``cpu`` counts against quota for containers that request
none.  A RuntimeClass or LimitRange the stack does not declare adds nothing the pack can know (an
undercount, never a false alarm); a pod-level ``Pod`` LimitRange is not applied.
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
Defaults = tuple[dict[str, Any], dict[str, Any]]  # (default limits, default requests)


def _pod_fixed(model: StackModel) -> dict[str, dict[str, Any]]:
    def build() -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for runtime_class in model.kube_objects(NODE_GROUP, "RuntimeClass"):
            fixed = dig(runtime_class.props, "overhead", "podFixed")
            if isinstance(fixed, dict) and fixed:
                out[runtime_class.name] = fixed
        return out

    return model.memo("workload_kinds.runtime_overhead", build)


def _limit_defaults(model: StackModel) -> dict[str, Defaults]:
    """Namespace -> the summarised ``Container`` defaults of its LimitRanges (``Summarize``)."""

    def build() -> dict[str, Defaults]:
        out: dict[str, Defaults] = {}
        ranges = sorted(model.kube_objects("", "LimitRange"), key=lambda r: r.name)
        for limit_range in ranges:
            if not isinstance(limit_range.namespace, str):
                continue
            limits, requests = out.setdefault(limit_range.namespace, ({}, {}))
            items = dig(limit_range.spec, "limits")
            for item in items if isinstance(items, list) else []:
                if dig(item, "type") != "Container":
                    continue
                for key, target in (("default", limits), ("defaultRequest", requests)):
                    found = dig(item, key)
                    for name, amount in found.items() if isinstance(found, dict) else ():
                        target.setdefault(name, amount)  # MergeResourceListKeepFirst
        return {ns: d for ns, d in out.items() if d[0] or d[1]}

    return model.memo("workload_kinds.limit_defaults", build)


def _defaulted(container: Any, defaults: Defaults) -> Any:
    if not isinstance(container, dict):
        return container
    resources = container.get("resources")
    resources = resources if isinstance(resources, dict) else {}
    limits = resources.get("limits")
    requests = resources.get("requests")
    merged = {
        **resources,
        "limits": {**defaults[0], **(limits if isinstance(limits, dict) else {})},
        "requests": {**defaults[1], **(requests if isinstance(requests, dict) else {})},
    }
    return {**container, "resources": merged}


def _adjusted(pod_set: PodSet, overheads: dict[str, dict[str, Any]], defaults: Defaults | None) -> PodSet:
    raw = pod_set.template.raw
    spec = dig(raw, "spec")
    if not isinstance(raw, dict) or not isinstance(spec, dict):
        return pod_set
    new = dict(spec)
    name = spec.get("runtimeClassName")
    if isinstance(name, str) and not spec.get("overhead") and name in overheads:
        new["overhead"] = dict(overheads[name])
    if defaults is not None:
        for key in ("containers", "initContainers"):
            containers = spec.get(key)
            if isinstance(containers, list):
                new[key] = [_defaulted(c, defaults) for c in containers]
    if new == spec:
        return pod_set
    return dataclasses.replace(pod_set, template=PodTemplate({**raw, "spec": new}, pod_set.template.path))


def adjust_resources(model: StackModel, gangs: tuple[Gang, ...]) -> tuple[Gang, ...]:
    """``gangs`` with overhead and LimitRange defaults filled in (``AdjustResources``)."""
    overheads = _pod_fixed(model)
    namespaces = _limit_defaults(model)
    if not overheads and not namespaces:
        return gangs
    out: list[Gang] = []
    for gang in gangs:
        namespace = gang.obj.namespace or "default"
        defaults = namespaces.get(namespace) if isinstance(namespace, str) else None
        out.append(
            Gang(gang.subject, gang.obj, tuple(_adjusted(p, overheads, defaults) for p in gang.pod_sets))
        )
    return tuple(out)
