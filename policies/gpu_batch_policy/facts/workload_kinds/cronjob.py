"""batch/v1 CronJob: the Jobs it creates, queued as Jobs (issue 42 item 4).

A CronJob is no Kueue integration, but each Job it creates is: kubernetes/kubernetes v1.37.2
``pkg/controller/cronjob/utils.go`` ``getJobFromTemplate2`` gives the Job the ``jobTemplate``'s
labels, annotations and spec, so Kueue's Job integration queues it when
``spec.jobTemplate.metadata.labels`` carries ``kueue.x-k8s.io/queue-name``
(:func:`.queue_names.kueue_queue_name`) -- a label on the CronJob itself reaches no Job.  So a
CronJob is counted as the Job of its template (:mod:`.batch_job`: parallelism, completions,
``job-min-parallelism``), and the findings name the CronJob.
KAI v0.17.0 (``pkg/podgrouper/podgrouper/plugins/cronjobs/crobjob-grouper.go``
``GetPodGroupMetadata``): the Job's pods go to the default grouper, ``MinAvailable: 1``.
"""

from __future__ import annotations

import dataclasses

from ...primitives.values import Unknown, dig
from ..demand import CannotTellError, PodSet
from ..model.base import KubeObject
from . import batch_job
from .base import Gang


def job_of(cron: KubeObject) -> KubeObject:
    """The Job ``cron`` creates, as a view that keeps the CronJob's identity (findings name it)."""
    template = dig(cron.spec, "jobTemplate")
    if isinstance(template, Unknown):
        raise CannotTellError(f"{cron.describe()} spec.jobTemplate")
    metadata = dig(template, "metadata")
    labels, annotations = dig(metadata, "labels"), dig(metadata, "annotations")
    spec = dig(template, "spec")
    return dataclasses.replace(
        cron,
        props={**cron.props, "spec": spec if isinstance(spec, dict) else {}},
        labels=dict(labels) if isinstance(labels, dict) else {},
        annotations=dict(annotations) if isinstance(annotations, dict) else {},
    )


def _moved(gangs: list[Gang], cron: KubeObject) -> list[Gang]:
    def path(p: PodSet) -> PodSet:
        return dataclasses.replace(p, path=f"spec.jobTemplate.{p.path}")

    return [Gang(cron, cron, tuple(path(p) for p in g.pod_sets)) for g in gangs]


def kueue_gangs(obj: KubeObject) -> list[Gang]:
    return _moved(batch_job.kueue_gangs(job_of(obj)), obj)


def kai_gangs(obj: KubeObject) -> list[Gang]:
    [gang] = _moved(batch_job.kueue_gangs(job_of(obj)), obj)
    first = gang.pod_sets[0]
    return [Gang(obj, obj, (dataclasses.replace(first, count=min(first.count, 1), min_count=None),))]
