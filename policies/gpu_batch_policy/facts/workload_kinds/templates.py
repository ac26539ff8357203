"""Every pod template of every workload kind: the one walker the pod-level rules read (issue 42 item 2).

Why one walker: the API server validates the pods every controller creates, and PodSecurity
admits or refuses each of them, whatever kind carried the template.  Before this walker the pod
rules knew Pods, the built-in controllers and Ray (``facts.pod_templates.owned_templates``); a
JobSet's, LeaderWorkerSet's, MPIJob's or TrainJob's pods went unjudged.

Where each kind keeps its templates is :data:`WALKERS`, keyed by (API group, kind); a test keeps
it a superset of :data:`.registry.INTEGRATIONS` (every kind Kueue v0.19.2 registers), plus the
kinds that carry templates without being a Kueue integration (ReplicaSet, DaemonSet, CronJob,
Kubeflow Trainer's TrainingRuntime and ClusterTrainingRuntime).  The paths are those the family
modules count pod sets from (:mod:`.jobset`, :mod:`.kubeflow`, :mod:`.leaderworkerset`,
:mod:`.trainjob`, :mod:`.appwrapper`, :mod:`.spark`), except that every replica type of a Kubeflow
job is walked, not only those Kueue orders into pod sets.

``Owner`` says what the template's owner requires of ``restartPolicy``: a template a Job is made
from (Job, CronJob, each replicatedJob of a JobSet or training runtime) is ``"job"``; Deployment,
StatefulSet, ReplicaSet, DaemonSet and LeaderWorkerSet (its StatefulSets) templates are
``"always"``; the rest ``"pod"``.  JobSet's
mutating webhook sets an unset one to ``OnFailure`` first (``restart_default``).

A template that cannot be read before apply (an unknown list, a TrainJob whose runtime the program
does not declare) is returned as a :class:`Skipped` with the reason, so a rule says "cannot check"
rather than passing it in silence.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ...primitives.values import Unknown, as_str, dig
from ..demand import CannotTellError
from ..model import KubeObject, RayWorkload, StackModel
from ..model.workloads import PodTemplate
from ..schema.pod_spec import Owner
from . import appwrapper, kubeflow, spark, trainjob


@dataclass(frozen=True)
class Template:
    """One pod template, the object a finding names, and what its owner makes of it."""

    owner: KubeObject | RayWorkload
    name: str  # a reader's name: "spec.replicatedJobs[0] (workers)"
    template: PodTemplate
    makes: Owner = "pod"
    synthesized: bool = False  # the pack's model of a pod the controller builds (Spark)
    default: bool = False  # a template the controller writes itself (KubeRay's default submitter)
    inherited: bool = False  # a TrainJob's template unchanged from its runtime's (judged there too)
    restart_default: str = ""  # what a mutating webhook sets an unset restartPolicy to


@dataclass(frozen=True)
class Skipped:
    """An object whose templates cannot be read before apply, and why."""

    owner: KubeObject | RayWorkload
    why: str


Found = Template | Skipped
Walker = Callable[[StackModel, KubeObject], Iterator[Found]]


def _path(path: tuple[str | int, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def _at(
    obj: KubeObject,
    path: tuple[str | int, ...],
    makes: Owner = "pod",
    name: str = "",
    restart_default: str = "",
) -> Iterator[Found]:
    raw = dig(obj.props, *path)
    where = _path(path)
    if isinstance(raw, Unknown):
        yield Skipped(obj, f"{where} is unknown until apply")
    elif isinstance(raw, dict):
        yield Template(obj, name or where, PodTemplate(raw, where), makes, restart_default=restart_default)


def _controller(makes: Owner, *path: str) -> Walker:
    def walk(_model: StackModel, obj: KubeObject) -> Iterator[Found]:
        yield from _at(obj, path, makes)

    return walk


def _pod(_model: StackModel, obj: KubeObject) -> Iterator[Found]:
    raw = {"metadata": obj.props.get("metadata"), "spec": obj.props.get("spec")}
    yield Template(obj, "pod", PodTemplate(raw, ""))


# kubernetes-sigs/jobset v0.12.0 (the version Kueue v0.19.2's go.mod requires)
# pkg/webhooks/jobset_webhook.go jobSetWebhook.Default: an unset restartPolicy of a replicated
# Job's pods becomes OnFailure before validation.  A training runtime's Jobs are a JobSet's too.
JOBSET_RESTART_DEFAULT = "OnFailure"


def _replicated_jobs(obj: KubeObject, base: tuple[str, ...], label: str = "") -> Iterator[Found]:
    jobs = dig(obj.props, *base, "replicatedJobs")
    where = ".".join((*base, "replicatedJobs"))
    if isinstance(jobs, Unknown):
        yield Skipped(obj, f"{where} is unknown until apply")
        return
    for index, job in enumerate(jobs if isinstance(jobs, list) else []):
        name = as_str(dig(job, "name"))
        shown = f"{label}{where}[{index}]" + (f" ({name})" if isinstance(name, str) else "")
        path: tuple[str | int, ...] = (*base, "replicatedJobs", index, "template", "spec", "template")
        yield from _at(obj, path, "job", shown, JOBSET_RESTART_DEFAULT)


def _jobset(_model: StackModel, obj: KubeObject) -> Iterator[Found]:
    yield from _replicated_jobs(obj, ("spec",))


def _runtime(_model: StackModel, obj: KubeObject) -> Iterator[Found]:
    yield from _replicated_jobs(obj, ("spec", "template", "spec"))


_JOB_INDEX = re.compile(r"spec\.replicatedJobs\[(\d+)\]")


def _trainjob(model: StackModel, obj: KubeObject) -> Iterator[Found]:
    """The child JobSet's templates; those the TrainJob leaves as the runtime has them
    (no ``resourcesPerNode`` or ``runtimePatches`` for them) are ``inherited``: their pods run
    in the TrainJob's namespace (so Pod Security judges them here), while their validity is the
    runtime's own."""
    try:
        child, runtime = trainjob.child_jobset(model, obj)
    except CannotTellError as why:
        yield Skipped(obj, f"its pods come from its training runtime: {why.what}")
        return
    original = dig(runtime.spec, "template", "spec", "replicatedJobs")
    for found in _replicated_jobs(child, ("spec",), "the child JobSet's "):
        if isinstance(found, Skipped):
            yield Skipped(obj, found.why)
            continue
        index = _JOB_INDEX.match(found.template.path)
        before = dig(original, int(index.group(1)), "template", "spec", "template") if index else None
        yield Template(
            obj,
            found.name,
            found.template,
            "job",
            inherited=before == found.template.raw,
            restart_default=JOBSET_RESTART_DEFAULT,
        )


