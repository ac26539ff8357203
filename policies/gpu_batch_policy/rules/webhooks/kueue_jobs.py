"""Kueue v0.19.2's job webhooks: the labels and annotations they refuse on any workload kind.

Kueue registers a validating webhook for every integration its Configuration enables (the 0.19.2
chart: batch Job, MPIJob, RayJob/RayService/RayCluster, JobSet, AppWrapper, TrainJob, Pod,
Deployment, StatefulSet, LeaderWorkerSet; Kubeflow training jobs when listed).  The chart's
``ValidatingWebhookConfiguration`` covers the namespaces ``managedJobsNamespaceSelector`` selects
(default: all but ``kube-system`` and Kueue's own; :func:`.kueue_scope.webhooks_cover`), objects
managed by Kueue or not, and the webhooks
fail closed: an object they refuse is never created.  All sources kubernetes-sigs/kueue v0.19.2:

* ``pkg/controller/jobframework/validation.go`` ``ValidateJobOnCreate``, run by Job, JobSet,
  MPIJob, Kubeflow jobs, TrainJob, AppWrapper (``base_webhook.go``), the Ray webhooks and the Pod
  webhook:

  - ``ValidateQueueName``: label ``kueue.x-k8s.io/queue-name`` is a DNS-1123 subdomain
    (``ValidateLabelAsCRDName``) -- also Deployment, StatefulSet, LeaderWorkerSet;
  - ``validateCreateForMaxExecTime``: label ``kueue.x-k8s.io/max-exec-time-seconds`` parses as an
    integer (``strconv.Atoi``) greater than 0;
  - ``validateCreateForPrebuiltWorkload``: the prebuilt-workload name (annotation
    ``kueue.x-k8s.io/prebuilt-workload-name`` when set, as the ``WorkloadIdentifierAnnotations`` gate
    is on by default, else the label) is a DNS-1123 subdomain, and the kind is in
    ``supportedPrebuiltWlJobGVKs``;
  - ``ValidateElasticJobAnnotation``: ``kueue.x-k8s.io/elastic-job: "true"`` (with the
    ``ElasticJobsViaWorkloadSlices`` gate, on by default) only on batch Job, RayCluster, RayJob,
    RayService (``supportedElasticJobGVKs``) -- also Deployment, StatefulSet, LeaderWorkerSet.

* ``pkg/controller/jobs/job/job_webhook.go`` ``validatePartialAdmissionCreate``: annotation
  ``kueue.x-k8s.io/job-min-parallelism`` is an integer in ``(0, podsCount)`` (``podsCount`` =
  parallelism, capped by completions: ``job_controller.go`` ``podsCount``) and not on an elastic
  job; ``validateSyncCompletionCreate``: ``kueue.x-k8s.io/job-completions-equal-parallelism`` is a
  Go bool, and when true the Job is Indexed with ``completions == parallelism``.

* ``pkg/controller/jobs/pod/pod_webhook.go`` ``validateCommon``: label ``kueue.x-k8s.io/managed``
  is only ever ``"true"`` (``validateManagedLabel``); a pod-group name (annotation or label
  ``kueue.x-k8s.io/pod-group-name``) and ``kueue.x-k8s.io/pod-group-total-count`` come together,
  the name is a DNS-1123 subdomain and the count an integer >= 1 (``validatePodGroupMetadata``,
  ``pod_controller.go`` ``groupTotalCount``); a prebuilt workload equals the group name
  (``validatePrebuiltWorkloadName``).

* ``pkg/controller/jobs/leaderworkerset/leaderworkerset_webhook.go`` ``validateReplicasField``:
  ``spec.replicas`` (default 1) between 0 and ``maxLeaderWorkerSetReplicas`` = 1,000,000
  (``leaderworkerset_controller.go`` ``validateLeaderWorkerSetReplicaCount``).

* ``pkg/controller/jobframework/tas_validation.go`` ``ValidateTASPodSetRequest`` (gate
  ``TopologyAwareScheduling``, on by default), on every pod template of Job, JobSet, MPIJob,
  Kubeflow jobs, Ray groups, LeaderWorkerSet and on Pods: at most one of the required /
  preferred / unconstrained topology annotations; topology levels are label keys; unconstrained
  is a Go bool; ``podset-slice-size`` an int32 >= 1 and set exactly when
  ``podset-slice-required-topology`` is; ``podset-group-name`` is not a number, needs a required or
  preferred topology and excludes the slice annotations.

Without a Kueue install in view (no release, no Kueue object, no ``{kind: Release, name: kueue}``
in ``externalObjects``) the findings are advisory "not in this stack", unless ``closedWorld``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.demand import CannotTellError
from ...facts.installs import kueue_installed
from ...facts.model import StackModel
from ...facts.model.base import KubeObject
from ...facts.model.kueue import QUEUE_NAME_LABEL
from ...facts.open_world import World, world_schema
from ...facts.workload_kinds.registry import FRAMEWORK_OF_KIND
from ...primitives.k8s_names import dns1123_subdomain_error, go_atoi, has_placeholder, qualified_name_error
from ...primitives.values import Unknown, as_int, as_str, dig, str_map
from ..kit.builders import stack_policy
from ..kit.report import Reporter
from .kueue_scope import (
    ELASTIC_GATE,
    IDENTIFIER_ANNOTATIONS_GATE,
    TAS_GATE,
    framework_enabled,
    gate_off,
    webhooks_cover,
)

MAX_EXEC_TIME_LABEL = "kueue.x-k8s.io/max-exec-time-seconds"
PREBUILT_WORKLOAD = "kueue.x-k8s.io/prebuilt-workload-name"  # label and annotation
ELASTIC_JOB_ANNOTATION = "kueue.x-k8s.io/elastic-job"
MANAGED_LABEL = "kueue.x-k8s.io/managed"
POD_GROUP_NAME = "kueue.x-k8s.io/pod-group-name"  # label and annotation
POD_GROUP_TOTAL_COUNT = "kueue.x-k8s.io/pod-group-total-count"
JOB_MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"
JOB_SYNC_COMPLETIONS = "kueue.x-k8s.io/job-completions-equal-parallelism"
TAS_REQUIRED = "kueue.x-k8s.io/podset-required-topology"
TAS_PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
TAS_UNCONSTRAINED = "kueue.x-k8s.io/podset-unconstrained-topology"
TAS_SLICE_REQUIRED = "kueue.x-k8s.io/podset-slice-required-topology"
TAS_SLICE_SIZE = "kueue.x-k8s.io/podset-slice-size"
TAS_GROUP_NAME = "kueue.x-k8s.io/podset-group-name"
GO_BOOLS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True}
GO_BOOLS.update({"0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False})
INT32_MAX = 2**31 - 1

# Integrations whose webhook runs only ValidateQueueName + ValidateElasticJobAnnotation, not
# ValidateJobOnCreate (Deployment, StatefulSet, LeaderWorkerSet webhooks).
QUEUE_NAME_ONLY = frozenset(
    {("apps", "Deployment"), ("apps", "StatefulSet"), ("leaderworkerset.x-k8s.io", "LeaderWorkerSet")}
)
# (group, kind) -> (framework in integrations.frameworks, runs ValidateJobOnCreate), for every kind
# of Kueue's integration registry (workload_kinds.registry).
KINDS: dict[tuple[str, str], tuple[str, bool]] = {
    key: (framework, key not in QUEUE_NAME_ONLY) for key, framework in FRAMEWORK_OF_KIND.items()
}
ELASTIC_KINDS = {("batch", "Job"), ("ray.io", "RayCluster"), ("ray.io", "RayJob"), ("ray.io", "RayService")}
PREBUILT_KINDS = {
    ("batch", "Job"),
    ("jobset.x-k8s.io", "JobSet"),
    ("kubeflow.org", "TFJob"),
    ("kubeflow.org", "PaddleJob"),
    ("kubeflow.org", "PyTorchJob"),
    ("kubeflow.org", "XGBoostJob"),
    ("trainer.kubeflow.org", "TrainJob"),
    ("kubeflow.org", "MPIJob"),
    ("ray.io", "RayJob"),
    ("", "Pod"),
    ("ray.io", "RayCluster"),
    ("ray.io", "RayService"),
    ("workload.codeflare.dev", "AppWrapper"),
}

Problem = tuple[str, str]  # (problem, fix)


def _get(values: Mapping[str, str | Unknown], key: str, where: str) -> str | None:
    value = values.get(key)
    if isinstance(value, Unknown):
        raise CannotTellError(f"{where} {key}")
    if value is not None and has_placeholder(value):
        raise CannotTellError(f"{where} {key}='{value}' (an unsubstituted template placeholder)")
    return value


def _group(obj: KubeObject) -> str:
    return obj.group  # "" for the core group (tokens.CORE_GROUP)


# --- ValidateJobOnCreate and friends ------------------------------------------------------------
def _queue_name(obj: KubeObject) -> list[Problem]:
    name = _get(obj.labels, QUEUE_NAME_LABEL, "label")
    error = None if name is None else dns1123_subdomain_error(name)
    if error is None:
        return []
    return [
        (
            f"has label {QUEUE_NAME_LABEL}='{name}', which {error}",
            "use the LocalQueue's name (a DNS-1123 subdomain)",
        )
    ]


def _max_exec_time(obj: KubeObject) -> list[Problem]:
    raw = _get(obj.labels, MAX_EXEC_TIME_LABEL, "label")
    if raw is None:
        return []
    value = go_atoi(raw)
    if value is not None and value > 0:
        return []
    why = "is not an integer" if value is None else "is not greater than 0"
    return [
        (f"has label {MAX_EXEC_TIME_LABEL}='{raw}', which {why}", "set it to a whole number of seconds > 0")
    ]


def _prebuilt_name(obj: KubeObject, model: StackModel) -> str | None:
    annotation = _get(obj.annotations, PREBUILT_WORKLOAD, "annotation")
    if annotation and (not gate_off(model, IDENTIFIER_ANNOTATIONS_GATE) or len(annotation) > 63):
        return annotation
    return _get(obj.labels, PREBUILT_WORKLOAD, "label")


def _prebuilt(obj: KubeObject, model: StackModel) -> list[Problem]:
    name = _prebuilt_name(obj, model)
    if name is None:
        return []
    problems: list[Problem] = []
    error = dns1123_subdomain_error(name)
    if error is not None:
        problems.append(
            (
                f"names prebuilt workload '{name}' ({PREBUILT_WORKLOAD}), which {error}",
                "use the Workload's name",
            )
        )
    if name and (_group(obj), obj.kind) not in PREBUILT_KINDS:
        problems.append(
            (
                f"uses {PREBUILT_WORKLOAD}, which Kueue does not support for {obj.kind}",
                f"drop {PREBUILT_WORKLOAD}",
            )
        )
    return problems


def _elastic(obj: KubeObject, model: StackModel) -> list[Problem]:
    if _get(obj.annotations, ELASTIC_JOB_ANNOTATION, "annotation") != "true" or gate_off(model, ELASTIC_GATE):
        return []
    if (_group(obj), obj.kind) in ELASTIC_KINDS:
        return []
    return [
        (
            f'has annotation {ELASTIC_JOB_ANNOTATION}: "true", but Kueue supports elastic jobs only for batch '
            "Job, RayCluster, RayJob and RayService",
            f"drop the {ELASTIC_JOB_ANNOTATION} annotation",
        )
    ]


# --- batch Job ----------------------------------------------------------------------------------
def _job(obj: KubeObject, model: StackModel) -> list[Problem]:
    problems: list[Problem] = []
    spec = obj.spec
    raw_min = _get(obj.annotations, JOB_MIN_PARALLELISM, "annotation")
    if raw_min is not None:
        parallelism = _known_int(dig(spec, "parallelism"), "spec.parallelism", 1)
        completions = _known_int(dig(spec, "completions"), "spec.completions", None)
        pods = parallelism if completions is None else min(parallelism, completions)
        value = go_atoi(raw_min)
        if value is None or not 0 < value < pods:
            problems.append(
                (
                    f"has annotation {JOB_MIN_PARALLELISM}='{raw_min}'; Kueue accepts an integer between 0 and "
                    f"{pods - 1} exclusive of 0 (the Job runs {pods} pods at once)",
                    f"set it to 1..{pods - 1}, or drop it"
                    if pods > 1
                    else "drop it (partial admission needs parallelism > 1)",
                )
            )
        if _get(obj.annotations, ELASTIC_JOB_ANNOTATION, "annotation") == "true" and not gate_off(
            model, ELASTIC_GATE
        ):
            problems.append(
                (
                    "is both an elastic job and partially admissible, which Kueue refuses",
                    f"drop {JOB_MIN_PARALLELISM}",
                )
            )
    raw_sync = _get(obj.annotations, JOB_SYNC_COMPLETIONS, "annotation")
    if raw_sync is not None:
        enabled = GO_BOOLS.get(raw_sync)
        if enabled is None:
            problems.append(
                (
                    f"has annotation {JOB_SYNC_COMPLETIONS}='{raw_sync}', which is not a boolean",
                    "use true or false",
                )
            )
        elif enabled:
            mode = as_str(dig(spec, "completionMode"))
            if isinstance(mode, Unknown):
                raise CannotTellError("spec.completionMode")
            if mode != "Indexed":
                problems.append(
                    (
                        f"sets {JOB_SYNC_COMPLETIONS}: true on a NonIndexed Job, which Kueue refuses",
                        "set spec.completionMode: Indexed",
                    )
                )
            parallelism = _known_int(dig(spec, "parallelism"), "spec.parallelism", 1)
            completions = _known_int(dig(spec, "completions"), "spec.completions", 1)
            if parallelism != completions:
                problems.append(
                    (
                        f"sets {JOB_SYNC_COMPLETIONS}: true with completions {completions} != parallelism {parallelism}",
                        "make spec.completions equal spec.parallelism",
                    )
                )
    return problems


def _known_int(raw: Any, what: str, default: int | None) -> Any:
    value = as_int(raw)
    if isinstance(value, Unknown):
        raise CannotTellError(what)
    return default if value is None else value


# --- Pod ----------------------------------------------------------------------------------------
def _pod(obj: KubeObject, model: StackModel) -> list[Problem]:
    problems: list[Problem] = []
    managed = _get(obj.labels, MANAGED_LABEL, "label")
    if managed is not None and managed != "true":
        problems.append(
            (f"has label {MANAGED_LABEL}='{managed}'; Kueue only allows 'true'", f"drop {MANAGED_LABEL}")
        )
    annotation = _get(obj.annotations, POD_GROUP_NAME, "annotation")
    use_annotation = bool(annotation) and not gate_off(model, IDENTIFIER_ANNOTATIONS_GATE)
    group = annotation if use_annotation else _get(obj.labels, POD_GROUP_NAME, "label")
    count = _get(obj.annotations, POD_GROUP_TOTAL_COUNT, "annotation")
    if not group:
        if count is not None:
            problems.append(
                (
                    f"has annotation {POD_GROUP_TOTAL_COUNT} without a {POD_GROUP_NAME} label or annotation; Kueue "
                    "needs both",
                    f"add {POD_GROUP_NAME}, or drop {POD_GROUP_TOTAL_COUNT}",
                )
            )
        return problems
    error = dns1123_subdomain_error(group)
    if error is not None:
        problems.append(
            (f"names pod group '{group}' ({POD_GROUP_NAME}), which {error}", "use a DNS-1123 subdomain")
        )
    if count is None:
        problems.append(
            (
                f"is in pod group '{group}' without annotation {POD_GROUP_TOTAL_COUNT}; Kueue needs both",
                f"add {POD_GROUP_TOTAL_COUNT}",
            )
        )
    else:
        total = go_atoi(count)
        if total is None or total < 1:
            problems.append(
                (
                    f"has annotation {POD_GROUP_TOTAL_COUNT}='{count}'; Kueue needs an integer >= 1",
                    "set the group's pod count",
                )
            )
    prebuilt = _prebuilt_name(obj, model)
    if prebuilt and prebuilt != group:
        problems.append(
            (
                f"has prebuilt workload '{prebuilt}' but pod group '{group}'; Kueue requires them equal",
                "use the same name for both",
            )
        )
    return problems


# --- LeaderWorkerSet ----------------------------------------------------------------------------
MAX_LWS_REPLICAS = 1_000_000


def _lws(obj: KubeObject) -> list[Problem]:
    replicas = _known_int(dig(obj.spec, "replicas"), "spec.replicas", 1)
    if not isinstance(replicas, int) or 0 <= replicas <= MAX_LWS_REPLICAS:
        return []
    return [
        (
            f"has spec.replicas {replicas}; Kueue's LeaderWorkerSet webhook accepts 0 to {MAX_LWS_REPLICAS:,}",
            f"set spec.replicas between 0 and {MAX_LWS_REPLICAS}",
        )
    ]


# --- TAS pod-set annotations --------------------------------------------------------------------
def _pod_templates(obj: KubeObject) -> Iterator[tuple[str, Any]]:
    """(path, metadata) of every pod template the kind's Kueue webhook validates for TAS."""
    spec = obj.spec
    kind = (_group(obj), obj.kind)
    if kind == ("", "Pod"):
        yield "metadata", obj.props.get("metadata")
    elif kind == ("batch", "Job"):
        yield "spec.template.metadata", dig(spec, "template", "metadata")
    elif kind == ("jobset.x-k8s.io", "JobSet"):
        jobs = dig(spec, "replicatedJobs")
        for i, job in enumerate(jobs if isinstance(jobs, list) else []):
            yield (
                f"spec.replicatedJobs[{i}].template.spec.template.metadata",
                dig(job, "template", "spec", "template", "metadata"),
            )
    elif kind[0] == "kubeflow.org":
        for key, roles in (spec if isinstance(spec, dict) else {}).items():
            if key.endswith("ReplicaSpecs") and isinstance(roles, dict):
                for role, replica in roles.items():
                    yield f"spec.{key}.{role}.template.metadata", dig(replica, "template", "metadata")
    elif kind[0] == "ray.io":
        cluster = {"RayJob": dig(spec, "rayClusterSpec"), "RayService": dig(spec, "rayClusterConfig")}.get(
            obj.kind, spec
        )
        base = {"RayJob": "spec.rayClusterSpec", "RayService": "spec.rayClusterConfig"}.get(obj.kind, "spec")
        yield f"{base}.headGroupSpec.template.metadata", dig(cluster, "headGroupSpec", "template", "metadata")
        workers = dig(cluster, "workerGroupSpecs")
        for i, worker in enumerate(workers if isinstance(workers, list) else []):
            yield f"{base}.workerGroupSpecs[{i}].template.metadata", dig(worker, "template", "metadata")
    elif kind == ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"):
        for role in ("leaderTemplate", "workerTemplate"):
            yield (
                f"spec.leaderWorkerTemplate.{role}.metadata",
                dig(spec, "leaderWorkerTemplate", role, "metadata"),
            )


