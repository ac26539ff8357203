"""AppWrapper's validating webhook: what it refuses when an AppWrapper is created.

project-codeflare/appwrapper ``internal/webhook/appwrapper_webhook.go`` ``validateAppWrapperCreate``
(v1.2.1, the newest tag this machine holds; Kueue v0.19.2 vendors v1.2.2), rule by rule:

1. each ``spec.components[i].template`` must decode as a Kubernetes object
   (``unstructured.UnstructuredJSONScheme.Decode``: a mapping naming its ``kind``);
2. no nested AppWrappers: a component of kind ``workload.codeflare.dev/v1beta2`` AppWrapper is
   Forbidden;
3. a component that names a ``metadata.namespace`` other than the AppWrapper's is Forbidden
   ("AppWrappers cannot create objects in other namespaces");
4. every declared ``podSets[j]`` has a ``path`` (Required) that resolves to a pod template
   (``utils.GetPodTemplateSpec``);
5. AppWrapper's inference for the kinds it knows must succeed (``utils.InferPodSets``), and declared
   pod sets must agree with it (``utils.ValidatePodSets``: no duplicate paths; same count, same
   paths and same replicas as inferred when inference finds any);
6. Kueue's limit: between 1 and 8 pod sets in all (per component, the larger of declared and
   inferred).

Rule 3 of the webhook (the user's own RBAC for each component, ``userRBACAdmissionCheck``) needs
the requesting user and is not judged here.  Path resolution and inference are shared with the pod
sets the quota rules count (``workload_kinds.appwrapper_paths``).  The webhook exists wherever
AppWrappers can be created (it ships with the AppWrapper operator), so every refusal is mandatory.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.model import StackModel
from ...facts.model.base import KubeObject
from ...facts.workload_kinds.appwrapper_paths import (
    AwPodSet,
    Component,
    PathError,
    UnreadableError,
    components,
    declared_path,
    declared_replicas,
    infer_pod_sets,
    pod_template_at,
)
from ...primitives.values import Unknown
from ..kit.builders import stack_policy
from ..kit.report import Reporter

GROUP = "workload.codeflare.dev"
KIND = "AppWrapper"
VERSION = "v1beta2"
MAX_POD_SETS = 8  # Kueue's limit on a Workload's pod sets, enforced by AppWrapper's webhook


def _declared_problems(component: Component, obj: dict[str, Any]) -> list[str]:
    """Rule 4, and ValidatePodSets' duplicate paths."""
    problems: list[str] = []
    seen: set[str] = set()
    for index, entry in enumerate(component.declared):
        where = f"{component.path}.podSets[{index}].path"
        path = declared_path(entry)
        if not path:
            problems.append(f"{where} is required (a path to a pod template inside the component)")
            continue
        try:
            pod_template_at(obj, path)
        except PathError as why:
            problems.append(f"{where} '{path}' does not refer to a pod template: {why}")
        if path in seen:
            problems.append(f"{component.path}.podSets declares the path '{path}' twice")
        seen.add(path)
    return problems


def _agreement(component: Component, inferred: list[AwPodSet]) -> list[str]:
    """``ValidatePodSets``: declared pod sets must match AppWrapper's inference when it finds any."""
    if not component.declared or not inferred:
        return []
    where = f"{component.path}.podSets"
    if len(component.declared) != len(inferred):
        return [f"{where} declares {len(component.declared)} pod sets but AppWrapper infers {len(inferred)}"]
    declared = {declared_path(e): declared_replicas(e) for e in component.declared}
    problems: list[str] = []
    for pod_set in inferred:
        if pod_set.path not in declared:
            problems.append(f"{where} lacks the pod set at '{pod_set.path}' that AppWrapper infers")
        elif declared[pod_set.path] != pod_set.replicas:
            problems.append(
                f"{where} gives '{pod_set.path}' {declared[pod_set.path]} replicas but AppWrapper infers "
                f"{pod_set.replicas}"
            )
    return problems


def _component_problems(aw: KubeObject, component: Component) -> tuple[list[str], int]:
    """(refusals, pod sets counted toward the limit) of one component."""
    obj = component.template
    where = f"{component.path}.template"
    if not isinstance(obj, dict) or not isinstance(obj.get("kind"), str) or not obj.get("kind"):
        return [f"{where} is not a Kubernetes object (a mapping with apiVersion and kind)"], 0
    problems: list[str] = []
    if obj.get("kind") == KIND and obj.get("apiVersion") == f"{GROUP}/{VERSION}":
        problems.append(f"{where} is an AppWrapper: nested AppWrappers are forbidden")
    metadata = obj.get("metadata")
    namespace = metadata.get("namespace") if isinstance(metadata, dict) else None
    own = aw.namespace or "default"
    if isinstance(namespace, str) and namespace and namespace != own:
        problems.append(
            f"{where}.metadata.namespace is '{namespace}', not the AppWrapper's '{own}': AppWrappers cannot "
            "create objects in other namespaces"
        )
    problems += _declared_problems(component, obj)
    try:
        inferred = infer_pod_sets(obj)
    except PathError as why:
        return [*problems, f"{where}: AppWrapper cannot infer its pod sets: {why}"], 0
    problems += _agreement(component, inferred)
    return problems, max(len(component.declared), len(inferred))


def appwrapper_problems(aw: KubeObject) -> list[str]:
    """Every refusal of AppWrapper's webhook for ``aw``; raises UnreadableError on unknown values."""
    found = components(aw.spec)
    if isinstance(found, Unknown):
        raise UnreadableError(found)
    problems: list[str] = []
    pod_sets = 0
    for component in found:
        if isinstance(component.template, Unknown):
            raise UnreadableError(component.template)
        more, count = _component_problems(aw, component)
        problems += more
        pod_sets += count
    if pod_sets == 0:
        problems.append("spec.components holds no pod template (Kueue needs at least one pod set)")
    elif pod_sets > MAX_POD_SETS:
        problems.append(
            f"spec.components holds {pod_sets} pod sets; at most {MAX_POD_SETS} are allowed (Kueue's limit)"
        )
    return problems


FIX = (
    "keep each component in the AppWrapper's namespace, never wrap an AppWrapper, give each declared "
    "podSets entry a path (from 'template') to a pod template, and keep 1 to 8 pod sets"
)


def check_appwrappers(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for aw in model.kube_objects(GROUP, KIND):
        try:
            problems = appwrapper_problems(aw)
        except UnreadableError as why:
            reporter.cannot_check(aw, f"spec.components ({why.unknown.path})")
            continue
        for problem in problems:
            reporter.violation(aw, f"AppWrapper's webhook refuses it: {problem}", FIX)


POLICIES: list[Policy] = [
    stack_policy(
        "appwrapper-webhook",
        "AppWrappers pass AppWrapper's admission webhook: components in its own namespace, no nested "
        "AppWrappers, declared pod-set paths that lead to pod templates and agree with inference, 1 to 8 pod sets.",
        check_appwrappers,
    ),
]
