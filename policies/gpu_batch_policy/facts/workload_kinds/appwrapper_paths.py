"""AppWrapper's pod-set paths and inference, as its controller and webhook compute them.

project-codeflare/appwrapper ``pkg/utils/utils.go`` (v1.2.1, the newest tag this machine holds;
Kueue v0.19.2's ``go.mod`` vendors v1.2.2, whose ``pkg/utils`` is the same for everything below):

* ``getValueAtPath``: a path starts with ``template`` and continues with ``.field`` and ``[index]``
  steps; every step must exist (a missing field, a non-map, a bad index is an error).
* ``InferPodSets``: pod sets Kueue will count for the kinds AppWrapper knows (the group, version
  AND kind must match):

  - ``batch/v1`` Job: one pod set at ``template.spec.template`` of ``parallelism`` pods (default
    1), or ``completions`` when smaller; a non-integer value is ignored (``GetReplicas`` errors);
  - ``jobset.x-k8s.io/v1alpha2`` JobSet: one pod set per replicatedJob that has a ``template``,
    ``replicas`` (default 1) x the Job's pods as above;
  - ``kubeflow.org/v1`` PyTorchJob: ``Master`` then ``Worker``, each when it has a ``template``,
    ``replicas`` pods (absent: 1; not an integer: an error);
  - ``ray.io/v1`` RayCluster / RayJob (under ``rayClusterSpec``): the head (1) then each worker
    group with a ``template``, ``replicas`` pods (absent: 1, and ``numOfHosts`` is not read);
  - ``v1`` Pod (path ``template``, 1), ``apps/v1`` Deployment and StatefulSet
    (``template.spec.template``, ``replicas``, absent: 1);
  - any other kind: no pod sets (the component must declare them).

  Each inferred path must then resolve to a pod template (``GetPodTemplateSpec``: a mapping with a
  ``spec`` mapping), else inference fails.
* ``EnsureComponentStatusInitialized`` / ``GetComponentPodSpecs``: a component's pod sets are its
  declared ``podSets`` when it has any, else the inferred ones; one whose path does not resolve
  is skipped.  ``Replicas``: a pod set's ``replicas`` defaults to 1.

Values are read as the API server stores them: a YAML integer is a JSON integer (an integral
number); anything else (a string, a fraction) is "not an integer".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ...primitives.values import Unknown

TEMPLATE = "template"
_STEP = re.compile(r"\.([^.\[]+)|\[([^\]]*)\]")


class PathError(ValueError):
    """A path that ``getValueAtPath`` refuses (the message is AppWrapper's, in YAML words)."""


class UnreadableError(Exception):
    """A value on the path is unknown until apply."""

    def __init__(self, unknown: Unknown) -> None:
        super().__init__(unknown.path)
        self.unknown = unknown


def value_at(obj: Any, path: str) -> Any:
    """``getValueAtPath``: the value ``path`` (``template.spec.x[0].y``) names in ``{"template": obj}``."""
    if not path.startswith(TEMPLATE):
        raise PathError("the first element of the path must be 'template'")
    cursor: Any = obj  # 'template' names the wrapped object itself
    rest, done = path[len(TEMPLATE) :], TEMPLATE
    while rest:
        if isinstance(cursor, Unknown):
            raise UnreadableError(cursor)
        match = _STEP.match(rest)
        if match is None or (rest.startswith(".") and match.group(1) is None):
            raise PathError(f"at '{done}' the path element '{rest}' is not '.field' or '[index]'")
        key, index = match.group(1), match.group(2)
        if index is not None:
            if not re.fullmatch(r"[+-]?\d+", index):
                raise PathError(f"at '{done}' the index '{index}' is not a number")
            if not isinstance(cursor, list):
                raise PathError(f"at '{done}' the value is not a list")
            position = int(index)
            if not 0 <= position < len(cursor):
                raise PathError(f"at '{done}' index {position} is out of bounds")
            cursor = cursor[position]
        else:
            if not isinstance(cursor, dict):
                raise PathError(f"at '{done}' the value is not a mapping")
            if key not in cursor:
                raise PathError(f"at '{done}' the field '{key}' is missing")
            cursor = cursor[key]
        done += match.group(0)
        rest = rest[match.end() :]
    if isinstance(cursor, Unknown):
        raise UnreadableError(cursor)
    return cursor


def pod_template_at(obj: Any, path: str) -> dict[str, Any]:
    """``GetPodTemplateSpec``: the mapping at ``path``, which must hold a ``spec`` mapping."""
    found = value_at(obj, path)
    if not isinstance(found, dict):
        raise PathError(f"the value at '{path}' is not a mapping")
    spec = found.get("spec")
    if isinstance(spec, Unknown):
        raise UnreadableError(spec)
    if not isinstance(spec, dict):
        raise PathError(f"the content at '{path}' does not contain a spec mapping")
    return found


def _int(value: Any) -> int | None:
    """A JSON integer (an integral number: Pulumi's wire sends every number as a float); a
    string, a fraction, a boolean is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    return int(value) if isinstance(value, float) and value.is_integer() else None


def _optional_int(obj: Any, path: str) -> int | None:
    """``GetReplicas``: the integer at ``path``, None when missing or not an integer."""
    try:
        value = value_at(obj, path)
    except PathError:
        return None
    return _int(value)


def _replicas(obj: Any, path: str) -> int:
    """``inferReplicas``: absent (or null) -> 1; not an integer -> an inference error."""
    parent, _, leaf = path.rpartition(".")
    holder = value_at(obj, parent) if parent else obj
    if not isinstance(holder, dict):
        raise PathError(f"the value at '{parent}' is not a mapping")
    value = holder.get(leaf)
    if isinstance(value, Unknown):
        raise UnreadableError(value)
    if value is None:
        return 1
    number = _int(value)
    if number is None:
        raise PathError(f"at '{path}' the value is not an integer")
    return number


def _has(obj: Any, path: str) -> bool:
    try:
        value_at(obj, path)
    except PathError:
        return False
    return True


@dataclass(frozen=True)
class AwPodSet:
    """One pod set of a component: where its template is and how many pods (``replicas``)."""

    path: str
    replicas: int


def _job_pods(obj: Any, prefix: str) -> int:
    count = _optional_int(obj, f"{prefix}parallelism")
    count = 1 if count is None else count
    completions = _optional_int(obj, f"{prefix}completions")
    return completions if completions is not None and completions < count else count


def _ray(obj: Any, prefix: str) -> list[AwPodSet]:
    out = [AwPodSet(f"{prefix}headGroupSpec.template", 1)]
    try:
        workers = value_at(obj, f"{prefix}workerGroupSpecs")
    except PathError:
        workers = None
    for index in range(len(workers) if isinstance(workers, list) else 0):
        group = f"{prefix}workerGroupSpecs[{index}]."
        if _has(obj, group + TEMPLATE):
            out.append(AwPodSet(group + TEMPLATE, _replicas(obj, group + "replicas")))
    return out


# (apiVersion, kind) -> (template path, replicas path) for the simple kinds (``templatesForGVK``).
SIMPLE_KINDS: dict[tuple[str, str], tuple[str, str]] = {
    ("v1", "Pod"): (TEMPLATE, ""),
    ("apps/v1", "Deployment"): ("template.spec.template", "template.spec.replicas"),
    ("apps/v1", "StatefulSet"): ("template.spec.template", "template.spec.replicas"),
}
# Every (apiVersion, kind) ``InferPodSets`` knows.
INFERRED_KINDS = frozenset(
    {
        ("batch/v1", "Job"),
        ("jobset.x-k8s.io/v1alpha2", "JobSet"),
        ("kubeflow.org/v1", "PyTorchJob"),
        ("ray.io/v1", "RayCluster"),
        ("ray.io/v1", "RayJob"),
        *SIMPLE_KINDS,
    }
)


def infer_pod_sets(obj: dict[str, Any]) -> list[AwPodSet]:
    """``InferPodSets`` for one component template; raises PathError where AppWrapper errors."""
    key = (obj.get("apiVersion"), obj.get("kind"))
    found: list[AwPodSet] = []
    if key == ("batch/v1", "Job"):
        found.append(AwPodSet("template.spec.template", _job_pods(obj, "template.spec.")))
    elif key == ("jobset.x-k8s.io/v1alpha2", "JobSet"):
        jobs = (
            value_at(obj, "template.spec.replicatedJobs")
            if _has(obj, "template.spec.replicatedJobs")
            else None
        )
        for index in range(len(jobs) if isinstance(jobs, list) else 0):
            prefix = f"template.spec.replicatedJobs[{index}]."
            if _has(obj, prefix + TEMPLATE):
                replicas = _optional_int(obj, prefix + "replicas")
                pods = _job_pods(obj, prefix + "template.spec.")
                found.append(
                    AwPodSet(prefix + "template.spec.template", (1 if replicas is None else replicas) * pods)
                )
    elif key == ("kubeflow.org/v1", "PyTorchJob"):
        for role in ("Master", "Worker"):
            prefix = f"template.spec.pytorchReplicaSpecs.{role}."
            if _has(obj, prefix + TEMPLATE):
                found.append(AwPodSet(prefix + TEMPLATE, _replicas(obj, prefix + "replicas")))
    elif key == ("ray.io/v1", "RayCluster"):
        found.extend(_ray(obj, "template.spec."))
    elif key == ("ray.io/v1", "RayJob"):
        found.extend(_ray(obj, "template.spec.rayClusterSpec."))
    elif (simple := SIMPLE_KINDS.get((str(key[0]), str(key[1])))) is not None:
        template_path, replicas_path = simple
        if _has(obj, template_path):
            found.append(AwPodSet(template_path, _replicas(obj, replicas_path) if replicas_path else 1))
    for pod_set in found:
        try:
            pod_template_at(obj, pod_set.path)
        except PathError as why:
            raise PathError(f"{pod_set.path} does not refer to a pod template: {why}") from None
    return found


@dataclass
class Component:
    """One ``spec.components[i]`` as AppWrapper reads it."""

    index: int
    template: Any  # the wrapped object (a mapping when well formed)
    declared: list[Any] = field(default_factory=list)  # raw ``podSets`` entries

    @property
    def path(self) -> str:
        return f"spec.components[{self.index}]"


def components(spec: Any) -> list[Component] | Unknown:
    """``spec.components`` of an AppWrapper (an Unknown when the list is unknown until apply)."""
    raw = spec.get("components") if isinstance(spec, dict) else None
    if isinstance(raw, Unknown):
        return raw
    out: list[Component] = []
    for index, item in enumerate(raw if isinstance(raw, list) else []):
        entry = item if isinstance(item, dict) else {}
        declared = entry.get("podSets")
        out.append(Component(index, entry.get("template"), declared if isinstance(declared, list) else []))
    return out


def declared_replicas(entry: Any) -> int:
    """``utils.Replicas``: a declared pod set's ``replicas``, default 1."""
    value = entry.get("replicas") if isinstance(entry, dict) else None
    if isinstance(value, Unknown):
        raise UnreadableError(value)
    number = _int(value)
    return 1 if number is None else number


def declared_path(entry: Any) -> str:
    """A declared pod set's ``path`` ("" when absent or not a string: the webhook requires one)."""
    value = entry.get("path") if isinstance(entry, dict) else None
    if isinstance(value, Unknown):
        raise UnreadableError(value)
    return value if isinstance(value, str) else ""


def effective_pod_sets(component: Component) -> list[tuple[AwPodSet, dict[str, Any]]]:
    """``GetComponentPodSpecs`` for one component: (pod set, its pod template) for each declared
    (else inferred) pod set whose path resolves; an inference error yields none (the webhook
    refuses such an AppWrapper, see ``rules.webhooks.appwrapper``)."""
    obj = component.template
    if not isinstance(obj, dict):
        return []
    if component.declared:
        sets = [AwPodSet(declared_path(e), declared_replicas(e)) for e in component.declared]
    else:
        try:
            sets = infer_pod_sets(obj)
        except PathError:
            return []
    out: list[tuple[AwPodSet, dict[str, Any]]] = []
    for pod_set in sets:
        try:
            out.append((pod_set, pod_template_at(obj, pod_set.path)))
        except PathError:
            continue
    return out
