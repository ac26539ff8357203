"""A TrainJob's ``runtimePatches`` applied to its runtime's replicatedJob templates.

kubeflow/trainer v2.2.1 ``pkg/runtime/core/trainingruntime.go`` ``mergeRuntimePatches``: for each
patch, each ``trainingRuntimeSpec.template.spec.replicatedJobs[]`` entry with a ``template`` is
applied to the runtime's replicatedJob of the same ``name`` as a Kubernetes strategic merge patch
of a ``batchv1.JobTemplateSpec`` (``strategicpatch.StrategicMergePatch``), before the pod sets are
counted.  The patch API (``pkg/apis/trainer/v1alpha1/trainjob_types.go`` ``JobSpecPatch``,
``PodSpecPatch``, ``ContainerPatch``) carries no ``parallelism`` and no container ``resources``,
so a patch never changes how many pods Kueue admits or what they request; it changes where they
land (``nodeSelector``, ``affinity``, ``tolerations``) and their labels, which the flavor and taint
rules read.

Strategic merge as Kubernetes does it for these types: mappings merge key by key (``null``
deletes), a list merges by its ``patchMergeKey`` when the Go type declares one (the table below,
from k8s.io/api core/v1 ``types.go`` tags), else the patch's list replaces it.  Directives
(``$patch``, ``$retainKeys``...) are not modelled, and a field outside the patch API (say
``parallelism``) is no patch Trainer applies: both are "cannot check", never silently dropped.
"""

from __future__ import annotations

import copy
from typing import Any

from ...primitives.values import Unknown
from ..demand import CannotTellError

# Path (field names from the JobTemplateSpec down; "*" = any list item) -> patchMergeKey.
MERGE_KEYS: dict[tuple[str, ...], str] = {
    ("spec", "template", "spec", "containers"): "name",
    ("spec", "template", "spec", "initContainers"): "name",
    ("spec", "template", "spec", "volumes"): "name",
    ("spec", "template", "spec", "imagePullSecrets"): "name",
    ("spec", "template", "spec", "schedulingGates"): "name",
    ("spec", "template", "spec", "containers", "*", "env"): "name",
    ("spec", "template", "spec", "containers", "*", "volumeMounts"): "mountPath",
    ("spec", "template", "spec", "initContainers", "*", "env"): "name",
    ("spec", "template", "spec", "initContainers", "*", "volumeMounts"): "mountPath",
}

# The fields the patch API has at each level (trainjob_types.go ``JobTemplatePatch``,
# ``JobSpecPatch``, ``PodTemplatePatch``, ``PodSpecPatch``, ``ContainerPatch``).
_CONTAINER = frozenset({"name", "env", "volumeMounts", "securityContext"})
ALLOWED: dict[tuple[str, ...], frozenset[str]] = {
    (): frozenset({"metadata", "spec"}),
    ("spec",): frozenset({"template"}),
    ("spec", "template"): frozenset({"metadata", "spec"}),
    ("spec", "template", "spec"): frozenset(
        {
            "serviceAccountName",
            "volumes",
            "initContainers",
            "containers",
            "imagePullSecrets",
            "securityContext",
            "nodeSelector",
            "affinity",
            "tolerations",
            "schedulingGates",
        }
    ),
    ("spec", "template", "spec", "containers", "*"): _CONTAINER,
    ("spec", "template", "spec", "initContainers", "*"): _CONTAINER,
}


def _merge(source: Any, patch: Any, path: tuple[str, ...], where: str) -> Any:
    if isinstance(patch, Unknown):
        raise CannotTellError(f"{where} ({patch.path})")
    if isinstance(patch, dict):
        if any(str(k).startswith("$") for k in patch):
            raise CannotTellError(f"{where}: a strategic-merge directive this pack does not apply")
        allowed = ALLOWED.get(path)
        extra = sorted(str(k) for k in patch if allowed is not None and k not in allowed)
        if extra:
            raise CannotTellError(
                f"{where}: {', '.join(extra)} is no field of the TrainJob runtime patch API (expected one of "
                f"{', '.join(sorted(allowed or ()))}); the API server would not apply it"
            )
        out = dict(source) if isinstance(source, dict) else {}
        for key, value in patch.items():
            if value is None:
                out.pop(key, None)
            else:
                out[key] = _merge(out.get(key), value, (*path, str(key)), f"{where}.{key}")
        return out
    if isinstance(patch, list):
        key = MERGE_KEYS.get(path)
        if key is None or not isinstance(source, list):
            return copy.deepcopy(patch)
        merged = [copy.deepcopy(item) for item in source]
        for item in patch:
            match = next(
                (
                    i
                    for i, old in enumerate(merged)
                    if isinstance(old, dict) and isinstance(item, dict) and old.get(key) == item.get(key)
                ),
                None,
            )
            if match is None:
                merged.append(copy.deepcopy(item))
            else:
                merged[match] = _merge(merged[match], item, (*path, "*"), f"{where}[{key}={item.get(key)}]")
        return merged
    return copy.deepcopy(patch)


def apply_runtime_patches(jobs: list[dict[str, Any]], patches: Any, where: str) -> list[dict[str, Any]]:
    """``jobs`` (the runtime's replicatedJobs) with every patch of ``patches`` merged in, in order."""
    if isinstance(patches, Unknown):
        raise CannotTellError(f"{where} ({patches.path})")
    out = [copy.deepcopy(job) for job in jobs]
    for index, patch in enumerate(patches if isinstance(patches, list) else []):
        spec = patch.get("trainingRuntimeSpec") if isinstance(patch, dict) else None
        template = spec.get("template") if isinstance(spec, dict) else None
        body = template.get("spec") if isinstance(template, dict) else None
        replicated = body.get("replicatedJobs") if isinstance(body, dict) else None
        if isinstance(replicated, Unknown):
            raise CannotTellError(f"{where}[{index}] ({replicated.path})")
        for job_patch in replicated if isinstance(replicated, list) else []:
            name = job_patch.get("name") if isinstance(job_patch, dict) else None
            if isinstance(name, Unknown):
                raise CannotTellError(f"{where}[{index}] ({name.path})")
            if not isinstance(job_patch, dict) or job_patch.get("template") is None:
                continue
            for job in out:
                if job.get("name") == name:
                    job["template"] = _merge(
                        job.get("template"), job_patch["template"], (), f"{where}[{index}] {name}"
                    )
    return out
