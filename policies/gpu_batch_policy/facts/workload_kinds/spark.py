"""sparkoperator.k8s.io/v1beta2 SparkApplication, as Kueue v0.19.2 builds its pod sets.

kubernetes-sigs/kueue v0.19.2 ``pkg/controller/jobs/sparkapplication/sparkapplication_controller.go``
``PodSets``: a ``driver`` pod set of 1 and an ``executor`` pod set of ``spec.executor.instances``
(default 0, ``numInitialExecutors``).  Their templates are not the application's ``template``
fields but pods built like spark-operator's defaulter does (``sparkapplication_podset.go``
``buildDriverPodTemplateSpec`` / ``buildExecutorPodTemplateSpec`` / ``mutateSparkPod``): one
container (``spark-kubernetes-driver`` / ``spark-kubernetes-executor``) whose requests are
``coreRequest`` (cpu) and ``memory`` (Java units converted: ``k``/``kb`` -> ``Ki`` ... ``p``/``pb``
-> ``Pi``, kubeflow/spark-operator v2.5.1 ``pkg/util/util.go``
``ConvertJavaMemoryStringToK8sMemoryString``), whose limits are ``coreLimit``, ``memoryLimit`` and
``gpu.name: gpu.quantity`` (when both set and > 0), plus the role's ``sidecars`` and
``initContainers``, ``priorityClassName``, ``nodeSelector``, ``affinity`` and ``tolerations``;
its labels and annotations are the role's ``template`` metadata with ``labels`` / ``annotations``
merged over (``addObjectMeta``).  ``cores`` is not read: without ``coreRequest`` Kueue sees no CPU.
KAI v0.17.0's podgrouper has a Spark grouper (``plugins/spark``) that groups by the application
selector with minMember 1, which is the default grouper's gang of one pod.
"""

from __future__ import annotations

from typing import Any

from ...primitives.values import Unknown, as_int, dig
from ..demand import CannotTellError, PodSet
from ..model.base import KubeObject
from ..model.workloads import PodTemplate
from .base import Gang, count_at

# spark-operator ``pkg/util/util.go`` ``unitMap``.
JAVA_UNITS = {"k": "Ki", "kb": "Ki", "m": "Mi", "mb": "Mi", "g": "Gi", "gb": "Gi", "t": "Ti", "tb": "Ti"}
JAVA_UNITS.update({"p": "Pi", "pb": "Pi"})
CONTAINERS = {"driver": "spark-kubernetes-driver", "executor": "spark-kubernetes-executor"}


def java_memory(memory: str) -> str:
    """``ConvertJavaMemoryStringToK8sMemoryString``: a suffix matched case-insensitively is trimmed
    case-sensitively, so ``512M`` becomes ``512MMi`` (which Kueue then fails to parse)."""
    for unit, k8s_unit in JAVA_UNITS.items():
        if memory.lower().endswith(unit):
            return (memory[: -len(unit)] if memory.endswith(unit) else memory) + k8s_unit
    return memory


def _role_template(obj: KubeObject, role: str) -> PodTemplate:
    spec = dig(obj.spec, role)
    if isinstance(spec, Unknown):
        raise CannotTellError(f"{obj.describe()} spec.{role}")
    spec = spec if isinstance(spec, dict) else {}
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    for key, target, name in (
        ("coreRequest", requests, "cpu"),
        ("memory", requests, "memory"),
        ("coreLimit", limits, "cpu"),
        ("memoryLimit", limits, "memory"),
    ):
        value = spec.get(key)
        if isinstance(value, Unknown):
            raise CannotTellError(f"{obj.describe()} spec.{role}.{key}")
        if isinstance(value, str) and value:
            target[name] = java_memory(value) if key == "memory" else value
    gpu = spec.get("gpu")
    if isinstance(gpu, dict) and isinstance(gpu.get("name"), str) and gpu["name"]:
        quantity = as_int(gpu.get("quantity"))
        if isinstance(quantity, Unknown):
            raise CannotTellError(f"{obj.describe()} spec.{role}.gpu.quantity")
        if quantity is not None and quantity > 0:
            limits[gpu["name"]] = quantity
    main: dict[str, Any] = {"name": CONTAINERS[role], "resources": {"requests": requests, "limits": limits}}
    sidecars = spec.get("sidecars")
    inits = spec.get("initContainers")
    pod_spec: dict[str, Any] = {
        "containers": [main, *(sidecars if isinstance(sidecars, list) else [])],
        "initContainers": list(inits) if isinstance(inits, list) else [],
    }
    for key in ("priorityClassName", "nodeSelector", "affinity", "tolerations"):
        if spec.get(key) is not None:
            pod_spec[key] = spec[key]
    base = dig(spec, "template", "metadata")
    labels = (
        {**(dig(base, "labels") or {}), **(spec.get("labels") or {})}
        if isinstance(base, dict)
        else spec.get("labels")
    )
    annotations = spec.get("annotations")
    if isinstance(base, dict):
        annotations = {**(dig(base, "annotations") or {}), **(annotations or {})}
    metadata = {"labels": labels or {}, "annotations": annotations or {}}
    return PodTemplate({"metadata": metadata, "spec": pod_spec}, f"spec.{role}")


def pod_sets(obj: KubeObject) -> list[PodSet]:
    executors = count_at(obj.spec, ("executor", "instances"), 0, f"{obj.describe()} spec.executor.instances")
    return [
        PodSet("driver", 1, _role_template(obj, "driver"), "spec.driver"),
        PodSet("executor", executors, _role_template(obj, "executor"), "spec.executor"),
    ]


def kueue_gangs(obj: KubeObject) -> list[Gang]:
    return [Gang(obj, obj, tuple(pod_sets(obj)))]


def kai_gangs(obj: KubeObject) -> list[Gang]:
    driver = pod_sets(obj)[0]
    return [Gang(obj, obj, (driver,))]
