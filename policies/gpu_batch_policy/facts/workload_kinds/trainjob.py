"""trainer.kubeflow.org/v1alpha1 TrainJob: the pod sets of the JobSet its training runtime builds.

Kueue (kubernetes-sigs/kueue v0.19.2 ``pkg/controller/jobs/trainjob/trainjob_controller.go``):
``PodSets`` -> ``podSets`` -> ``getChildJobSet``, then the JobSet integration's ``PodSets`` over
that child.  ``getChildJobSet`` looks the runtime up by ``spec.runtimeRef`` (``getRuntimeSpec``:
a ClusterTrainingRuntime by name, a TrainingRuntime by name in the TrainJob's namespace; any other
group/kind is "unsupported runtime"), asks Kubeflow Trainer for its ``RuntimeInfo`` and sets every
replicatedJob's ``parallelism`` and ``completions`` to its pod set's ``Count``.  So each
replicatedJob is one Kueue pod set of ``replicas`` (default 1) x ``Count`` pods.

``Count``, from kubeflow/trainer v2.2.1 (the version Kueue v0.19.2's go.mod requires):
- ``pkg/runtime/core/trainingruntime.go`` ``newRuntimeInfo``: the replicatedJob's ``parallelism``
  (default 1); for the job labelled ``trainer.kubeflow.org/trainjob-ancestor-step: trainer`` when
  the runtime has an ``mlPolicy``, ``mlPolicy.numNodes`` (default 1); ``runtime.WithPodSet``
  stores ``max(count, 1)`` (``pkg/runtime/runtime.go``).
- ``EnforceMLPolicy`` of the plugins (``pkg/runtime/framework/plugins/{plainml,torch,jax,xgboost,
  mpi}``): the TrainJob's ``spec.trainer.numNodes`` replaces the first trainer-ancestor pod set's
  count (``Info.FindPodSetByAncestor``); with an MPI policy it replaces the pod set named ``node``
  instead, less one for the launcher when ``runLauncherAsNode`` (``max(numNodes-1, 1)``).
- ``pkg/runtime/framework/plugins/jobset/builder.go`` ``Trainer``: ``spec.trainer.resourcesPerNode``
  (when it has requests or limits) becomes the resources of the container named ``node`` in every
  trainer-ancestor job (and in the ``node`` job of an MPI runtime with ``runLauncherAsNode``).

The TrainJob's ``runtimePatches`` are merged into the runtime's replicatedJobs first
(``mergeRuntimePatches``, :mod:`.trainjob_patch`).  A runtime the program does not declare or an
unsupported ``runtimeRef`` is "cannot check", never a pass.

KAI (kai-scheduler/KAI-Scheduler v0.17.0 ``pkg/podgrouper/podgrouper/hub/hub.go``): TrainJob is a
``skipTopOwnerGrouper``: the child JobSet's grouper decides (:mod:`.jobset`).  That JobSet carries
the runtime template's annotations and those of the runtime patches (``newRuntimeInfo``
propagation; trainer ``pkg/runtime/framework/plugins/jobset/jobset.go`` ``Build``
``WithAnnotations(info.Annotations)``), so ``kai.scheduler/batch-min-member`` set there counts.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from ...primitives.values import Unknown, as_int, as_str, dig
from ..demand import CannotTellError, PodSet
from ..model import StackModel
from ..model.base import KubeObject
from ..model.workloads import PodTemplate
from . import jobset
from .base import Gang
from .trainjob_patch import apply_runtime_patches

GROUP = "trainer.kubeflow.org"
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"  # constants.LabelTrainJobAncestor
ANCESTOR_TRAINER = "trainer"  # constants.AncestorTrainer
NODE = "node"  # constants.Node: the trainer container and the MPI node job
RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")


def _known(value: Any, where: str) -> Any:
    if isinstance(value, Unknown):
        raise CannotTellError(f"{where} ({value.path})")
    return value


def find_runtime(model: StackModel, trainjob: KubeObject) -> KubeObject:
    """The runtime ``spec.runtimeRef`` names (``getRuntimeSpec``); CannotTellError when it is not
    in the program, or the reference is unsupported or unknown."""
    ref = dig(trainjob.spec, "runtimeRef")
    where = f"{trainjob.describe()} spec.runtimeRef"
    name = _known(as_str(dig(ref, "name")), f"{where}.name")
    group = _known(as_str(dig(ref, "apiGroup")), f"{where}.apiGroup") or GROUP  # kubebuilder default
    kind = _known(as_str(dig(ref, "kind")), f"{where}.kind") or RUNTIME_KINDS[0]  # kubebuilder default
    if group != GROUP or kind not in RUNTIME_KINDS:
        raise CannotTellError(f"{where}: unsupported runtime {kind}.{group}")
    if not name:
        raise CannotTellError(f"{where}.name is empty")
    for runtime in model.kube_objects(GROUP, kind):
        same_ns = kind == RUNTIME_KINDS[0] or runtime.namespace == trainjob.namespace
        if runtime.name == name and same_ns:
            return runtime
    scope = "" if kind == RUNTIME_KINDS[0] else f" in namespace {trainjob.namespace}"
    raise CannotTellError(
        f"its runtime {kind} {name!r}{scope} (spec.runtimeRef) is not in the program, so its pods "
        "(the JobSet that runtime builds) cannot be counted"
    )


def _counts(trainjob: KubeObject, runtime: KubeObject, jobs: list[Any]) -> list[int]:
    """Each replicatedJob's ``Count`` after ``newRuntimeInfo`` and the plugins' ``EnforceMLPolicy``."""
    ml_policy = _known(dig(runtime.spec, "mlPolicy"), f"{runtime.describe()} spec.mlPolicy")
    where = f"{runtime.describe()} spec.template.spec.replicatedJobs"
    counts: list[int] = []
    for index, job in enumerate(jobs):
        count = _known(as_int(dig(job, "template", "spec", "parallelism")), f"{where}[{index}] parallelism")
        count = 1 if count is None else count
        if _ancestor(job, f"{where}[{index}]") == ANCESTOR_TRAINER and isinstance(ml_policy, dict):
            nodes = _known(as_int(dig(ml_policy, "numNodes")), f"{runtime.describe()} spec.mlPolicy.numNodes")
            count = 1 if nodes is None else nodes
        counts.append(max(count, 1))
    nodes = _known(
        as_int(dig(trainjob.spec, "trainer", "numNodes")), f"{trainjob.describe()} spec.trainer.numNodes"
    )
    if nodes is None:
        return counts
    if dig(ml_policy, "mpi") is not None:
        names = [dig(job, "name") for job in jobs]
        if NODE in names:
            counts[names.index(NODE)] = max(nodes - 1, 1) if _launcher_as_node(runtime) else nodes
        return counts
    for index, job in enumerate(jobs):
        if _ancestor(job, f"{where}[{index}]") == ANCESTOR_TRAINER:
            counts[index] = nodes
            break
    return counts


def _ancestor(job: Any, where: str) -> Any:
    return _known(
        dig(job, "template", "metadata", "labels", ANCESTOR_LABEL), f"{where} label {ANCESTOR_LABEL}"
    )


def _launcher_as_node(runtime: KubeObject) -> bool:
    value = _known(
        dig(runtime.spec, "mlPolicy", "mpi", "runLauncherAsNode"), f"{runtime.describe()} runLauncherAsNode"
    )
    return value is True


def _with_resources(job: Any, resources: dict[str, Any]) -> Any:
    """The job with ``resourcesPerNode`` as the ``node`` container's resources (builder ``Trainer``)."""
    out = copy.deepcopy(job)
    for container in dig(out, "template", "spec", "template", "spec", "containers") or []:
        if isinstance(container, dict) and container.get("name") == NODE:
            container["resources"] = {k: v for k, v in resources.items() if k in ("limits", "requests")}
            break
    return out


