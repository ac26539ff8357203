"""jobset.x-k8s.io/v1alpha2 JobSet.

Kueue: one pod set per replicatedJob, ``replicas`` (default 1) x the Job's pods (``parallelism``,
default 1, or ``completions`` when smaller) -- kubernetes-sigs/kueue v0.19.2
``pkg/controller/jobs/jobset/jobset_controller.go`` ``PodSets`` L115-136, ``PodsCountPerReplica``
L231-239, ``podsCount`` L241-244.
KAI: with startupPolicyOrder AnyOrder (the default) every replicatedJob and every replica is a
required subgroup of ``parallelism`` pods; with InOrder one replicatedJob at a time
(kai-scheduler/KAI-Scheduler v0.17.0 ``pkg/podgrouper/podgrouper/plugins/jobset/jobset_grouper.go``
``computePodGroupMinSubGroup`` L105-129, ``buildSubGroups`` L131-178,
``singleReplicaSubGroupMinMember`` L207-235); ``kai.scheduler/batch-min-member`` on the JobSet
sets how many replicatedJobs are needed, on a replicatedJob's Job template each replica's
minMember.  When fewer replicatedJobs than all are needed, those with the fewest GPUs are taken:
a lower bound, so a gang found too big is certainly too big.
"""

from __future__ import annotations

from typing import Any

from ...primitives.values import Unknown, as_int, as_str, dig
from ..demand import CannotTellError, PodSet
from ..model.base import KubeObject
from .base import Gang, count_at, template_at
from .batch_job import KAI_MIN_MEMBER


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


def _kai_leaf_min(job: Any, pod_set: PodSet, where: str) -> PodSet:
    """A replica's minMember: the Job template's ``kai.scheduler/batch-min-member`` (an invalid one
    is ``kai-batch-min-member``'s finding and counts as unset), else ``parallelism``, at most the
    pods of the replica (``singleReplicaSubGroupMinMember``)."""
    raw = dig(job, "template", "metadata", "annotations", KAI_MIN_MEMBER)
    if isinstance(raw, Unknown):
        raise CannotTellError(f"{where} annotation {KAI_MIN_MEMBER}")
    replicas = count_at(job, ("replicas",), 1, f"{where}.replicas")
    per_replica = pod_set.count // replicas if replicas > 0 else 0
    override = as_int(raw) if raw is not None else None
    if isinstance(override, int) and override >= 1:
        per_replica = min(override, per_replica)
    return PodSet(pod_set.name, replicas * per_replica, pod_set.template, pod_set.path)


def kai_gangs(obj: KubeObject) -> list[Gang]:
    """``computePodGroupMinSubGroup``: the JobSet's ``kai.scheduler/batch-min-member`` (>= 1, at
    most the number of replicatedJobs), else 1 for InOrder, else every replicatedJob; the fewest
    GPUs' worth of replicatedJobs is taken (a lower bound)."""
    jobs = dig(obj.spec, "replicatedJobs")
    pod_sets = [
        _kai_leaf_min(job, p, p.path)
        for job, p in zip(jobs if isinstance(jobs, list) else [], _pod_sets(obj), strict=False)
    ]
    order = as_str(dig(obj.spec, "startupPolicy", "startupPolicyOrder"))
    if isinstance(order, Unknown):
        raise CannotTellError(f"{obj.describe()} spec.startupPolicy")
    needed = len(pod_sets)
    override = as_int(obj.annotations.get(KAI_MIN_MEMBER))
    if isinstance(override, Unknown):
        raise CannotTellError(f"{obj.describe()} annotation {KAI_MIN_MEMBER}")
    if isinstance(override, int) and override >= 1:
        needed = min(override, needed)
    elif order == "InOrder":
        needed = min(1, needed)
    if needed >= len(pod_sets):
        return [Gang(obj, obj, tuple(pod_sets))]

    def gpus(pod_set: PodSet) -> Any:
        amount = pod_set.template.gpus()
        if isinstance(amount, Unknown):
            raise CannotTellError(f"{pod_set.path} GPU request")
        return amount * pod_set.count

    return [Gang(obj, obj, tuple(sorted(pod_sets, key=lambda p: (gpus(p), p.count))[:needed]))]
