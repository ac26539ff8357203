"""Every pod template a stack declares, whatever object carries it.

GPU-sharing annotations and "no bypass" apply to pods, and pods come from many controllers:
KubeRay groups (the model's ``RayWorkload``), bare Pods, and the ``spec.template`` of the
built-in controllers (``apps/v1`` Deployment, StatefulSet, ReplicaSet, DaemonSet; ``batch/v1`` Job;
``batch/v1`` CronJob under ``spec.jobTemplate.spec.template``) -- the kinds Kueue's pod-based
integrations and KAI's podgrouper handle.  The fit, KAI and scrape rules read these; the rules
that judge every pod of every kind (core validation, Pod Security) read the walker of every
kind, :func:`.workload_kinds.templates.every_template`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..primitives.values import Unknown, dig
from .model import KubeObject, RayWorkload, StackModel
from .model.workloads import PodTemplate
from .workload_kinds.templates import ray_submitters

_CONTROLLERS: dict[tuple[str, str], tuple[str, ...]] = {
    ("apps", "Deployment"): ("spec", "template"),
    ("apps", "StatefulSet"): ("spec", "template"),
    ("apps", "ReplicaSet"): ("spec", "template"),
    ("apps", "DaemonSet"): ("spec", "template"),
    ("batch", "Job"): ("spec", "template"),
    ("batch", "CronJob"): ("spec", "jobTemplate", "spec", "template"),
}


@dataclass(frozen=True)
class OwnedTemplate:
    """A pod template and the object (the subject of any finding) that declares it."""

    owner: KubeObject | RayWorkload
    name: str
    template: PodTemplate


def _as_template(raw: object, path: str) -> PodTemplate:
    return PodTemplate(raw if isinstance(raw, (dict, Unknown)) else {}, path)


def owned_templates(model: StackModel) -> list[OwnedTemplate]:
    """(owner, group name, template) for every pod template in the stack."""
    out: list[OwnedTemplate] = []
    for workload in model.ray_workloads():
        if isinstance(workload.cluster_spec, Unknown) or not workload.workers_known:
            continue
        out.extend(OwnedTemplate(workload, g.name, g.template) for g in workload.groups())
    for obj in model.objects:
        if obj.group == "" and obj.kind == "Pod":
            raw = {"metadata": obj.props.get("metadata"), "spec": obj.props.get("spec")}
            out.append(OwnedTemplate(obj, "pod", _as_template(raw, "")))
            continue
        path = _CONTROLLERS.get((obj.group, obj.kind))
        if path is not None:
            out.append(OwnedTemplate(obj, "pod", _as_template(dig(obj.props, *path), ".".join(path))))
    return out


def ray_submitter_templates(model: StackModel) -> list[OwnedTemplate]:
    """The pod KubeRay creates to submit each RayJob (:func:`.workload_kinds.templates.ray_submitters`)."""
    return [
        OwnedTemplate(t.owner, t.name, t.template)
        for workload in model.ray_workloads()
        for t in ray_submitters(workload)
    ]
