"""Kubeflow Trainer v2.2.1's validating webhooks for TrainJob, TrainingRuntime and ClusterTrainingRuntime.

The stack installs no Trainer controller, so the version judged is the one Kueue v0.19.2's
``go.mod`` pins: ``github.com/kubeflow/trainer/v2 v2.2.1``.  Sources, kubeflow/trainer v2.2.1:

* ``pkg/webhooks/trainingruntime_webhook.go`` ``validateReplicatedJobs`` (both runtime kinds,
  ``clustertrainingruntime_webhook.go`` ``ValidateCreate`` calls it too): a replicated job labelled
  ``trainer.kubeflow.org/trainjob-ancestor-step`` with ``trainer``, ``model-initializer`` or
  ``dataset-initializer`` has ``replicas`` 1 (the CRD default) and a container named ``node``,
  ``model-initializer`` or ``dataset-initializer`` respectively.
* ``pkg/webhooks/trainjob_webhook.go`` ``ValidateCreate``: ``runtimeRef`` names a registered runtime
  kind (``TrainingRuntime`` or ``ClusterTrainingRuntime`` of ``trainer.kubeflow.org``, defaults of
  the CRD; ``pkg/runtime/core/registry.go``), else "unsupported runtime".  Then the runtime's
  ``ValidateObjects`` reads the runtime from the cluster (a runtime the program does not declare is
  "cannot check") and runs each plugin's ``Validate`` (``pkg/runtime/framework/plugins``):
  - ``jobset/jobset.go``: a TrainJob with ``initializer.dataset``/``initializer.model`` needs the
    runtime's ``dataset-initializer``/``model-initializer`` job holding a container of that name;
    each ``runtimePatches[].manager`` is a domain-prefixed path; a patch names only replicated jobs
    and (init)containers the runtime has, and sets no ``env`` on the ``node`` or initializer containers;
  - ``torch/torch.go`` (runtime ``mlPolicy.torch``): ``trainer.env`` holds none of ``PET_NNODES``,
    ``PET_NPROC_PER_NODE``, ``PET_NODE_RANK``, ``PET_MASTER_ADDR``, ``PET_MASTER_PORT``;
  - ``xgboost/xgboost.go`` (``mlPolicy.xgboost``): none of ``DMLC_TRACKER_URI``,
    ``DMLC_TRACKER_PORT``, ``DMLC_TASK_ID``, ``DMLC_NUM_WORKER``;
  - ``mpi/mpi.go`` (``mlPolicy.mpi``): ``trainer.numNodes`` >= 2 with ``runLauncherAsNode`` needs
    the runtime's ``launcher`` and ``node`` jobs;
  - ``flux/flux.go`` (``mlPolicy.flux``): ``numProcPerNode`` >= 1; no ``flux-installer``
    init container in the ``node`` job;
  - ``volcano/volcano.go`` (``podGroupPolicy.volcano``): the runtime template's
    ``scheduling.volcano.sh/queue-name`` annotation is not empty (whether a named PriorityClass
    exists is cluster state, judged by ``pod-priority-class-exists``);
  - ``jax/jax.go`` validates nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.demand import CannotTellError
from ...facts.model import StackModel
from ...facts.model.base import KubeObject
from ...facts.workload_kinds.trainjob import find_runtime
from .port import (
    ACCEPTS_DELETE,
    CANNOT,
    NOT_A_CHECK,
    REGISTERS,
    Finding,
    Judged,
    Problem,
    Unsure,
    Upstream,
    domain_prefixed_path_error,
    get,
    items,
    mapping,
    number,
    pod_containers,
    port_policy,
    text,
)

UPSTREAM = Upstream(
    project="Kubeflow Trainer",
    repo="kubeflow/trainer",
    ref="v2.2.1",
    version="v2.2.1",
    why="the version Kueue v0.19.2's go.mod pins; the stack installs no Trainer controller",
    files=(
        "pkg/webhooks/trainjob_webhook.go",
        "pkg/webhooks/trainingruntime_webhook.go",
        "pkg/webhooks/clustertrainingruntime_webhook.go",
    ),
)
GROUP = "trainer.kubeflow.org"
RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
DATASET, MODEL, NODE, LAUNCHER = "dataset-initializer", "model-initializer", "node", "launcher"
EXPECTED_CONTAINER = {"trainer": NODE, MODEL: MODEL, DATASET: DATASET}
TORCH_RESERVED = ("PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT")
XGBOOST_RESERVED = ("DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID", "DMLC_NUM_WORKER")
VOLCANO_QUEUE = "scheduling.volcano.sh/queue-name"
FLUX_INSTALLER = "flux-installer"


def validate_replicated_jobs(rjobs: list[Any]) -> list[Problem]:
    """``validateReplicatedJobs`` of a runtime's ``spec.template.spec.replicatedJobs``."""
    problems: list[Problem] = []
    for index, rjob in enumerate(rjobs):
        where = f"spec.template.spec.replicatedJobs[{index}]"
        ancestor = text(rjob, "template", "metadata", "labels", ANCESTOR_LABEL)
        if ancestor not in EXPECTED_CONTAINER:
            continue
        replicas = number(rjob, "replicas", default=1)
        if replicas != 1:
            problems.append(
                (f"{where}.replicas {replicas} (ancestor '{ancestor}') must always be 1", "set replicas: 1")
            )
        containers = items(rjob, "template", "spec", "template", "spec", "containers")
        wanted = EXPECTED_CONTAINER[ancestor]
        if not any(text(c, "name") == wanted for c in containers):
            problems.append(
                (
                    f"{where} (ancestor '{ancestor}') has no container named '{wanted}'",
                    f"name the job's main container '{wanted}'",
                )
            )
    return problems


