"""Queue labels where they matter (issue 11 item 2).

A workload without a queue label bypasses quotas only where a scheduler that enforces them runs,
so the verdict depends on the stack:

* **no Kueue and no KAI at all** (no release, no queue object, nothing in ``externalObjects``):
  nothing to say -- the stack does not queue.
* **mandatory** (``workload-has-queue-label``) where the stack enforces queueing for the
  workload's namespace:

  - a Kueue release with ``manageJobsWithoutQueueName: true``: Kueue then manages the unlabelled
    jobs of every namespace its ``managedJobsNamespaceSelector`` matches (kubernetes-sigs/kueue
    v0.19.2 ``pkg/controller/jobframework/reconciler.go`` L362-388), and one with no LocalQueue
    stays suspended forever (the selector's default excludes only kube-system and kueue-system,
    where GPU workloads do not run: not modelled);
  - a team namespace the stack manages (it declares a LocalQueue there): the namespace is meant
    to be queued, and an unlabelled job runs outside its team's quota;
  - KAI as the scheduler (pod ``schedulerName: kai-scheduler``, or a Ray workload under a KubeRay
    operator with ``batchScheduler.name: kai-scheduler``) when the stack declares KAI Queues but
    none named ``default-queue``: KAI's podgrouper puts a workload without ``kai.scheduler/queue``
    on the top owner **or** the pod into ``default-queue`` (kai-scheduler/KAI-Scheduler
    ``pkg/podgrouper/podgrouper/plugins/defaultgrouper/default_grouper.go``
    ``CalcPodGroupQueue``, read at commit 0213e667), which then does not exist, so it never runs.

* **advisory** (``workload-queue-label-advised``) otherwise: Kueue or KAI runs, but nothing
  forces this namespace through it (or KAI's default-queue catches it).

Where the label is read: Kueue reads ``kueue.x-k8s.io/queue-name`` from the job object itself
(``pkg/controller/jobframework/utils.go`` ``QueueName`` / ``QueueNameForObject`` L174-182: the
object's own labels), so the owner's label counts for Kueue, except for Deployments and
StatefulSets, whose pods the pod integration queues by the pod template's label
(``workload_kinds.queue_names``);
KAI reads the top owner's label, else the pod's (``CalcPodGroupQueue`` above), so a
``kai.scheduler/queue`` on the pod template counts too.  A namespace whose LocalQueue is named
``default`` is labelled by Kueue's LocalQueueDefaulting (GA since 0.17) and needs no label.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_policy import EnforcementLevel, Policy

from ...facts.demand import CannotTellError, pod_request
from ...facts.installs import kai_installed, kueue_installed, manages_jobs_without_queue_name
from ...facts.model import KubeObject, RayWorkload, StackModel
from ...facts.model.kueue import QUEUE_NAME_LABEL
from ...facts.model.workloads import (
    GPU_FRACTION_ANNOTATION,
    GPU_MEMORY_ANNOTATION,
    GPU_RESOURCE,
    KAI_QUEUE_LABEL,
    PodTemplate,
)
from ...facts.open_world import World, world_schema
from ...facts.pod_templates import owned_templates
from ...facts.workload_kinds.queue_names import kueue_queue_name
from ..kit.builders import stack_policy
from ..kit.report import Reporter

KAI_SCHEDULER = "kai-scheduler"
KAI_DEFAULT_QUEUE = "default-queue"


@dataclass(frozen=True)
class Unlabelled:
    """A workload with no queue label a running scheduler reads, and why that matters here."""

    subject: Any
    namespace: str
    enforced_by: str | None  # None: advisory


def _asks_for_gpu(template: PodTemplate) -> bool:
    """Whether a pod template requests GPUs (a GPU share counts; unknown counts as yes)."""
    if GPU_FRACTION_ANNOTATION in template.annotations or GPU_MEMORY_ANNOTATION in template.annotations:
        return True
    try:
        return pod_request(template, GPU_RESOURCE) > 0
    except CannotTellError:
        return True


def _kai_scheduled(model: StackModel, item: Any, templates: list[PodTemplate]) -> bool:
    if any(t.scheduler_name == KAI_SCHEDULER for t in templates):
        return True
    return isinstance(item, RayWorkload) and any(
        r.kuberay_batch_scheduler() == KAI_SCHEDULER for r in model.kuberay_releases()
    )


def _kai_default_queue_missing(model: StackModel, world: World) -> bool:
    names = {q.name for q in model.kai_queues()}
    return (
        bool(names) and KAI_DEFAULT_QUEUE not in names and not world.is_external("Queue", KAI_DEFAULT_QUEUE)
    )


def unlabelled_workloads(model: StackModel, world: World, reporter: Reporter) -> list[Unlabelled]:
    """Every Ray workload, and every other workload that asks for GPUs, that no running scheduler
    can place in a queue; empty when the stack has neither Kueue nor KAI."""
    if not (kueue_installed(model, world) or kai_installed(model, world)):
        return []
    templates: dict[int, list[PodTemplate]] = {}
    candidates: list[Any] = []
    for workload in model.ray_workloads():
        templates.setdefault(id(workload.obj), [])
        candidates.append(workload)
    for owned in owned_templates(model):
        owner = owned.owner
        key = id(owner.obj if isinstance(owner, RayWorkload) else owner)
        if key not in templates:
            if not (isinstance(owner, KubeObject) and _asks_for_gpu(owned.template)):
                continue
            templates[key] = []
            candidates.append(owner)
        templates[key].append(owned.template)
    team_namespaces = {lq.namespace for lq in model.local_queues()}
    defaulted = {lq.namespace for lq in model.local_queues() if lq.name == "default"}
    manage_all = manages_jobs_without_queue_name(model)
    kai_default_missing = _kai_default_queue_missing(model, world)
    out: list[Unlabelled] = []
    for item in candidates:
        obj: KubeObject = item.obj if isinstance(item, RayWorkload) else item
        pods = templates[id(obj)]
        if not obj.labels_known:
            reporter.cannot_check(item, "metadata.labels")
            continue
        if kueue_queue_name(obj) is not None or KAI_QUEUE_LABEL in obj.labels:
            continue  # for a Deployment/StatefulSet, Kueue's pod integration reads the template
        if any(KAI_QUEUE_LABEL in t.labels for t in pods):
            continue  # KAI reads the pod's label when the owner has none
        namespace = obj.namespace or "default"
        if namespace in defaulted:
            continue  # Kueue's LocalQueueDefaulting labels it with the 'default' LocalQueue
        reason: str | None = None
        if manage_all:
            reason = "Kueue runs with manageJobsWithoutQueueName, so it stays suspended forever"
        elif namespace in team_namespaces:
            reason = f"namespace '{namespace}' is a team namespace this stack queues (it has a LocalQueue)"
        elif kai_default_missing and _kai_scheduled(model, item, pods):
            reason = (
                f"KAI puts it in '{KAI_DEFAULT_QUEUE}', which this stack's KAI Queues do not include, "
                "so it never runs"
            )
        out.append(Unlabelled(item, namespace, reason))
    return out


def _fix(model: StackModel, namespace: str) -> str:
    queues = sorted(f"{lq.namespace}/{lq.name}" for lq in model.local_queues_in(namespace))
    return (
        f"label it with {QUEUE_NAME_LABEL}: <LocalQueue in namespace {namespace}>"
        + (f" ({', '.join(queues)})" if queues else "")
        + f" or {KAI_QUEUE_LABEL}: <leaf queue>"
    )


def check_queue_label_enforced(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    for item in unlabelled_workloads(model, World.from_config(config), reporter):
        if item.enforced_by is not None:
            reporter.violation(
                item.subject,
                f"carries no queue label (kueue.x-k8s.io/queue-name or kai.scheduler/queue); {item.enforced_by}",
                _fix(model, item.namespace),
            )


def check_queue_label_advised(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    for item in unlabelled_workloads(model, World.from_config(config), Reporter(lambda *_: None, stack=True)):
        if item.enforced_by is None:
            reporter.violation(
                item.subject,
                "carries no queue label, so it runs outside the Kueue/KAI quotas and gang admission "
                "(nothing in this stack forces its namespace through a queue)",
                _fix(model, item.namespace),
            )


POLICIES: list[Policy] = [
    stack_policy(
        "workload-has-queue-label",
        "Where the stack enforces queueing (manageJobsWithoutQueueName, a team namespace with a LocalQueue, "
        "or KAI without its default-queue), Ray and GPU workloads carry a Kueue or KAI queue label.",
        check_queue_label_enforced,
        config_schema=world_schema(closed_world=False),
    ),
    stack_policy(
        "workload-queue-label-advised",
        "Ray and GPU workloads in a stack with Kueue or KAI carry a queue label, even where nothing enforces it.",
        check_queue_label_advised,
        enforcement_level=EnforcementLevel.ADVISORY,
        config_schema=world_schema(closed_world=False),
    ),
]