def child_jobset(model: StackModel, trainjob: KubeObject) -> tuple[KubeObject, KubeObject]:
    """(the JobSet ``getChildJobSet`` builds, as a view of the TrainJob; the runtime it came from)."""
    runtime = find_runtime(model, trainjob)
    raw_jobs = _known(
        dig(runtime.spec, "template", "spec", "replicatedJobs"),
        f"{runtime.describe()} spec.template.spec.replicatedJobs",
    )
    jobs = apply_runtime_patches(
        [j for j in raw_jobs if isinstance(j, dict)] if isinstance(raw_jobs, list) else [],
        dig(trainjob.spec, "runtimePatches"),
        f"{trainjob.describe()} spec.runtimePatches",
    )
    resources = _known(
        dig(trainjob.spec, "trainer", "resourcesPerNode"),
        f"{trainjob.describe()} spec.trainer.resourcesPerNode",
    )
    launcher_as_node = dig(runtime.spec, "mlPolicy", "mpi") is not None and _launcher_as_node(runtime)
    child: list[Any] = []
    sized = isinstance(resources, dict) and bool(resources.get("limits") or resources.get("requests"))
    for index, (job, count) in enumerate(zip(jobs, _counts(trainjob, runtime, jobs), strict=True)):
        trainer = _ancestor(job, f"replicatedJobs[{index}]") == ANCESTOR_TRAINER
        if sized and (trainer or (launcher_as_node and job.get("name") == NODE)):
            built = _with_resources(job, resources)
        else:
            built = copy.deepcopy(job)
        template = _known(built.get("template"), f"{runtime.describe()} replicatedJobs[{index}].template")
        built["template"] = template = dict(template) if isinstance(template, dict) else {}
        spec = _known(template.get("spec"), f"{runtime.describe()} replicatedJobs[{index}].template.spec")
        template["spec"] = spec = dict(spec) if isinstance(spec, dict) else {}
        spec["parallelism"] = spec["completions"] = count  # getChildJobSet: both = Count
        child.append(built)
    view = dataclasses.replace(
        trainjob,
        props={"spec": {**_mapping(dig(runtime.spec, "template", "spec")), "replicatedJobs": child}},
        annotations=_jobset_annotations(trainjob, runtime),
    )
    return view, runtime


