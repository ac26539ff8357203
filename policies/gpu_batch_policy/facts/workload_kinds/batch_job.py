"""batch/v1 Job.

Kueue: one pod set of ``parallelism`` pods (defaulted to 1), or ``completions`` when smaller
(kubernetes-sigs/kueue v0.19.2 ``pkg/controller/jobs/job/job_controller.go`` ``PodSets``
L356-375, ``podsCount`` L451-458).
``kueue.x-k8s.io/job-min-parallelism`` is the pod set's ``MinCount`` (``minPodsCount``: the
annotation read with ``strconv.Atoi``), so with PartialAdmission (:func:`.base.at_minimum`) Kueue
may admit the Job with that many pods.
KAI: the BatchJob grouper's minMember is 1 unless ``kai.scheduler/batch-min-member`` overrides
it (kai-scheduler/KAI-Scheduler v0.17.0 ``pkg/podgrouper/podgrouper/plugins/job/job_grouper.go``
``calcMinMember`` L105-121; the key in ``plugins/constants/constants.go`` L32).
"""

from __future__ import annotations

from ..demand import PodSet
from ..model.base import KubeObject
from .base import Gang, annotation_int, count_at, template_at

KAI_MIN_MEMBER = "kai.scheduler/batch-min-member"
MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"  # job_controller.go JobMinParallelismAnnotation


def _pods(obj: KubeObject) -> tuple[int, PodSet]:
    where = obj.describe()
    parallelism = count_at(obj.spec, ("parallelism",), 1, f"{where} spec.parallelism")
    completions = count_at(obj.spec, ("completions",), parallelism, f"{where} spec.completions")
    template = template_at(obj.spec, ("template",), "spec.template")
    count = min(parallelism, completions)
    minimum = annotation_int(obj, MIN_PARALLELISM)
    # Kueue's webhook refuses a minimum outside 0 < min < parallelism (validatePartialAdmissionCreate);
    # such a Job never becomes a Workload, and the count stays whole here.
    usable = minimum if minimum is not None and 0 < minimum < count else None
    return count, PodSet("main", count, template, "spec.template", usable)


def kueue_gangs(obj: KubeObject) -> list[Gang]:
    _, pod_set = _pods(obj)
    return [Gang(obj, obj, (pod_set,))]


def kai_gangs(obj: KubeObject) -> list[Gang]:
    count, pod_set = _pods(obj)
    minimum = annotation_int(obj, KAI_MIN_MEMBER) or 1
    return [Gang(obj, obj, (PodSet(pod_set.name, min(minimum, count), pod_set.template, pod_set.path),))]
