"""workload.codeflare.dev/v1beta2 AppWrapper: one Kueue Workload of its components' pod sets.

Kueue (kubernetes-sigs/kueue v0.19.2 ``pkg/controller/jobs/appwrapper/appwrapper_controller.go``
``PodSets``): one pod set per entry of AppWrapper's ``GetComponentPodSpecs``, named
``<appwrapper>-<index>``, of ``Replicas(podSet)`` pods; the entries are each component's declared
``podSets``, else those AppWrapper infers for the wrapped kind (:mod:`.appwrapper_paths`).  So a
wrapped Job, JobSet, PyTorchJob, RayCluster, RayJob, Pod, Deployment or StatefulSet is quota'd,
covered and gang-admitted as one Workload; a wrapped kind AppWrapper cannot infer and that
declares no ``podSets`` brings no pods (and AppWrapper's webhook refuses an AppWrapper with none).
KAI: an AppWrapper is no kind KAI v0.17.0's podgrouper has a plugin for, so its pods fall to the
default grouper, ``MinAvailable: 1`` (``pkg/podgrouper/podgrouper/plugins/defaultgrouper/
default_grouper.go`` ``GetPodGroupMetadata``).
"""

from __future__ import annotations

from ...primitives.values import Unknown
from ..demand import CannotTellError, PodSet
from ..model.base import KubeObject
from ..model.workloads import PodTemplate
from .appwrapper_paths import UnreadableError, components, effective_pod_sets
from .base import Gang


def pod_sets(obj: KubeObject) -> list[PodSet]:
    """The Workload's pod sets, in component then pod-set order."""
    found = components(obj.spec)
    if isinstance(found, Unknown):
        raise CannotTellError(f"{obj.describe()} spec.components ({found.path})")
    out: list[PodSet] = []
    for component in found:
        if isinstance(component.template, Unknown):
            raise CannotTellError(f"{obj.describe()} {component.path}.template")
        try:
            resolved = effective_pod_sets(component)
        except UnreadableError as why:
            raise CannotTellError(f"{obj.describe()} {component.path} ({why.unknown.path})") from None
        for pod_set, template in resolved:
            path = f"{component.path}.template{pod_set.path[len('template') :]}"
            out.append(PodSet(f"{obj.name}-{len(out)}", pod_set.replicas, PodTemplate(template, path), path))
    return out


def kueue_gangs(obj: KubeObject) -> list[Gang]:
    return [Gang(obj, obj, tuple(pod_sets(obj)))]


def kai_gangs(obj: KubeObject) -> list[Gang]:
    sets = pod_sets(obj)
    return [Gang(obj, obj, (PodSet(sets[0].name, 1, sets[0].template, sets[0].path),))] if sets else []
