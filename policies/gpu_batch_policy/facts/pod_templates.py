"""Every pod template a stack declares, whatever object carries it.

GPU-sharing annotations and "no bypass" apply to pods, and pods come from many controllers:
KubeRay groups (the model's ``RayWorkload``), bare Pods, and the ``spec.template`` of the
built-in controllers (``apps/v1`` Deployment, StatefulSet, ReplicaSet, DaemonSet; ``batch/v1`` Job;
``batch/v1`` CronJob under ``spec.jobTemplate.spec.template``) -- the kinds Kueue's pod-based
integrations and KAI's podgrouper handle.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..primitives.values import Unknown, dig
from .model import KubeObject, RayWorkload, StackModel
from .model.workloads import PodTemplate

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


# KubeRay v1.7.0 common/job.go GetDefaultSubmitterContainer: the container KubeRay gives a
# RayJob's submitter Job when the RayJob has no spec.submitterPodTemplate.
_SUBMITTER_CONTAINER = "ray-job-submitter"


def _with_sidecar(workload: RayWorkload) -> PodTemplate:
    assert workload.head is not None
    raw = workload.head.template.raw
    if isinstance(raw, Unknown):
        return workload.head.template
    spec = dig(raw, "spec")
    spec = dict(spec) if isinstance(spec, dict) else {}
    containers = spec.get("containers")
    image = dig(spec, "containers", 0, "image")
    sidecar = {"name": _SUBMITTER_CONTAINER, "image": image}
    spec["containers"] = [*(containers if isinstance(containers, list) else []), sidecar]
    return _as_template({**raw, "spec": spec}, workload.head.template.path)


def ray_submitter_templates(model: StackModel) -> list[OwnedTemplate]:
    """The pod KubeRay creates to submit each RayJob in K8sJobMode (the CRD's default mode):
    ``spec.submitterPodTemplate`` when given, else KubeRay's default (kuberay v1.7.0
    ``ray-operator/controllers/ray/common/job.go`` ``GetSubmitterTemplate``: one container,
    ``ray-job-submitter``, with the head's image and no securityContext).  It lives in the
    RayJob's namespace, so its Pod Security level judges it like the Ray pods.  In SidecarMode
    KubeRay adds its default submitter container to the head pod instead (``rayjob_controller.go``
    ``getSubmitterContainer``, which ignores ``submitterPodTemplate``)."""
    out: list[OwnedTemplate] = []
    for workload in model.ray_workloads():
        if workload.kind != "RayJob":
            continue
        if workload.submission_mode == "SidecarMode" and workload.head is not None:
            # rayjob_controller.go getSubmitterContainer: KubeRay's default container, always,
            # added to the head pod (the pod Pod Security judges is the head with it).
            out.append(
                OwnedTemplate(workload, "head with KubeRay's submitter sidecar", _with_sidecar(workload))
            )
            continue
        if workload.submission_mode not in (None, "K8sJobMode"):
            continue
        given = dig(workload.obj.props, "spec", "submitterPodTemplate")
        if given is not None:
            out.append(OwnedTemplate(workload, "submitter", _as_template(given, "spec.submitterPodTemplate")))
            continue
        image = dig(workload.head.template.raw, "spec", "containers", 0, "image") if workload.head else None
        default = {
            "spec": {"restartPolicy": "Never", "containers": [{"name": _SUBMITTER_CONTAINER, "image": image}]}
        }
        out.append(OwnedTemplate(workload, "submitter (KubeRay's default)", _as_template(default, "")))
    return out
