"""leaderworkerset.x-k8s.io/v1 LeaderWorkerSet.

Kueue admits every group (replica) as its own Workload: a leader pod set of 1 (when a
leaderTemplate is given) and a worker pod set of ``size - 1`` (or ``size`` workers without a
leader template); ``size`` defaults to 1 (kubernetes-sigs/kueue v0.19.2
``pkg/controller/jobs/leaderworkerset/leaderworkerset_reconciler.go`` ``podSets`` L400-430).
KAI: one PodGroup per group with minMember ``size`` (kai-scheduler/KAI-Scheduler v0.17.0
``pkg/podgrouper/podgrouper/plugins/leaderworkerset/lws_grouper.go`` L66-84), which is the same
pods as Kueue's Workload.
"""

from __future__ import annotations

from ...primitives.values import dig
from ..demand import PodSet
from ..model.base import KubeObject
from .base import Gang, count_at, template_at


def kueue_gangs(obj: KubeObject) -> list[Gang]:
    base = ("leaderWorkerTemplate",)
    size = count_at(obj.spec, (*base, "size"), 1, "spec.leaderWorkerTemplate.size")
    worker = template_at(obj.spec, (*base, "workerTemplate"), "spec.leaderWorkerTemplate.workerTemplate")
    pod_sets: list[PodSet] = []
    workers = size
    if isinstance(dig(obj.spec, *base, "leaderTemplate"), dict):
        leader = template_at(obj.spec, (*base, "leaderTemplate"), "spec.leaderWorkerTemplate.leaderTemplate")
        pod_sets.append(PodSet("leader", 1, leader, leader.path))
        workers -= 1
    pod_sets.append(PodSet("worker", max(workers, 0), worker, worker.path))
    return [Gang(obj, obj, tuple(pod_sets))]


kai_gangs = kueue_gangs
