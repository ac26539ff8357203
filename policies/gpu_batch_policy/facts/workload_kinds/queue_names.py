"""Where each scheduler reads a workload's queue, per kind.

Kueue (kubernetes-sigs/kueue v0.19.2): every job integration reads ``kueue.x-k8s.io/queue-name``
from the job object's own labels (``pkg/controller/jobframework/utils.go`` ``QueueName`` /
``QueueNameForObject``).  A CronJob is no integration, but its Jobs are, and they carry its
``spec.jobTemplate.metadata.labels`` (:func:`cron_job_queue_name`).  The pod-based integrations
differ:

* **Deployment**: its webhook copies the Deployment's label into the pod template
  (``pkg/controller/jobs/deployment/deployment_webhook.go`` ``Default``), and each pod is then a
  Workload of the pod integration, which reads the *pod's* label (``pkg/controller/jobs/pod/
  pod_webhook.go`` ``Default``).  So the owner's label wins, and a label on the template alone
  queues the pods too.
* **StatefulSet**: with a label on the StatefulSet, its reconciler builds one Workload of all
  replicas (``pkg/controller/jobs/statefulset/statefulset_reconciler.go`` ``Reconcile`` L198-209
  and ``constructWorkload``); with the label only on the pod template, the StatefulSet is not
  managed and each pod is queued alone by the pod integration.

KAI (kai-scheduler/KAI-Scheduler v0.17.0 ``pkg/podgrouper/podgrouper/plugins/defaultgrouper/
default_grouper.go`` ``CalcPodGroupQueue``): the top owner's ``kai.scheduler/queue``, else the
pod's own label, else the ``project`` label (top owner, else pod; ``calculateQueueName``), else
``default-queue``.
"""

from __future__ import annotations

from ...primitives.values import Unknown, dig
from ..model.base import KubeObject
from ..model.kueue import QUEUE_NAME_LABEL
from ..model.workloads import KAI_QUEUE_LABEL, PodTemplate

# Kinds whose pods Kueue's pod integration admits and whose template label therefore counts.
POD_BASED_KINDS = frozenset({("apps", "Deployment"), ("apps", "StatefulSet")})
KAI_PROJECT_LABEL = "project"  # KAI v0.17.0 pkg/podgrouper/podgrouper/plugins/constants ProjectLabelKey
KAI_NODE_POOL_LABEL = "kai.scheduler/node-pool"
KAI_SCHEDULER_NAME = "kai-scheduler"


def pod_template(obj: KubeObject) -> PodTemplate:
    """``spec.template`` of a controller (an empty template when absent or not an object)."""
    raw = dig(obj.spec, "template")
    return PodTemplate(raw if isinstance(raw, (dict, Unknown)) else {}, "spec.template")


def kueue_queue_name(obj: KubeObject) -> str | Unknown | None:
    """The LocalQueue name Kueue reads for ``obj`` (see the module docstring)."""
    if (obj.group, obj.kind) == ("batch", "CronJob"):
        return cron_job_queue_name(obj)
    own = obj.labels.get(QUEUE_NAME_LABEL)
    if own is not None or (obj.group, obj.kind) not in POD_BASED_KINDS:
        return own
    return pod_template(obj).labels.get(QUEUE_NAME_LABEL)


def cron_job_queue_name(obj: KubeObject) -> str | Unknown | None:
    """A CronJob's Jobs carry ``spec.jobTemplate.metadata.labels`` (kubernetes v1.37.2
    ``pkg/controller/cronjob/utils.go`` ``getJobFromTemplate2``), so that is where Kueue's Job
    integration finds the queue; the CronJob's own label reaches no Job."""
    labels = dig(obj.spec, "jobTemplate", "metadata", "labels")
    if isinstance(labels, Unknown):
        return labels
    found = labels.get(QUEUE_NAME_LABEL) if isinstance(labels, dict) else None
    return found if isinstance(found, (str, Unknown)) else None


def queued_pod_by_pod(obj: KubeObject) -> bool:
    """A StatefulSet labelled only on its pod template: Kueue admits its pods one by one."""
    return (
        (obj.group, obj.kind) == ("apps", "StatefulSet")
        and obj.labels.get(QUEUE_NAME_LABEL) is None
        and pod_template(obj).labels.get(QUEUE_NAME_LABEL) is not None
    )


def kai_queue_name(obj: KubeObject, templates: list[PodTemplate]) -> str | Unknown | None:
    """The queue KAI's podgrouper puts ``obj``'s pods in; None means KAI's ``default-queue``.
    ``templates`` are the pod templates of ``obj`` (what its pods' labels will be).  The
    ``project`` fallback is ``<project>-<node pool>`` when the pod carries KAI's default node-pool
    label key ``kai.scheduler/node-pool`` (``pkg/common/constants`` ``DefaultNodePoolLabelKey``);
    it is read only for pods that name ``schedulerName: kai-scheduler``, because ``project`` is a
    common label that means nothing to other schedulers."""
    own = obj.labels.get(KAI_QUEUE_LABEL)
    if own is not None:
        return own
    for template in templates:
        found = template.labels.get(KAI_QUEUE_LABEL)
        if found is not None:
            return found
    if not any(t.scheduler_name == KAI_SCHEDULER_NAME for t in templates):
        return None
    project = obj.labels.get(KAI_PROJECT_LABEL)
    for template in templates:
        if project is None:
            project = template.labels.get(KAI_PROJECT_LABEL)
    if project is None or isinstance(project, Unknown):
        return project
    for template in templates:
        pool = template.labels.get(KAI_NODE_POOL_LABEL)
        if pool is not None:
            return pool if isinstance(pool, Unknown) else f"{project}-{pool}"
    return project
