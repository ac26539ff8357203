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

The operand DaemonSets the controller creates on GPU nodes (``operand_manifests``) are added too,
so the cluster-fit rules count them (their requests on every GPU node, their images for egress):
``controllers/state_manager.go`` ``addState`` lists the states, each from
``assets/<state>/*daemonset.yaml`` (names below); ``controllers/object_controls.go``
``applyCommonDaemonsetConfig`` gives each the ClusterPolicy's ``daemonsets.tolerations`` and
``priorityClassName``, the component's ``resources`` and ``repository/image:version``, and
``setRuntimeClassName`` the ``nvidia`` class.  Each real operand selects nodes labelled
``nvidia.com/gpu.deploy.<operand>=true``, which the operator sets on nodes whose NFD labels show an
NVIDIA PCI device (``gpuNodeLabels``) unless ``nvidia.com/gpu.deploy.operands=false``; on GKE those
are the nodes with ``cloud.google.com/gke-accelerator``, so that is the affinity modelled here.
Left out: the MIG manager (only MIG-capable GPUs get its label), MPS control daemon, sandbox/vGPU
states, and states the ClusterPolicy disables (``dcgm``, ``nodeStatusExporter`` by default).

Only a ClusterPolicy the chart really renders leads to these (``clusterPolicy.deployCR: false``
renders none, so nothing is added).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...primitives.values import dig
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


def _metadata(name: str) -> dict[str, Any]:
    """Name, the operator's component label, and a note that the controller (not Helm) makes it."""
    return {
        "name": name,
        "labels": {"app.kubernetes.io/component": "gpu-operator"},
        "annotations": {CREATED_BY_ANNOTATION: "ClusterPolicy controller"},
    }


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
                    "metadata": _metadata(name),
                    "handler": name,
                }
            )
    return manifests


# (ClusterPolicy spec key, DaemonSet name from assets/<state>/, enabled when the key says nothing)
OPERANDS: tuple[tuple[str, str, bool], ...] = (
    ("driver", "nvidia-driver-daemonset", True),
    ("toolkit", "nvidia-container-toolkit-daemonset", True),
    ("validator", "nvidia-operator-validator", True),
    ("devicePlugin", "nvidia-device-plugin-daemonset", True),
    ("dcgm", "nvidia-dcgm", False),
    ("dcgmExporter", "nvidia-dcgm-exporter", True),
    ("gfd", "gpu-feature-discovery", True),
    ("nodeStatusExporter", "nvidia-node-status-exporter", False),
)
# Container ports an operand serves, from its DaemonSet asset at v26.7.0: the dcgm-exporter's
# metrics (assets/state-dcgm-exporter/0800_daemonset.yaml: ``name: "metrics"``, ``containerPort:
# 9400``), which a PodMonitoring scrapes (rules/monitoring.py checks the port against these).
OPERAND_PORTS: dict[str, list[dict[str, Any]]] = {
    "nvidia-dcgm-exporter": [{"name": "metrics", "containerPort": 9400}],
}
GPU_NODE_AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": "cloud.google.com/gke-accelerator", "operator": "Exists"},
                        {"key": "nvidia.com/gpu.deploy.operands", "operator": "NotIn", "values": ["false"]},
                    ]
                }
            ]
        }
    }
}


def _image(component: Any) -> str | None:
    parts = [dig(component, k) for k in ("repository", "image", "version")]
    if not all(isinstance(p, str) and p for p in parts):
        return None
    repository, image, version = parts
    separator = "@" if str(version).startswith("sha256:") else ":"
    return f"{repository}/{image}{separator}{version}"


def operand_manifests(objects: Iterable[RenderedObject]) -> list[dict[str, Any]]:
    """The operand DaemonSets the controller will create for the rendered ClusterPolicies."""
    manifests: list[dict[str, Any]] = []
    for policy in cluster_policies(objects):
        spec = dig(policy, "spec")
        runtime = runtime_class_names(policy)
        tolerations = dig(spec, "daemonsets", "tolerations")
        priority = dig(spec, "daemonsets", "priorityClassName")
        for key, name, default in OPERANDS:
            component = dig(spec, key)
            if not _flag(dig(component, "enabled"), default):
                continue
            container: dict[str, Any] = {"name": name, "resources": dig(component, "resources") or {}}
            if name in OPERAND_PORTS:
                container["ports"] = [dict(p) for p in OPERAND_PORTS[name]]
            image = _image(component)
            if image is not None:
                container["image"] = image
            pod: dict[str, Any] = {
                "tolerations": tolerations if isinstance(tolerations, list) else [],
                "affinity": GPU_NODE_AFFINITY,
                "containers": [container],
            }
            if isinstance(priority, str) and priority:
                pod["priorityClassName"] = priority
            if runtime:
                pod["runtimeClassName"] = runtime[0]
            manifests.append(
                {
                    "apiVersion": "apps/v1",
                    "kind": "DaemonSet",
                    "metadata": _metadata(name),
                    "spec": {
                        "selector": {"matchLabels": {"app": name}},
                        "template": {"metadata": {"labels": {"app": name}}, "spec": pod},
                    },
                }
            )
    return manifests
