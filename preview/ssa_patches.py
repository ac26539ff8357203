"""Validate what a pulumi-kubernetes ``<Kind>Patch`` leaves on the cluster, not the patch alone.

A ``kubernetes:<group/version>:<Kind>Patch`` resource (``DeploymentPatch``, ``NamespacePatch``,
...) is a server-side-apply partial object: pulumi-kubernetes sends only its fields, and the API
server merges them into the live object of the same apiVersion, kind, namespace and name
(pulumi-kubernetes docs, "Server-Side Apply" / "Patch resources").  A partial Deployment alone
lacks ``spec.selector``; what the API server validates is the merged object.  So each patch is
merged into the object of the same identity the cluster's other declared objects or Helm releases
hold, and the merged object is validated; a patch whose target nothing in the cluster declares is
validated as it stands (server-side apply then creates it from the patch's fields alone).

The merge follows server-side apply's list semantics for what patches here touch: maps merge
key by key; lists of maps whose every item has a ``name`` (containers, initContainers, volumes,
env) are ``listType=map`` keyed by ``name`` in the Kubernetes OpenAPI (``x-kubernetes-list-map-keys``);
``volumeMounts`` is keyed by ``mountPath``; any other list is atomic and replaced.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from gpu_batch_policy.facts.schema.patches import is_patch as is_patch_type

from preview.manifests import object_identity
from preview.records import RecordedResource

# Kubernetes OpenAPI x-kubernetes-list-map-keys of the lists a patch may extend.
LIST_KEYS = {"volumeMounts": "mountPath"}


def is_patch(resource: RecordedResource) -> bool:
    """A ``<Kind>Patch`` registration, decided as the pack decides it (``IsPatchResource``)."""
    return resource.type.startswith("kubernetes:") and is_patch_type(
        resource.type.rsplit(":", 1)[-1], resource.inputs.get("kind")
    )


def _merge_list(field: str, live: list[Any], patch: list[Any]) -> list[Any]:
    key = LIST_KEYS.get(field, "name")
    if not all(isinstance(i, Mapping) and key in i for i in [*live, *patch]):
        return copy.deepcopy(patch)
    merged = [copy.deepcopy(i) for i in live]
    for item in patch:
        at = next((n for n, i in enumerate(merged) if i[key] == item[key]), None)
        if at is None:
            merged.append(copy.deepcopy(item))
        else:
            merged[at] = merge(merged[at], item)
    return merged


def merge(live: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """``patch`` applied onto ``live`` (neither is changed)."""
    out = copy.deepcopy(dict(live))
    for field, value in patch.items():
        current = out.get(field)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            out[field] = merge(current, value)
        elif isinstance(value, list) and isinstance(current, list):
            out[field] = _merge_list(field, current, value)
        else:
            out[field] = copy.deepcopy(value)
    return out


def applied(
    objects: Iterable[Mapping[str, Any]], patches: Sequence[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """``objects`` with each patch merged into its target; an untargeted patch appended as is."""
    result = list(objects)
    for patch in patches:
        at = next((n for n, o in enumerate(result) if object_identity(o) == object_identity(patch)), None)
        if at is None:
            result.append(patch)
        else:
            result[at] = merge(result[at], patch)
    return result