def _mapping(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


def _jobset_annotations(trainjob: KubeObject, runtime: KubeObject) -> dict[str, Any]:
    """``newRuntimeInfo``'s propagated annotations: the runtime template's, then each runtime
    patch's ``trainingRuntimeSpec.template.metadata.annotations`` (the child JobSet carries them)."""
    out: dict[str, Any] = {}
    sources = [dig(runtime.spec, "template", "metadata", "annotations")]
    patches = dig(trainjob.spec, "runtimePatches")
    for patch in patches if isinstance(patches, list) else []:
        sources.append(dig(patch, "trainingRuntimeSpec", "template", "metadata", "annotations"))
    for source in sources:
        if isinstance(source, dict):
            out.update(source)
    return out


def _rehome(trainjob: KubeObject, runtime: KubeObject, gangs: list[Gang]) -> list[Gang]:
    """The child JobSet's gangs, owned by the TrainJob, with paths into the runtime."""
    prefix = f"{runtime.kind}/{runtime.name} spec.template."

    def moved(p: PodSet) -> PodSet:
        template = PodTemplate(p.template.raw, prefix + p.template.path)
        return PodSet(p.name, p.count, template, prefix + p.path)

    return [Gang(trainjob, trainjob, tuple(moved(p) for p in g.pod_sets)) for g in gangs]


def kueue_gangs(model: StackModel, trainjob: KubeObject) -> list[Gang]:
    view, runtime = child_jobset(model, trainjob)
    return _rehome(trainjob, runtime, jobset.kueue_gangs(view))


def kai_gangs(model: StackModel, trainjob: KubeObject) -> list[Gang]:
    view, runtime = child_jobset(model, trainjob)
    return _rehome(trainjob, runtime, jobset.kai_gangs(view))