def tas_problems(path: str, annotations: Mapping[str, str | Unknown]) -> list[Problem]:
    """``ValidateTASPodSetRequest`` on one pod template's annotations."""
    where = f"{path}.annotations"

    def get(key: str) -> str | None:
        return _get(annotations, key, where)

    required, preferred, unconstrained = get(TAS_REQUIRED), get(TAS_PREFERRED), get(TAS_UNCONSTRAINED)
    slice_required, slice_size, group = get(TAS_SLICE_REQUIRED), get(TAS_SLICE_SIZE), get(TAS_GROUP_NAME)
    problems: list[Problem] = []

    def refuse(problem: str, fix: str) -> None:
        problems.append((f"{where}: {problem}, which Kueue's webhook refuses", fix))

    if sum(v is not None for v in (required, preferred, unconstrained)) > 1:
        refuse(
            "sets more than one of the required / preferred / unconstrained topology annotations", "keep one"
        )
    for key, level in (
        (TAS_REQUIRED, required),
        (TAS_PREFERRED, preferred),
        (TAS_SLICE_REQUIRED, slice_required),
    ):
        error = None if level is None else qualified_name_error(level)
        if error is not None:
            refuse(f"{key}='{level}' {error}", "name a level of the Topology (a node label key)")
    if group is not None:
        if group.isascii() and group.isdigit() and int(group) < 2**64:  # strconv.ParseUint(group, 10, 64)
            refuse(f"{TAS_GROUP_NAME}='{group}' is a number", "use a non-numeric group name")
        if slice_size is not None or slice_required is not None:
            refuse(
                f"{TAS_GROUP_NAME} is set together with the slice annotations",
                f"drop {TAS_GROUP_NAME} or the slice annotations",
            )
        if required is None and preferred is None:
            refuse(
                f"{TAS_GROUP_NAME} is set without a required or preferred topology",
                f"add {TAS_REQUIRED} or {TAS_PREFERRED}",
            )
    if unconstrained is not None and unconstrained not in GO_BOOLS:
        refuse(f"{TAS_UNCONSTRAINED}='{unconstrained}' is not a boolean", "use true or false")
    if slice_size is not None:
        size = go_atoi(slice_size)
        if size is None or size > INT32_MAX or size < -(2**31):
            refuse(f"{TAS_SLICE_SIZE}='{slice_size}' is not a number", "use a whole number >= 1")
        elif size < 1:
            refuse(f"{TAS_SLICE_SIZE}='{slice_size}' is below 1", "use a whole number >= 1")
    if slice_required is not None and slice_size is None:
        refuse(f"{TAS_SLICE_REQUIRED} is set without {TAS_SLICE_SIZE}", f"add {TAS_SLICE_SIZE}")
    if slice_required is None and slice_size is not None:
        refuse(
            f"{TAS_SLICE_SIZE} is set without {TAS_SLICE_REQUIRED}",
            f"add {TAS_SLICE_REQUIRED} or drop {TAS_SLICE_SIZE}",
        )
    return problems


