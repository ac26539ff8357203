"""Integration wiring between KubeRay, KAI and Kueue: settings that must agree across releases
and workloads, which no single component validates.

Facts (kai-kuberay-skypilot.md §1.4, §2.2-2.3; kueue.md §6):

* KubeRay's KAI plugin (``batchscheduler/kai-scheduler``) is what copies a RayCluster/RayJob's
  ``kai.scheduler/queue`` label onto its pods and sets ``schedulerName: kai-scheduler``; it runs
  only when the operator has ``batchScheduler.name: kai-scheduler`` (KubeRay >= 1.5.0, RayJob
  >= 1.6.0), and the operator refuses to start with ``batchScheduler.enabled: true`` plus a name
  (``ValidateBatchSchedulerConfig``).
* With that plugin, every RayJob in ``K8sJobMode`` -- the CRD default when ``submissionMode`` is
  unset -- fails "KAI-Scheduler does not support RayJob with K8sJobMode" and requeues forever.
* KAI GPU sharing is pod annotations: ``gpu-fraction`` in (0, 1), ``gpu-memory`` a positive MiB
  count, never with an ``nvidia.com/gpu`` limit in the same pod, and only when the KAI chart has
  ``global.gpuSharing: true`` (else the admission webhook rejects the pod).
* Kueue's ``kueue.x-k8s.io/queue-name`` names a LocalQueue in the workload's own namespace, and
  ``kueue.x-k8s.io/priority-class`` a WorkloadPriorityClass; a workload without a queue label
  bypasses quota (or is suspended forever with ``manageJobsWithoutQueueName``) unless its
  namespace has a LocalQueue named ``default`` (LocalQueueDefaulting, GA since 0.17).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from pulumi_policy import Policy

from ...facts.demand import CannotTellError, pod_request
from ...facts.model import HelmRelease, StackModel
from ...facts.model.kueue import PRIORITY_CLASS_LABEL, QUEUE_NAME_LABEL
from ...facts.model.workloads import (
    GPU_FRACTION_ANNOTATION,
    GPU_MEMORY_ANNOTATION,
    GPU_RESOURCE,
    KAI_QUEUE_LABEL,
)
from ...facts.open_world import World, world_schema
from ...facts.pod_templates import owned_templates
from ...facts.workload_kinds.queue_names import kueue_queue_name
from ...primitives.quantity import QuantityError, parse_fraction
from ...primitives.tokens import KUEUE_GROUP
from ...primitives.values import Unknown, as_bool, dig
from ..kit.builders import stack_policy
from ..kit.references import unresolved
from ..kit.report import Reporter

KAI_SCHEDULER = "kai-scheduler"
BATCH_SCHEDULERS = ("volcano", "yunikorn", KAI_SCHEDULER, "scheduler-plugins")
KAI_RAYJOB_MODES = ("HTTPMode", "SidecarMode", "InteractiveMode")
KUBERAY_KAI_RAYCLUSTER = (1, 5, 0)
KUBERAY_KAI_RAYJOB = (1, 6, 0)


def version_tuple(raw: str | Unknown | None) -> tuple[int, int, int] | None:
    """``1.7.0`` / ``v1.6.2`` / ``1.5.0-rc.1`` -> (1, 7, 0); None when not a plain release."""
    if not isinstance(raw, str):
        return None
    match = re.match(r"^v?(\d+)\.(\d+)\.(\d+)", raw.strip())
    if match is None:
        return None
    return int(match[1]), int(match[2]), int(match[3])


# --- kuberay-kai-batch-scheduler ----------------------------------------------------------------
def _check_release_config(release: HelmRelease, reporter: Reporter) -> str | Unknown | None:
    """Report invalid batchScheduler settings; return the effective scheduler name."""
    name = release.kuberay_batch_scheduler()
    enabled = as_bool(release.value("batchScheduler", "enabled"))
    if isinstance(name, Unknown) or isinstance(enabled, Unknown):
        reporter.cannot_check(release, "batchScheduler values")
        return Unknown("batchScheduler")
    if enabled is True and name:
        reporter.violation(
            release,
            f"sets both batchScheduler.enabled=true (deprecated Volcano switch) and batchScheduler.name={name}; "
            "the KubeRay operator refuses to start with both",
            "remove batchScheduler.enabled and keep only batchScheduler.name",
        )
    if name and name not in BATCH_SCHEDULERS:
        reporter.violation(
            release,
            f"sets batchScheduler.name={name}, which KubeRay does not know (it accepts "
            f"{', '.join(BATCH_SCHEDULERS)} or empty) and the operator exits",
            f"set batchScheduler.name to {KAI_SCHEDULER} for KAI, or leave it empty for Kueue",
        )
    return name or None


def check_kuberay_batch_scheduler(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    """KAI-labelled Ray workloads need a KubeRay operator running the kai-scheduler plugin (of a
    version that supports their kind), and the operator's batchScheduler values must be valid."""
    releases = model.kuberay_releases()
    names = {id(r): _check_release_config(r, reporter) for r in releases}
    kai_ops = [r for r in releases if names[id(r)] == KAI_SCHEDULER]
    undecided = any(isinstance(n, Unknown) for n in names.values())
    for workload in model.ray_workloads():
        label = workload.obj.labels.get(KAI_QUEUE_LABEL)
        if label is None or isinstance(label, Unknown):
            continue
        if not releases:
            reporter.cannot_check(workload, "KubeRay's batchScheduler (no kuberay-operator release declared)")
            continue
        if not kai_ops:
            if undecided:
                reporter.cannot_check(workload, "KubeRay's batchScheduler (unknown until apply)")
                continue
            reporter.violation(
                workload,
                f"is labelled {KAI_QUEUE_LABEL}={label}, but no KubeRay operator release sets "
                f"batchScheduler.name={KAI_SCHEDULER}, so its pods never reach KAI's queue",
                f"set batchScheduler.name: {KAI_SCHEDULER} in the kuberay-operator release values "
                f"({', '.join(r.release_name for r in releases)})",
            )
            continue
        floor = KUBERAY_KAI_RAYJOB if workload.kind != "RayCluster" else KUBERAY_KAI_RAYCLUSTER
        for release in kai_ops:
            version = version_tuple(release.version)
            if version is not None and version < floor:
                reporter.violation(
                    workload,
                    f"runs on KAI through {release.describe()} version {release.version}, but KubeRay's "
                    f"kai-scheduler plugin supports {workload.kind} only from {'.'.join(map(str, floor))}",
                    f"upgrade the kuberay-operator chart to {'.'.join(map(str, floor))} or newer (1.7.0 is pinned upstream)",
                )