def _kubeflow(_model: StackModel, obj: KubeObject) -> Iterator[Found]:
    key = kubeflow.REPLICA_SPECS[obj.kind]
    specs = dig(obj.spec, key)
    if isinstance(specs, Unknown):
        yield Skipped(obj, f"spec.{key} is unknown until apply")
        return
    for role in specs if isinstance(specs, dict) else {}:
        yield from _at(obj, ("spec", key, role, "template"))


def _lws(_model: StackModel, obj: KubeObject) -> Iterator[Found]:
    """Both templates become StatefulSets (sigs.k8s.io/lws v0.9.0, the version Kueue v0.19.2's
    go.mod requires: ``pkg/controllers/leaderworkerset_controller.go``
    ``constructLeaderStatefulSetApplyConfiguration``, ``pkg/controllers/pod_controller.go``
    ``constructWorkerStatefulSetApplyConfiguration``), so their pods need ``restartPolicy: Always``."""
    for role in ("leaderTemplate", "workerTemplate"):
        yield from _at(obj, ("spec", "leaderWorkerTemplate", role), "always")


def _counted(obj: KubeObject, build: Callable[[], list[Any]], synthesized: bool) -> Iterator[Found]:
    try:
        pod_sets = build()
    except CannotTellError as why:
        yield Skipped(obj, why.what)
        return
    for pod_set in pod_sets:
        yield Template(obj, f"{pod_set.path} ({pod_set.name})", pod_set.template, "pod", synthesized)


def _appwrapper(_model: StackModel, obj: KubeObject) -> Iterator[Found]:
    yield from _counted(obj, lambda: appwrapper.pod_sets(obj), False)


def _spark(_model: StackModel, obj: KubeObject) -> Iterator[Found]:
    yield from _counted(obj, lambda: spark.pod_sets(obj), True)


def _ray(_model: StackModel, _obj: KubeObject) -> Iterator[Found]:
    return iter(())  # walked over model.ray_workloads() in :func:`every_template`