def _tas(obj: KubeObject, model: StackModel) -> list[Problem]:
    if gate_off(model, TAS_GATE):
        return []
    problems: list[Problem] = []
    for path, metadata in _pod_templates(obj):
        annotations = dig(metadata, "annotations")
        if isinstance(metadata, Unknown) or isinstance(annotations, Unknown):
            raise CannotTellError(f"{path}.annotations")
        problems.extend(tas_problems(path, str_map(annotations)))
    return problems


# --- the rule -----------------------------------------------------------------------------------
def kueue_job_problems(obj: KubeObject, model: StackModel) -> list[Problem]:
    """Every refusal of Kueue's webhook for ``obj`` (an integration kind); raises CannotTellError."""
    if not obj.labels_known:
        raise CannotTellError("metadata.labels")
    if not obj.annotations_known:
        raise CannotTellError("metadata.annotations")
    kind = (_group(obj), obj.kind)
    _, full = KINDS[kind]
    problems = _queue_name(obj) + _elastic(obj, model)
    if full:
        problems += _max_exec_time(obj) + _prebuilt(obj, model)
    if kind == ("batch", "Job"):
        problems += _job(obj, model)
    if kind == ("", "Pod"):
        problems += _pod(obj, model)
    if kind == ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"):
        problems += _lws(obj)
    problems += _tas(obj, model)
    return problems


