"""Objects the NVIDIA GPU Operator creates at run time from its ClusterPolicy, not through Helm.

Why: the ``gpu-operator`` chart renders a ClusterPolicy (``templates/clusterpolicy.yaml`` @
v26.7.0), and the operator's ClusterPolicy controller then creates the RuntimeClasses pods and
KAI's admission webhook name (``runtimeClassName: nvidia``).  A rule asking "does RuntimeClass
``nvidia`` exist?" must see them, or the pack would refuse every correct GPU Operator stack --
and only objects the release really leads to may be added, so the pack stays true to what exists.

Upstream facts (NVIDIA/gpu-operator @ v26.7.0, commit 10ee5b36):

- ``controllers/object_controls.go`` ``RuntimeClasses`` creates the *pre-requisites* state's
  classes: ``assets/pre-requisites/0200_runtime_class.yaml`` (name/handler ``FILLED_BY_OPERATOR``,
  replaced in ``transformRuntimeClass`` by ``getRuntimeClassName`` = ClusterPolicy
  ``spec.operator.runtimeClass``, else ``DefaultRuntimeClass`` ``"nvidia"``), plus
  ``0210_runtime_class_legacy.yaml`` (``nvidia-legacy``) and ``0220_runtime_class_cdi.yaml``
  (``nvidia-cdi``), which it skips (deletes) when CDI is off.
- ``controllers/state_manager.go`` ``isStateEnabled("pre-requisites")`` is
  ``!spec.cdi.IsNRIPluginEnabled()``: with the NRI plugin every class is removed
  (``clearRuntimeClasses``).
- ``api/nvidia/v1/clusterpolicy_types.go`` ``CDIConfigSpec.IsEnabled`` (unset = true) and
  ``IsNRIPluginEnabled`` (unset = false).

Only a ClusterPolicy the chart really renders leads to these (``clusterPolicy.deployCR: false``
renders none, so nothing is added).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..values import dig
from .render import RenderedObject

CLUSTER_POLICY_API = "nvidia.com/v1"
DEFAULT_RUNTIME_CLASS = "nvidia"
CDI_RUNTIME_CLASSES = ("nvidia-legacy", "nvidia-cdi")
# Marks the manifests as made by the operator, so descriptions and the report can say so.
CREATED_BY_ANNOTATION = "gpu-batch.dev/created-at-run-time-by"


def cluster_policies(objects: Iterable[RenderedObject]) -> list[dict[str, Any]]:
    return [
        o.manifest
        for o in objects
        if o.manifest.get("kind") == "ClusterPolicy" and o.manifest.get("apiVersion") == CLUSTER_POLICY_API
    ]


def _flag(value: Any, default: bool) -> bool:
    return value if isinstance(value, bool) else default


def runtime_class_names(policy: dict[str, Any]) -> list[str]:
    """The RuntimeClasses the controller creates for this ClusterPolicy (see module doc)."""
    if _flag(dig(policy, "spec", "cdi", "nriPluginEnabled"), False):
        return []
    name = dig(policy, "spec", "operator", "runtimeClass")
    names = [name if isinstance(name, str) and name else DEFAULT_RUNTIME_CLASS]
    if _flag(dig(policy, "spec", "cdi", "enabled"), True):
        names.extend(CDI_RUNTIME_CLASSES)
    return names


def runtime_manifests(objects: Iterable[RenderedObject]) -> list[dict[str, Any]]:
    """RuntimeClass manifests the operator will create for the rendered ClusterPolicies."""
    manifests: list[dict[str, Any]] = []
    seen: set[str] = set()
    for policy in cluster_policies(objects):
        for name in runtime_class_names(policy):
            if name in seen:
                continue
            seen.add(name)
            manifests.append(
                {
                    "apiVersion": "node.k8s.io/v1",
                    "kind": "RuntimeClass",
                    "metadata": {
                        "name": name,
                        "labels": {"app.kubernetes.io/component": "gpu-operator"},
                        "annotations": {CREATED_BY_ANNOTATION: "ClusterPolicy controller"},
                    },
                    "handler": name,
                }
            )
    return manifests
