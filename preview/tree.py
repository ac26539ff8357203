"""The readable tree the offline preview prints: what would be created, nested by parent.

Each line shows a resource's type and name and the handful of settings a reviewer checks for
that kind of resource (a GPU pool's machine, accelerators and autoscaling; a Helm release's
chart and version; a queue's namespace).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

from preview.records import RecordedResource, for_display


def _get(inputs: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(inputs, list):
            inputs = inputs[int(part)] if part.isdigit() and int(part) < len(inputs) else None
        elif isinstance(inputs, dict):
            inputs = inputs.get(part)
        else:
            return None
    return inputs


def _fields(*paths: str) -> Callable[[Any], list[str]]:
    def summarise(inputs: Any) -> list[str]:
        out = []
        for path in paths:
            value = _get(inputs, path)
            if value is not None:
                out.append(f"{path.rsplit('.', 1)[-1]}={value}")
        return out

    return summarise


def _node_pool(inputs: Any) -> list[str]:
    accel = _get(inputs, "nodeConfig.guestAccelerators.0")
    out = [f"machine={_get(inputs, 'nodeConfig.machineType')}"]
    if isinstance(accel, dict):
        out.append(f"gpus={accel.get('count')}x{accel.get('type')}")
    scaling = _get(inputs, "autoscaling") or {}
    if isinstance(scaling, dict):
        out.append(
            f"nodes={scaling.get('totalMinNodeCount')}..{scaling.get('totalMaxNodeCount')}"
            f" policy={scaling.get('locationPolicy')}"
        )
    if _get(inputs, "queuedProvisioning.enabled") is True:
        out.append("queued-provisioning")
    if _get(inputs, "nodeConfig.spot") is True:
        out.append("spot")
    if _get(inputs, "nodeConfig.flexStart") is True:
        out.append("flex-start")
    return out


def _custom_resource(inputs: Any) -> list[str]:
    namespace = _get(inputs, "metadata.namespace")
    name = _get(inputs, "metadata.name")
    return [f"{namespace}/{name}" if namespace else f"{name}"]


_SUMMARIES: dict[str, Callable[[Any], list[str]]] = {
    "gcp:container/cluster:Cluster": _fields(
        "location",
        "releaseChannel.channel",
        "minMasterVersion",
        "deletionProtection",
        "privateClusterConfig.enablePrivateNodes",
    ),
    "gcp:container/nodePool:NodePool": _node_pool,
    "kubernetes:helm.sh/v3:Release": _fields("chart", "version", "namespace"),
}


def summary(resource: RecordedResource) -> list[str]:
    inputs = for_display(resource.inputs)
    if resource.type in _SUMMARIES:
        return _SUMMARIES[resource.type](inputs)
    if resource.type.startswith("kubernetes:") and resource.custom and "metadata" in inputs:
        return _custom_resource(inputs)
    return []


def render_tree(resources: list[RecordedResource]) -> Iterator[str]:
    children: dict[str, list[RecordedResource]] = defaultdict(list)
    urns = {r.urn for r in resources}
    roots = []
    for r in resources:
        if r.parent and r.parent in urns:
            children[r.parent].append(r)
        else:
            roots.append(r)

    def walk(node: RecordedResource, prefix: str, last: bool, top: bool) -> Iterator[str]:
        branch = "" if top else ("└─ " if last else "├─ ")
        details = "  ".join(summary(node))
        yield f"{prefix}{branch}{node.type}  {node.name}" + (f"  {details}" if details else "")
        kids = children.get(node.urn, [])
        below = prefix if top else prefix + ("   " if last else "│  ")
        for i, kid in enumerate(kids):
            yield from walk(kid, below, i == len(kids) - 1, False)

    for root in roots:
        yield from walk(root, "", True, True)