def check_kueue_job_webhook(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    world = World.from_config(config)
    installed = world.closed or kueue_installed(model, world)
    for obj in model.objects:
        if not isinstance(obj, KubeObject) or (_group(obj), obj.kind) not in KINDS:
            continue
        covered = webhooks_cover(model, obj.namespace or "")
        if covered is None:
            reporter.cannot_check(obj, f"whether Kueue's webhooks cover namespace {obj.namespace}")
            continue
        if not covered:
            continue
        enabled = framework_enabled(model, KINDS[(_group(obj), obj.kind)][0])
        if isinstance(enabled, Unknown):
            reporter.cannot_check(obj, "whether Kueue's integrations include it")
            continue
        if not enabled:
            continue
        try:
            problems = kueue_job_problems(obj, model)
        except CannotTellError as why:
            reporter.cannot_check(obj, why.what)
            continue
        for problem, fix in problems:
            if installed:
                reporter.violation(obj, problem, fix)
            else:
                reporter.not_in_stack(
                    obj,
                    f'Kueue\'s webhook (no Kueue install here; list {{"kind": "Release", "name": "kueue"}} under '
                    f"externalObjects if another stack installs it) would refuse it: {problem}",
                )


POLICIES: list[Policy] = [
    stack_policy(
        "kueue-job-webhook",
        "Any workload kind Kueue integrates passes Kueue's webhook: a DNS-1123 queue-name label, max-exec-time "
        "> 0, a valid prebuilt workload, elastic-job only on Job/Ray, valid partial-admission and pod-group "
        "annotations, consistent TAS pod-set annotations.",
        check_kueue_job_webhook,
        config_schema=world_schema(),
    ),
]