TRAINER = trainjob.GROUP
WALKERS: dict[tuple[str, str], Walker] = {
    ("", "Pod"): _pod,
    ("", "PodTemplate"): _controller("pod", "template"),  # ValidatePodTemplate -> ValidatePodTemplateSpec
    ("batch", "Job"): _controller("job", "spec", "template"),
    ("batch", "CronJob"): _controller("job", "spec", "jobTemplate", "spec", "template"),
    ("apps", "Deployment"): _controller("always", "spec", "template"),
    ("apps", "StatefulSet"): _controller("always", "spec", "template"),
    ("apps", "ReplicaSet"): _controller("always", "spec", "template"),
    ("apps", "DaemonSet"): _controller("always", "spec", "template"),
    ("jobset.x-k8s.io", "JobSet"): _jobset,
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): _lws,
    (TRAINER, "TrainJob"): _trainjob,
    (TRAINER, "TrainingRuntime"): _runtime,
    (TRAINER, "ClusterTrainingRuntime"): _runtime,
    ("workload.codeflare.dev", "AppWrapper"): _appwrapper,
    ("sparkoperator.k8s.io", "SparkApplication"): _spark,
    ("ray.io", "RayJob"): _ray,
    ("ray.io", "RayCluster"): _ray,
    ("ray.io", "RayService"): _ray,
    **{("kubeflow.org", kind): _kubeflow for kind in kubeflow.REPLICA_SPECS},
}


# KubeRay v1.7.0 common/job.go GetDefaultSubmitterContainer: the container KubeRay gives a
# RayJob's submitter Job when the RayJob has no spec.submitterPodTemplate.
SUBMITTER_CONTAINER = "ray-job-submitter"


def _with_sidecar(workload: RayWorkload) -> PodTemplate:
    assert workload.head is not None
    raw = workload.head.template.raw
    if isinstance(raw, Unknown):
        return workload.head.template
    spec = dig(raw, "spec")
    spec = dict(spec) if isinstance(spec, dict) else {}
    containers = spec.get("containers")
    image = dig(spec, "containers", 0, "image")
    sidecar = {"name": SUBMITTER_CONTAINER, "image": image}
    spec["containers"] = [*(containers if isinstance(containers, list) else []), sidecar]
    return PodTemplate({**raw, "spec": spec}, workload.head.template.path)


def ray_submitters(workload: RayWorkload) -> Iterator[Template]:
    """The pod KubeRay creates to submit a RayJob in K8sJobMode (the CRD's default mode):
    ``spec.submitterPodTemplate`` when given, else KubeRay's default (kuberay v1.7.0
    ``ray-operator/controllers/ray/common/job.go`` ``GetSubmitterTemplate``: one container,
    ``ray-job-submitter``, with the head's image and no securityContext).  In SidecarMode KubeRay
    adds its default submitter container to the head pod instead (``rayjob_controller.go``
    ``getSubmitterContainer``, which ignores ``submitterPodTemplate``)."""
    if workload.kind != "RayJob":
        return
    if workload.submission_mode == "SidecarMode" and workload.head is not None:
        yield Template(
            workload, "head with KubeRay's submitter sidecar", _with_sidecar(workload), default=True
        )
        return
    if workload.submission_mode not in (None, "K8sJobMode"):
        return
    given = dig(workload.obj.props, "spec", "submitterPodTemplate")
    if given is not None:
        raw = given if isinstance(given, (dict, Unknown)) else {}
        yield Template(workload, "submitter", PodTemplate(raw, "spec.submitterPodTemplate"), "job")
        return
    image = dig(workload.head.template.raw, "spec", "containers", 0, "image") if workload.head else None
    default = {
        "spec": {"restartPolicy": "Never", "containers": [{"name": SUBMITTER_CONTAINER, "image": image}]}
    }
    yield Template(workload, "submitter (KubeRay's default)", PodTemplate(default, ""), "job", default=True)


def _ray_templates(model: StackModel) -> Iterator[Found]:
    for workload in model.ray_workloads():
        if isinstance(workload.cluster_spec, Unknown) or not workload.workers_known:
            yield Skipped(workload, "its Ray cluster spec or worker groups are unknown until apply")
            continue
        for group in workload.groups():
            yield Template(workload, group.name, group.template)
        yield from ray_submitters(workload)


def every_template(model: StackModel) -> list[Found]:
    """Every pod template the stack declares or a chart renders, in model order (Ray first)."""

    def build() -> list[Found]:
        out: list[Found] = list(_ray_templates(model))
        for obj in model.objects:
            walker = WALKERS.get((obj.group, obj.kind))
            if walker is not None:
                out.extend(walker(model, obj))
        return out

    return model.memo("workload_kinds.templates", build)
