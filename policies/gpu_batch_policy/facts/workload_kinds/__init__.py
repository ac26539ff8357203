"""Pod sets of every workload kind Kueue and KAI schedule, one module per family (issue 11 item 4).

``kueue_gangs(model)`` lists each Kueue Workload a stack's objects become; ``kai_gangs(model)``
each KAI PodGroup's minimum.  Every kind of Kueue's integration registry has its module, listed
in :mod:`.registry`: :mod:`batch_job`, :mod:`jobset`, :mod:`pods` (plain Pods and pod groups),
:mod:`kubeflow` (PyTorchJob, TFJob, PaddleJob, XGBoostJob, JAXJob, MPIJob), :mod:`trainjob`
(TrainJob, through the training runtime it references),
:mod:`leaderworkerset`, :mod:`serving` (Deployment, StatefulSet), :mod:`ray` (RayJob, RayCluster,
RayService), :mod:`appwrapper` (AppWrapper, its components' pod sets) and :mod:`spark`
(SparkApplication).  Each module cites the
upstream code it counts by.  Objects a chart renders count like declared ones (the model holds
both).  A gang that cannot be counted before apply is returned as a :class:`Counted` with
``error`` set, so a rule can say "cannot check" instead of guessing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from ..demand import CannotTellError
from ..model import StackModel
from ..model.base import KubeObject
from . import cronjob, pods, ray, trainjob
from .base import Gang
from .registry import INTEGRATIONS
from .resources import adjust_resources

__all__ = ["FAMILIES", "Counted", "Gang", "kai_gangs", "kueue_gangs"]

Counter = Callable[[KubeObject], list[Gang]]

# (API group, kind) -> (Kueue counter, KAI counter), from Kueue's integration registry
# (:mod:`.registry`); pods and Ray are handled over the model.
FAMILIES: dict[tuple[str, str], tuple[Counter, Counter]] = {
    **{(i.group, i.kind): i.counters for i in INTEGRATIONS if i.counters is not None},
    # Not an integration, but every Job it creates is one (:mod:`.cronjob`).
    ("batch", "CronJob"): (cronjob.kueue_gangs, cronjob.kai_gangs),
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
    train_counter = trainjob.kai_gangs if kai else trainjob.kueue_gangs
    for obj in model.kube_objects(trainjob.GROUP, "TrainJob"):
        out.append(_count(obj, obj, partial(train_counter, model, obj)))
    for obj in model.objects:
        family = FAMILIES.get((obj.group, obj.kind))
        if family is not None:
            out.append(_count(obj, obj, partial(family[1] if kai else family[0], obj)))
    return out


def _adjusted(model: StackModel, counted: list[Counted]) -> list[Counted]:
    """Each gang as Kueue totals it: RuntimeClass overhead and LimitRange defaults (:mod:`.resources`)."""
    return [dataclasses.replace(c, gangs=adjust_resources(model, c.gangs)) for c in counted]


def kueue_gangs(model: StackModel) -> list[Counted]:
    """Every Kueue Workload the stack's workloads become (labelled or not: the caller decides)."""
    return model.memo("workload_kinds.kueue", lambda: _adjusted(model, _gangs(model, kai=False)))


def kai_gangs(model: StackModel) -> list[Counted]:
    """Every KAI PodGroup minimum of the stack's workloads."""
    return model.memo("workload_kinds.kai", lambda: _adjusted(model, _gangs(model, kai=True)))