def runtime_problems(obj: KubeObject) -> list[Finding]:
    return list(validate_replicated_jobs(items(obj.props, "spec", "template", "spec", "replicatedJobs")))


def _runtime_jobs(runtime: KubeObject) -> dict[str, set[str]]:
    """Replicated job name -> names of its init containers and containers."""
    out: dict[str, set[str]] = {}
    for rjob in items(runtime.props, "spec", "template", "spec", "replicatedJobs"):
        pod_spec = get(rjob, "template", "spec", "template", "spec")
        out[text(rjob, "name") or ""] = {text(c, "name") or "" for c in pod_containers(pod_spec)}
    return out


def _initializer_problems(spec: Any, jobs: dict[str, set[str]]) -> list[Problem]:
    problems: list[Problem] = []
    for key, job, config in (("dataset", DATASET, "datasetConfig"), ("model", MODEL, "modelConfig")):
        if get(spec, "initializer", key) is None:
            continue
        if job not in jobs:
            problems.append(
                (
                    f"its runtime has no {job} job, which spec.initializer.{key} ({config}) needs",
                    f"add a {job} job",
                )
            )
        elif job not in jobs[job]:
            problems.append(
                (f"its runtime's {job} job has no container named {job}", f"name that job's container {job}")
            )
    return problems


def patch_problems(spec: Any, jobs: dict[str, set[str]] | None) -> list[Problem]:
    """The ``runtimePatches`` part of the JobSet plugin's ``Validate``; ``jobs`` None: runtime unknown."""
    problems: list[Problem] = []
    reserved = (DATASET, MODEL, NODE)
    for index, patch in enumerate(items(spec, "runtimePatches")):
        where = f"spec.runtimePatches[{index}]"
        manager = text(patch, "manager") or ""
        error = domain_prefixed_path_error(manager)
        if error is not None:
            problems.append(
                (f"{where}.manager '{manager}' {error}", "name the patch's manager as example.com/tool")
            )
        if jobs is None:
            continue
        for rjob in items(patch, "trainingRuntimeSpec", "template", "spec", "replicatedJobs"):
            name = text(rjob, "name") or ""
            if name not in jobs:
                problems.append(
                    (
                        f"{where} patches replicated job '{name}', which the runtime lacks",
                        "patch existing jobs only",
                    )
                )
                continue
            pod = get(rjob, "template", "spec", "template", "spec")
            for kind, key in (("initContainer", "initContainers"), ("container", "containers")):
                for container in items(pod, key):
                    cname = text(container, "name") or ""
                    if cname not in jobs[name]:
                        problems.append(
                            (
                                f"{where} patches {kind} '{cname}', which runtime job '{name}' lacks",
                                "patch existing containers only",
                            )
                        )
                    elif key == "containers" and items(container, "env") and cname in reserved:
                        problems.append(
                            (
                                f"{where} sets env on the '{cname}' container",
                                "set env through spec.trainer or spec.initializer",
                            )
                        )
    return problems


def _reserved_env_problems(spec: Any, reserved: tuple[str, ...], runtime_kind: str) -> list[Problem]:
    found = sorted({text(e, "name") or "" for e in items(spec, "trainer", "env")} & set(reserved))
    if not found:
        return []
    return [
        (f"spec.trainer.env sets {found}, reserved by the {runtime_kind} runtime", "drop those variables")
    ]


