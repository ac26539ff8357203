"""Kubeflow training jobs: PyTorchJob, TFJob, PaddleJob, XGBoostJob, JAXJob (kubeflow.org/v1),
MPIJob (kubeflow.org/v2beta1).  (TrainJob: :mod:`.trainjob`.)

Kueue: one pod set per replica type the job has, in the integration's order, ``replicas``
defaulting to 1 (kubernetes-sigs/kueue v0.19.2
``pkg/controller/jobs/kubeflow/kubeflowjob/kubeflowjob_controller.go`` ``PodSets`` L112-125,
``OrderedReplicaTypes`` L184-193 (only the types present), ``podsCount`` L234-236); each kind's
order is its ``JobControl.OrderedReplicaTypes`` under ``pkg/controller/jobs/kubeflow/jobs/``:
PyTorchJob Master, Worker; TFJob Chief, Master, PS, Worker, Evaluator; PaddleJob and XGBoostJob
Master, Worker; JAXJob Worker.  A role outside that list is no pod set of Kueue's.  MPIJob (on in the 0.19.2 chart's default
``integrations.frameworks``, unlike PyTorchJob): a ``Launcher`` pod set then a ``Worker`` pod set,
each ``replicas`` (default 1) pods; ``runLauncherAsWorker`` changes nothing in the count
(``pkg/controller/jobs/mpijob/mpijob_controller.go`` ``PodSets``, ``orderedReplicaTypes``,
``podsCount``).  KAI's MPI grouper is the Kubeflow distributed grouper over ``mpiReplicaSpecs``
(``plugins/kubeflow/mpi/mpi-grouper.go`` ``GetPodGroupMetadata``).
KAI: ``spec.runPolicy.schedulingPolicy.minAvailable`` when set, else the sum of all replicas
(kai-scheduler/KAI-Scheduler v0.17.0 ``pkg/podgrouper/podgrouper/plugins/kubeflow/distributed_common.go``
L36-50, L62-97), for the kinds with a distributed grouper (``plugins/kubeflow/{pytorch,tensorflow,
xgboost,jax,mpi}``); a PaddleJob has none and gets the default grouper's ``MinAvailable: 1``.
"""

from __future__ import annotations

from ...primitives.values import Unknown, as_int, dig
from ..demand import CannotTellError, PodSet
from ..model.base import KubeObject
from .base import Gang, count_at, template_at

REPLICA_SPECS = {
    "PyTorchJob": "pytorchReplicaSpecs",
    "MPIJob": "mpiReplicaSpecs",
    "TFJob": "tfReplicaSpecs",
    "PaddleJob": "paddleReplicaSpecs",
    "XGBoostJob": "xgbReplicaSpecs",
    "JAXJob": "jaxReplicaSpecs",
}
# ``OrderedReplicaTypes`` of each kind (MPIJob: ``pkg/controller/jobs/mpijob`` ``orderedReplicaTypes``).
ORDERED_TYPES = {
    "PyTorchJob": ("Master", "Worker"),
    "MPIJob": ("Launcher", "Worker"),
    "TFJob": ("Chief", "Master", "PS", "Worker", "Evaluator"),
    "PaddleJob": ("Master", "Worker"),
    "XGBoostJob": ("Master", "Worker"),
    "JAXJob": ("Worker",),
}
KAI_DEFAULT_GROUPER = frozenset({"PaddleJob"})


def _pod_sets(obj: KubeObject) -> list[PodSet]:
    if obj.kind not in REPLICA_SPECS:
        raise CannotTellError(f"{obj.describe()} pods come from its training runtime")
    key = REPLICA_SPECS[obj.kind]
    specs = dig(obj.spec, key)
    if isinstance(specs, Unknown):
        raise CannotTellError(f"{obj.describe()} spec.{key}")
    out: list[PodSet] = []
    present = specs if isinstance(specs, dict) else {}
    for role in ORDERED_TYPES[obj.kind]:
        spec = present.get(role)
        if spec is None:
            continue
        path = f"spec.{key}.{role}"
        replicas = count_at(spec, ("replicas",), 1, f"{path}.replicas")
        out.append(PodSet(str(role), replicas, template_at(spec, ("template",), f"{path}.template"), path))
    return out


def kueue_gangs(obj: KubeObject) -> list[Gang]:
    return [Gang(obj, obj, tuple(_pod_sets(obj)))]


def kai_gangs(obj: KubeObject) -> list[Gang]:
    pod_sets = _pod_sets(obj)
    if obj.kind in KAI_DEFAULT_GROUPER:
        return (
            [Gang(obj, obj, (PodSet(pod_sets[0].name, 1, pod_sets[0].template, pod_sets[0].path),))]
            if pod_sets
            else []
        )
    minimum = as_int(dig(obj.spec, "runPolicy", "schedulingPolicy", "minAvailable"))
    if isinstance(minimum, Unknown):
        raise CannotTellError(f"{obj.describe()} spec.runPolicy.schedulingPolicy.minAvailable")
    if minimum is None or minimum <= 0:
        return [Gang(obj, obj, tuple(pod_sets))]
    # minAvailable pods, taken from the roles in order: a lower bound of what must start together.
    left, taken = minimum, []
    for pod_set in pod_sets:
        take = min(left, pod_set.count)
        taken.append(PodSet(pod_set.name, take, pod_set.template, pod_set.path))
        left -= take
    return [Gang(obj, obj, tuple(taken))]
