"""Pod sets of every workload kind Kueue and KAI schedule, one module per family (issue 11 item 4).

``kueue_gangs(model)`` lists each Kueue Workload a stack's objects become; ``kai_gangs(model)``
each KAI PodGroup's minimum.  Families: :mod:`batch_job`, :mod:`jobset`, :mod:`pods` (plain Pods
and pod groups), :mod:`kubeflow` (PyTorchJob, MPIJob, TrainJob), :mod:`leaderworkerset`, :mod:`serving`
(Deployment, StatefulSet), :mod:`ray` (RayJob, RayCluster, RayService).  Each module cites the
upstream code it counts by.  Objects a chart renders count like declared ones (the model holds
both).  A gang that cannot be counted before apply is returned as a :class:`Counted` with
``error`` set, so a rule can say "cannot check" instead of guessing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from ..demand import CannotTellError
from ..model import StackModel
from ..model.base import KubeObject
from . import batch_job, jobset, kubeflow, leaderworkerset, pods, ray, serving
from .base import Gang

__all__ = ["FAMILIES", "Counted", "Gang", "kai_gangs", "kueue_gangs"]

Counter = Callable[[KubeObject], list[Gang]]

# (API group, kind) -> (Kueue counter, KAI counter); pods and Ray are handled over the model.
FAMILIES: dict[tuple[str, str], tuple[Counter, Counter]] = {
    ("batch", "Job"): (batch_job.kueue_gangs, batch_job.kai_gangs),
    ("jobset.x-k8s.io", "JobSet"): (jobset.kueue_gangs, jobset.kai_gangs),
    ("kubeflow.org", "PyTorchJob"): (kubeflow.kueue_gangs, kubeflow.kai_gangs),
    ("kubeflow.org", "MPIJob"): (kubeflow.kueue_gangs, kubeflow.kai_gangs),
    ("trainer.kubeflow.org", "TrainJob"): (kubeflow.kueue_gangs, kubeflow.kai_gangs),
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): (leaderworkerset.kueue_gangs, leaderworkerset.kai_gangs),
    ("apps", "Deployment"): (serving.kueue_gangs, serving.kai_gangs),
    ("apps", "StatefulSet"): (serving.kueue_gangs, serving.kai_gangs),
}


@dataclass(frozen=True)
class Counted:
    """The gangs of one object, or why they cannot be counted yet."""

    obj: KubeObject
    subject: object
    gangs: tuple[Gang, ...]
    error: str | None = None


def _count(obj: KubeObject, subject: object, counter: Callable[[], list[Gang]]) -> Counted:
    try:
        return Counted(obj, subject, tuple(counter()))
    except CannotTellError as why:
        return Counted(obj, subject, (), why.what)


def _gangs(model: StackModel, kai: bool) -> list[Counted]:
    out: list[Counted] = []
    ray_counter = ray.kai_gangs if kai else ray.kueue_gangs
    for workload in model.ray_workloads():
        out.append(_count(workload.obj, workload, partial(ray_counter, workload)))
    bare = [o for o in model.objects if o.group == "" and o.kind == "Pod"]
    if bare:
        counted = _count(bare[0], bare[0], partial(pods.kai_gangs if kai else pods.kueue_gangs, bare))
        if counted.error is not None:
            out.append(counted)
        else:
            out.extend(Counted(g.obj, g.subject, (g,)) for g in counted.gangs)
    for obj in model.objects:
        family = FAMILIES.get((obj.group, obj.kind))
        if family is not None:
            out.append(_count(obj, obj, partial(family[1] if kai else family[0], obj)))
    return out


def kueue_gangs(model: StackModel) -> list[Counted]:
    """Every Kueue Workload the stack's workloads become (labelled or not: the caller decides)."""
    return model.memo("workload_kinds.kueue", lambda: _gangs(model, kai=False))


def kai_gangs(model: StackModel) -> list[Counted]:
    """Every KAI PodGroup minimum of the stack's workloads."""
    return model.memo("workload_kinds.kai", lambda: _gangs(model, kai=True))