def plugin_problems(spec: Any, runtime: KubeObject) -> list[Problem]:
    """The plugins' ``Validate`` with the runtime's ``mlPolicy`` and ``podGroupPolicy``."""
    jobs = _runtime_jobs(runtime)
    problems = _initializer_problems(spec, jobs) + patch_problems(spec, jobs)
    policy = mapping(runtime.props, "spec", "mlPolicy")
    trainer = get(spec, "trainer")
    if get(policy, "torch") is not None and trainer is not None:
        problems += _reserved_env_problems(spec, TORCH_RESERVED, "torch")
    if get(policy, "xgboost") is not None and trainer is not None:
        problems += _reserved_env_problems(spec, XGBOOST_RESERVED, "XGBoost")
    mpi = get(policy, "mpi")
    if isinstance(mpi, dict) and trainer is not None:
        nodes = number(spec, "trainer", "numNodes", default=1) or 1
        if nodes >= 2 and get(mpi, "runLauncherAsNode") is True and not {LAUNCHER, NODE} <= set(jobs):
            problems.append(
                (
                    f"spec.trainer.numNodes {nodes} with an MPI runtime that runs the launcher as a node but lacks "
                    "a launcher or node job",
                    "use numNodes: 1 or give the runtime both jobs",
                )
            )
    flux = get(policy, "flux")
    if isinstance(flux, dict):
        procs = number(flux, "numProcPerNode")
        if procs is not None and procs < 1:
            problems.append(
                (f"the runtime's flux numProcPerNode {procs} is below 1", "use numProcPerNode >= 1")
            )
        if FLUX_INSTALLER in jobs.get(NODE, set()):
            problems.append(
                (
                    f"the runtime's node job has an init container '{FLUX_INSTALLER}', which Flux reserves",
                    "rename it",
                )
            )
    if get(runtime.props, "spec", "podGroupPolicy", "volcano") is not None:
        queue = get(runtime.props, "spec", "template", "metadata", "annotations", VOLCANO_QUEUE)
        if queue == "":
            problems.append(
                (f"the runtime's annotation {VOLCANO_QUEUE} is empty", "name a Volcano queue or drop it")
            )
    return problems


def trainjob_problems(model: StackModel, obj: KubeObject) -> list[Finding]:
    """``ValidateCreate`` of a TrainJob."""
    spec = get(obj.props, "spec")
    if not isinstance(spec, dict):
        return []
    group = text(spec, "runtimeRef", "apiGroup") or GROUP
    kind = text(spec, "runtimeRef", "kind") or RUNTIME_KINDS[0]
    if group != GROUP or kind not in RUNTIME_KINDS:
        return [
            (
                f"spec.runtimeRef names an unsupported runtime: {kind}.{group}",
                f"use a {' or '.join(RUNTIME_KINDS)}",
            )
        ]
    try:
        runtime = find_runtime(model, obj)
    except CannotTellError as why:
        found: list[Finding] = [
            Unsure(f"the runtime it references ({why.what}; upstream reads it from the cluster)")
        ]
        return found + list(patch_problems(spec, None))
    return list(plugin_problems(spec, runtime))


COVERAGE: Mapping[str, str] = {
    # trainjob_webhook.go
    "setupWebhookForTrainJob": REGISTERS,
    "Default": NOT_A_CHECK + "stamps runtimePatches[].time; changes nothing the checks read",
    "ValidateCreate": "trainjob_problems",
    "ValidateUpdate": CANNOT + "TrainJob: compares with the stored object; runtimes: same checks as create",
    "ValidateDelete": ACCEPTS_DELETE,
    # trainingruntime_webhook.go / clustertrainingruntime_webhook.go
    "setupWebhookForTrainingRuntime": REGISTERS,
    "setupWebhookForClusterTrainingRuntime": REGISTERS,
    "validateReplicatedJobs": "validate_replicated_jobs",
}
"""Every function of the three webhook files at v2.2.1.  Of the plugins' ``Validate``: the JobSet
plugin's ``checkRuntimePatchesImmutability`` compares with the stored TrainJob (update only);
torch's ``validateTorchTune`` (TrainJobs whose command is ``tune run``: supported models, node and
process counts per recipe) is not ported; Volcano's PriorityClass lookup is cluster state."""
PLUGIN_COVERAGE: Mapping[str, str] = {
    "pkg/runtime/framework/plugins/jobset/jobset.go": "plugin_problems",
    "pkg/runtime/framework/plugins/torch/torch.go": "plugin_problems",
    "pkg/runtime/framework/plugins/xgboost/xgboost.go": "plugin_problems",
    "pkg/runtime/framework/plugins/mpi/mpi.go": "plugin_problems",
    "pkg/runtime/framework/plugins/flux/flux.go": "plugin_problems",
    "pkg/runtime/framework/plugins/volcano/volcano.go": "plugin_problems",
    "pkg/runtime/framework/plugins/jax/jax.go": NOT_A_CHECK + "its Validate returns nothing",
}
"""Every file under ``pkg/runtime/framework/plugins`` that defines a ``Validate`` method at v2.2.1."""


POLICIES: list[Policy] = [
    port_policy(
        "trainer-webhook",
        "TrainJobs and training runtimes pass Kubeflow Trainer v2.2.1's webhooks (the version Kueue v0.19.2 "
        "pins): ancestor jobs of 1 replica with their named container, a supported runtimeRef, and the "
        "runtime plugins' checks (initializers, runtime patches, reserved env vars, MPI and Flux settings).",
        UPSTREAM,
        GROUP,
        Judged(
            RUNTIME_KINDS, runtime_problems, "pkg/webhooks/trainingruntime_webhook.go validateReplicatedJobs"
        ),
        Judged(
            ("TrainJob",),
            trainjob_problems,
            "pkg/webhooks/trainjob_webhook.go ValidateCreate and the runtime plugins' Validate",
            needs_model=True,
        ),
    ),
]