# --- kai-rayjob-submission-mode -----------------------------------------------------------------
def check_rayjob_submission_mode(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    """A RayJob scheduled by KAI does not use K8sJobMode (the CRD default): KubeRay's KAI plugin
    rejects it for every RayJob once the operator runs with batchScheduler.name=kai-scheduler.

    The rule depends on that install (issue 11 item 3): it is mandatory when the stack's KubeRay
    release runs the KAI plugin, or when a KAI-labelled RayJob meets a KubeRay operator listed in
    ``externalObjects`` (``{kind: Release, name: kuberay-operator}``) or under ``closedWorld``; with
    no KubeRay operator in view it is the advisory "cannot check: not in this stack"."""
    world = World.from_config(config)
    operator_kai = any(r.kuberay_batch_scheduler() == KAI_SCHEDULER for r in model.kuberay_releases())
    operator_elsewhere = not model.kuberay_releases() and (
        world.closed or world.has_install("kuberay-operator")
    )
    for workload in model.ray_workloads():
        if workload.kind != "RayJob":
            continue
        label = workload.obj.labels.get(KAI_QUEUE_LABEL)
        if not operator_kai and label is None:
            continue
        if isinstance(label, Unknown) and not operator_kai:
            reporter.cannot_check(workload, f"label {KAI_QUEUE_LABEL}")
            continue
        mode = workload.submission_mode
        if isinstance(mode, Unknown):
            reporter.cannot_check(workload, "spec.submissionMode")
            continue
        if mode in KAI_RAYJOB_MODES:
            continue
        why = (
            f"is labelled {KAI_QUEUE_LABEL}"
            if label is not None
            else "runs under a KubeRay operator using KAI"
        )
        problem = (
            f"{why} and uses submissionMode {mode or 'unset (CRD default K8sJobMode)'}; KubeRay's KAI plugin "
            "rejects K8sJobMode ('KAI-Scheduler does not support RayJob with K8sJobMode') and the job "
            "requeues forever"
        )
        if not operator_kai and not operator_elsewhere:
            reporter.not_in_stack(
                workload,
                "KubeRay's KAI plugin (no kuberay-operator release here; list "
                '{"kind": "Release", "name": "kuberay-operator"} under externalObjects if another stack '
                f"installs it) would reject it: {problem}",
            )
            continue
        reporter.violation(
            workload,
            problem,
            "set spec.submissionMode to SidecarMode (or HTTPMode / InteractiveMode)",
        )


# --- kai-gpu-sharing ----------------------------------------------------------------------------
def _sharing_enabled(model: StackModel) -> bool | Unknown | None:
    """True if some KAI release enables global.gpuSharing; None when no KAI release is declared."""
    releases = model.kai_releases()
    if not releases:
        return None
    values = [r.kai_gpu_sharing() for r in releases]
    if any(v is True for v in values):
        return True
    if any(isinstance(v, Unknown) for v in values):
        return Unknown("global.gpuSharing")
    return False


def check_gpu_sharing(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    """``gpu-fraction``/``gpu-memory`` pods: valid values, no whole-GPU limit, KAI sharing on."""
    sharing = _sharing_enabled(model)
    for owned in owned_templates(model):
        notes = owned.template.annotations
        keys = [k for k in (GPU_FRACTION_ANNOTATION, GPU_MEMORY_ANNOTATION) if k in notes]
        if not keys:
            continue
        subject, where = owned.owner, f"{owned.name} pods"
        if any(isinstance(notes[k], Unknown) for k in keys):
            reporter.cannot_check(subject, f"{where} GPU-sharing annotations")
            continue
        _check_values(subject, where, {k: str(notes[k]) for k in keys}, reporter)
        try:
            whole = pod_request(owned.template, GPU_RESOURCE)
        except CannotTellError as why:
            reporter.cannot_check(subject, why.what)
            whole = Decimal(0)
        if whole > 0:
            reporter.violation(
                subject,
                f"{where} request {keys[0]} and also {whole} {GPU_RESOURCE}; KAI's binder rejects a "
                "fractional request combined with a whole-GPU limit",
                f"remove the {GPU_RESOURCE} limit/request from those pods (the annotation is the request)",
            )
        if sharing is None:
            reporter.cannot_check(subject, f"{where} GPU sharing (no kai-scheduler release declared)")
        elif isinstance(sharing, Unknown):
            reporter.cannot_check(subject, "KAI global.gpuSharing (unknown until apply)")
        elif sharing is False:
            reporter.violation(
                subject,
                f"{where} request a GPU share ({keys[0]}), but no kai-scheduler release sets "
                "global.gpuSharing=true, so KAI's admission webhook rejects them",
                "set values.global.gpuSharing: true on the kai-scheduler Helm release",
            )


def _check_values(subject: Any, where: str, notes: dict[str, str], reporter: Reporter) -> None:
    if GPU_FRACTION_ANNOTATION in notes:
        raw = notes[GPU_FRACTION_ANNOTATION]
        try:
            fraction: Decimal | None = parse_fraction(raw)
        except QuantityError:
            fraction = None
        if fraction is None or not 0 < fraction < 1:
            reporter.violation(
                subject,
                f"{where} have gpu-fraction '{raw}', but KAI accepts only a number strictly between 0 and 1",
                'use e.g. gpu-fraction: "0.5"; for one or more whole GPUs request nvidia.com/gpu instead',
            )
        if GPU_MEMORY_ANNOTATION in notes:
            reporter.violation(
                subject,
                f"{where} set both gpu-fraction and gpu-memory, which KAI rejects",
                "keep one of the two annotations",
            )
    elif not re.fullmatch(r"[1-9]\d*", notes[GPU_MEMORY_ANNOTATION].strip()):
        reporter.violation(
            subject,
            f"{where} have gpu-memory '{notes[GPU_MEMORY_ANNOTATION]}', but KAI needs a positive integer (MiB)",
            'use e.g. gpu-memory: "2000"',
        )


# --- kueue-queue-label-resolves -----------------------------------------------------------------
def check_queue_label_resolves(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    """A ``kueue.x-k8s.io/queue-name`` label names a LocalQueue in the workload's own namespace:
    Kueue only looks there, and a workload on a missing LocalQueue stays suspended forever.
    Open world (``open_world``): with no LocalQueue in the stack at all, the queue lives elsewhere."""
    world = World.from_config(config)
    for obj in model.objects:
        label = kueue_queue_name(obj)  # a Deployment's/StatefulSet's pod template label counts
        if label is None or (obj.group == KUEUE_GROUP):
            continue
        if isinstance(label, Unknown) or not obj.identity_known:
            reporter.cannot_check(obj, f"label {QUEUE_NAME_LABEL} or namespace")
            continue
        namespace = obj.namespace or "default"
        found, _ = model.find_local_queue(label, namespace, near=obj)
        if found.ok:
            continue
        if found.status == "unknown":
            reporter.cannot_check(obj, f"LocalQueue '{label}' (names unknown until apply)")
            continue
        elsewhere = sorted(lq.namespace for lq in model.local_queues_named(label))
        here = sorted(lq.name for lq in model.local_queues_in(namespace))
        unresolved(
            world,
            reporter,
            obj,
            ("LocalQueue", label, namespace),
            declared=here
            or model.memo("rules.wiring.local_queue_names", lambda: [lq.name for lq in model.local_queues()]),
            problem=f"is labelled {QUEUE_NAME_LABEL}={label}, but namespace '{namespace}' has no LocalQueue '{label}'"
            + (
                f" (it exists in {', '.join(elsewhere)}; Kueue only looks in the workload's namespace)"
                if elsewhere
                else ""
            )
            + ", so the workload stays suspended forever",
            fix=f"declare LocalQueue '{label}' in namespace '{namespace}'"
            + (f" or use one of its LocalQueues ({', '.join(here)})" if here else ""),
        )


# --- kueue-priority-class-exists ----------------------------------------------------------------
def priority_class_names(model: StackModel) -> tuple[set[str], bool]:
    """Declared WorkloadPriorityClass names, and whether all are known."""
    classes = model.workload_priority_classes()
    return {c.name for c in classes}, all(c.obj.identity_known for c in classes)


def check_priority_class_exists(
    model: StackModel, reporter: Reporter, policy_config: Mapping[str, Any]
) -> None:
    """A ``kueue.x-k8s.io/priority-class`` label names a declared WorkloadPriorityClass: Kueue
    rejects a workload whose class does not exist (it cannot compute its priority).  Open world
    (``open_world``): with no WorkloadPriorityClass in the stack, the class lives elsewhere."""
    world = World.from_config(policy_config)
    declared, complete = priority_class_names(model)
    labelled: list[tuple[Any, str | Unknown]] = [
        (o, o.labels[PRIORITY_CLASS_LABEL]) for o in model.objects if PRIORITY_CLASS_LABEL in o.labels
    ]
    for release in model.skypilot_releases():
        config = release.skypilot_config()
        value = dig(config.data, "kubernetes", "pod_config", "metadata", "labels", PRIORITY_CLASS_LABEL)
        if config.unknown is not None:
            continue  # the SkyPilot rule reports an unknown config
        if isinstance(value, (str, Unknown)):
            labelled.append((release, value))
    for subject, name in labelled:
        if isinstance(name, Unknown):
            reporter.cannot_check(subject, f"label {PRIORITY_CLASS_LABEL}")
        elif name not in declared:
            if not complete:
                reporter.cannot_check(subject, f"WorkloadPriorityClass '{name}' (names unknown until apply)")
                continue
            unresolved(
                world,
                reporter,
                subject,
                ("WorkloadPriorityClass", name, None),
                declared=declared,
                problem=f"uses {PRIORITY_CLASS_LABEL}={name}, but no WorkloadPriorityClass '{name}' is declared, so Kueue "
                "rejects its workloads",
                fix=f"declare a kueue.x-k8s.io WorkloadPriorityClass '{name}' (top-level value), or use one of: "
                f"{', '.join(sorted(declared)) or 'none declared'}",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "kuberay-kai-batch-scheduler",
        "KAI-labelled Ray workloads need the KubeRay operator with batchScheduler.name=kai-scheduler (>= 1.5.0; "
        "RayJob >= 1.6.0), never combined with batchScheduler.enabled=true.",
        check_kuberay_batch_scheduler,
    ),
    stack_policy(
        "kai-rayjob-submission-mode",
        "A RayJob scheduled through KAI must not use submissionMode K8sJobMode (the CRD default).",
        check_rayjob_submission_mode,
        config_schema=world_schema(),
    ),
    stack_policy(
        "kai-gpu-sharing",
        "gpu-fraction/gpu-memory pods need KAI global.gpuSharing=true, a fraction strictly between 0 and 1 "
        "(or positive MiB), and no nvidia.com/gpu limit in the same pod.",
        check_gpu_sharing,
    ),
    stack_policy(
        "kueue-queue-label-resolves",
        "A kueue.x-k8s.io/queue-name label names a LocalQueue in the workload's own namespace.",
        check_queue_label_resolves,
        config_schema=world_schema(),
    ),
    stack_policy(
        "kueue-priority-class-exists",
        "A kueue.x-k8s.io/priority-class label (on workloads or in SkyPilot pod_config) names a declared "
        "WorkloadPriorityClass.",
        check_priority_class_exists,
        config_schema=world_schema(),
    ),
]
