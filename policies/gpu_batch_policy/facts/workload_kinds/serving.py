"""apps/v1 Deployment and StatefulSet under Kueue (and KAI).

Kueue: a Deployment's pods are admitted one by one (its integration labels them for the pod
integration; each pod is a Workload of one), so the gang is one pod; a StatefulSet is ONE
Workload of ``replicas`` pods, default 1 (kubernetes-sigs/kueue v0.19.2
``pkg/controller/jobs/statefulset/statefulset_reconciler.go`` ``constructWorkload`` L346-352;
``pkg/controller/jobs/deployment``).  A StatefulSet labelled only on its pod template is not
managed as a whole: its pods are queued one by one (:mod:`queue_names`).
KAI: the default grouper's minMember is 1 for both (``defaultgrouper/default_grouper.go``).
"""

from __future__ import annotations

from ..demand import PodSet
from ..model.base import KubeObject
from .base import Gang, count_at, template_at
from .queue_names import queued_pod_by_pod


def kueue_gangs(obj: KubeObject) -> list[Gang]:
    template = template_at(obj.spec, ("template",), "spec.template")
    if obj.kind == "StatefulSet" and not queued_pod_by_pod(obj):
        replicas = count_at(obj.spec, ("replicas",), 1, "spec.replicas")
        return [Gang(obj, obj, (PodSet("main", replicas, template, template.path),))]
    return [Gang(obj, obj, (PodSet("main", 1, template, template.path),))]


def kai_gangs(obj: KubeObject) -> list[Gang]:
    template = template_at(obj.spec, ("template",), "spec.template")
    return [Gang(obj, obj, (PodSet("main", 1, template, template.path),))]
