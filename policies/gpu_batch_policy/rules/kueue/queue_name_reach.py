"""A queue name where Kueue never reads it (issue 42 item 4: the judge's own blind spots).

* **kueue-queue-name-unread** (advisory): an object of a kind Kueue queues that names its
  LocalQueue where Kueue v0.19.2 does not look, so its jobs run unqueued (or, with
  ``manageJobsWithoutQueueName``, wait forever) and no quota or gang rule judges them:

  - a ``kueue.x-k8s.io/queue-name`` **annotation** without the label: Kueue reads only the label
    (kubernetes-sigs/kueue v0.19.2 ``pkg/controller/jobframework/utils.go`` ``QueueNameForObject``:
    ``object.GetLabels()[QueueLabel]``);
  - a CronJob labelled on itself, not on ``spec.jobTemplate.metadata``: its Jobs carry only the
    template's labels and annotations (kubernetes v1.37.2 ``pkg/controller/cronjob/utils.go``
    ``getJobFromTemplate2``), and the CronJob is no Kueue integration.

A CronJob labelled on its ``jobTemplate`` is judged as the Job it creates
(``workload_kinds.cronjob``); that is no finding here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, Policy

from ...facts.kueue_install import framework_of
from ...facts.model import StackModel
from ...facts.model.kueue import QUEUE_NAME_LABEL
from ...facts.workload_kinds.queue_names import kueue_queue_name
from ...primitives.values import dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter


def _template_annotation(obj: Any) -> Any:
    return dig(obj.spec, "jobTemplate", "metadata", "annotations", QUEUE_NAME_LABEL)


def check_queue_name_unread(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for obj in model.objects:
        if framework_of(obj) is None or kueue_queue_name(obj) is not None:
            continue
        cron = (obj.group, obj.kind) == ("batch", "CronJob")
        if cron and obj.labels.get(QUEUE_NAME_LABEL) is not None:
            reporter.violation(
                obj,
                f"its {QUEUE_NAME_LABEL} label is on the CronJob, which Kueue never reads: the Jobs it "
                "creates carry only spec.jobTemplate.metadata.labels (getJobFromTemplate2), so they are "
                "not queued and no quota applies to them",
                f"move the label to spec.jobTemplate.metadata.labels.{QUEUE_NAME_LABEL}",
            )
            continue
        annotation = _template_annotation(obj) if cron else obj.annotations.get(QUEUE_NAME_LABEL)
        if annotation is not None:
            where = "spec.jobTemplate.metadata.annotations" if cron else "metadata.annotations"
            reporter.violation(
                obj,
                f"it names LocalQueue {annotation!s} in {where}, but Kueue v0.19.2 reads "
                f"{QUEUE_NAME_LABEL} only as a label (QueueNameForObject), so it is not queued",
                f"make {QUEUE_NAME_LABEL} a label ({where.replace('annotations', 'labels')})",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "kueue-queue-name-unread",
        "A workload names its Kueue LocalQueue where Kueue reads it: a label (not an annotation), on "
        "a CronJob's jobTemplate (not the CronJob).",
        check_queue_name_unread,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
]
