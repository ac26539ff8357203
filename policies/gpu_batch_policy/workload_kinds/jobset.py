"""jobset.x-k8s.io/v1alpha2 JobSet.

Kueue: one pod set per replicatedJob, ``replicas`` (default 1) x the Job's pods (``parallelism``,
default 1, or ``completions`` when smaller) -- kubernetes-sigs/kueue v0.19.2
``pkg/controller/jobs/jobset/jobset_controller.go`` ``PodSets`` L115-136, ``PodsCountPerReplica``
L231-239, ``podsCount`` L241-244.
KAI: with startupPolicyOrder AnyOrder (the default) every replicatedJob and every replica is a
required subgroup of ``parallelism`` pods; with InOrder one replicatedJob at a time
(kai-scheduler/KAI-Scheduler v0.17.0 ``pkg/podgrouper/podgrouper/plugins/jobset/jobset_grouper.go``
``computePodGroupMinSubGroup`` L105-129, ``buildSubGroups`` L131-178,
``singleReplicaSubGroupMinMember`` L207-235).  For InOrder the smallest replicatedJob is taken:
a lower bound, so a gang found too big is certainly too big.
"""

from __future__ import annotations

from typing import Any

from ..demand import CannotTellError, PodSet
from ..model.base import KubeObject
from ..values import Unknown, as_str, dig
from .base import Gang, count_at, template_at


def _pod_sets(obj: KubeObject) -> list[PodSet]:
    jobs = dig(obj.spec, "replicatedJobs")
    if isinstance(jobs, Unknown):
        raise CannotTellError(f"{obj.describe()} spec.replicatedJobs")
    out: list[PodSet] = []
    for index, job in enumerate(jobs if isinstance(jobs, list) else []):
        path = f"spec.replicatedJobs[{index}]"
        name = as_str(dig(job, "name"))
        replicas = count_at(job, ("replicas",), 1, f"{path}.replicas")
        spec: Any = dig(job, "template", "spec")
        parallelism = count_at(spec, ("parallelism",), 1, f"{path} parallelism")
        completions = count_at(spec, ("completions",), parallelism, f"{path} completions")
        template = template_at(spec, ("template",), f"{path}.template.spec.template")
        label = name if isinstance(name, str) else path
        out.append(PodSet(label, replicas * min(parallelism, completions), template, path))
    return out


def kueue_gangs(obj: KubeObject) -> list[Gang]:
    return [Gang(obj, obj, tuple(_pod_sets(obj)))]


def kai_gangs(obj: KubeObject) -> list[Gang]:
    pod_sets = _pod_sets(obj)
    order = as_str(dig(obj.spec, "startupPolicy", "startupPolicyOrder"))
    if isinstance(order, Unknown):
        raise CannotTellError(f"{obj.describe()} spec.startupPolicy")
    if order == "InOrder" and pod_sets:
        return [Gang(obj, obj, (min(pod_sets, key=lambda p: p.count),))]
    return [Gang(obj, obj, tuple(pod_sets))]
