"""Wire-form resources for policy tests: any program's shape, not gpu-batch's components.

Each factory returns a *correct* object; tests break one thing with ``patch``.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from tests.policies.pack_harness import Res

POOL = "gcp:container/nodePool:NodePool"
CLUSTER = "gcp:container/cluster:Cluster"
RELEASE = "kubernetes:helm.sh/v3:Release"
KUEUE = "kueue.x-k8s.io"
# What GKE's queued provisioning needs in podSetUpdates (xpk templates/kueue_config.yaml.j2).
REQUEST_NODE_SELECTOR = {
    "key": "autoscaling.gke.io/provisioning-request",
    "valueFromProvisioningClassDetail": "ResizeRequestName",
}


def patch(res: Res, path: str, value: Any) -> Res:
    """Copy of ``res`` with the dotted ``path`` set (``[i]`` indexes lists); ``DELETE`` removes."""
    out = copy.deepcopy(res)
    keys: list[str | int] = [
        int(tok[1:-1]) if tok.startswith("[") else tok for tok in re.findall(r"\[\d+\]|[^.\[\]]+", path)
    ]
    cur: Any = out.props
    for key in keys[:-1]:
        cur = cur[key] if isinstance(key, int) else cur.setdefault(key, {})
    last = keys[-1]
    if value is DELETE:
        del cur[last]
    else:
        cur[last] = value
    return out


DELETE = object()


def k8s(api_version: str, kind: str, name: str, *, namespace: str | None = None, **top: Any) -> Res:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    if "labels" in top:
        meta["labels"] = top.pop("labels")
    props = {"apiVersion": api_version, "kind": kind, "metadata": meta, **top}
    group_version = api_version if "/" in api_version else f"core/{api_version}"
    pulumi_name = f"{namespace}/{name}" if namespace else name
    return Res(f"kubernetes:{group_version}:{kind}", pulumi_name, props)


def resource_group(flavor: str, quotas: dict[str, Any], **limits: dict[str, Any]) -> dict[str, Any]:
    """One group covering ``quotas``' resources with one flavor; ``limits`` maps resource → extra."""
    return {
        "coveredResources": list(quotas),
        "flavors": [
            {
                "name": flavor,
                "resources": [
                    {"name": r, "nominalQuota": q, **limits.get(r.replace("/", "_").replace(".", "_"), {})}
                    for r, q in quotas.items()
                ],
            }
        ],
    }


def cluster_queue(name: str = "team-cq", *, version: str = "v1beta2", **spec: Any) -> Res:
    body: dict[str, Any] = {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "team-a"}},
        "resourceGroups": [
            resource_group("gpu-flavor", {"cpu": 48.0, "memory": "192Gi", "nvidia.com/gpu": 8.0})
        ],
    }
    body.update(spec)
    return k8s(f"{KUEUE}/{version}", "ClusterQueue", name, spec=body)


def local_queue(
    name: str = "team-lq", namespace: str = "team-a", target: str = "team-cq", version: str = "v1beta2"
) -> Res:
    return k8s(f"{KUEUE}/{version}", "LocalQueue", name, namespace=namespace, spec={"clusterQueue": target})


def resource_flavor(name: str = "gpu-flavor", version: str = "v1beta2", **labels: str) -> Res:
    spec = {"nodeLabels": labels or {"cloud.google.com/gke-nodepool": "gpu-pool"}}
    return k8s(f"{KUEUE}/{version}", "ResourceFlavor", name, spec=spec)


def admission_check(name: str = "dws", prc: str = "dws-config", version: str = "v1beta2") -> Res:
    return k8s(
        f"{KUEUE}/{version}",
        "AdmissionCheck",
        name,
        spec={
            "controllerName": "kueue.x-k8s.io/provisioning-request",
            "parameters": {"apiGroup": KUEUE, "kind": "ProvisioningRequestConfig", "name": prc},
        },
    )


def provisioning_request_config(name: str = "dws-config", version: str = "v1beta2") -> Res:
    return k8s(
        f"{KUEUE}/{version}",
        "ProvisioningRequestConfig",
        name,
        spec={
            "provisioningClassName": "queued-provisioning.gke.io",
            "managedResources": ["nvidia.com/gpu"],
            "podSetUpdates": {"nodeSelector": [REQUEST_NODE_SELECTOR]},
        },
    )


def cohort(name: str, parent: str | None = None, version: str = "v1beta2", **spec: Any) -> Res:
    body = dict(spec)
    if parent is not None:
        body["parentName"] = parent
    return k8s(f"{KUEUE}/{version}", "Cohort", name, spec=body)


def priority_class(name: str, value: float, version: str = "v1beta2") -> Res:
    return k8s(f"{KUEUE}/{version}", "WorkloadPriorityClass", name, value=value, description=f"{name} jobs")


def namespace(name: str, **labels: str) -> Res:
    return k8s("v1", "Namespace", name, labels={"team": name, **labels})


def gke_cluster(name: str = "gpu-cluster", **props: Any) -> Res:
    body: dict[str, Any] = {"name": name, "location": "us-west1-b", "minMasterVersion": "1.33"}
    body.update(props)
    return Res(CLUSTER, name, body)


def queued_pool(name: str = "gpu-pool", **props: Any) -> Res:
    """A queued-provisioning pool as GKE's DWS how-to creates it (kueue.md §8)."""
    body: dict[str, Any] = {
        "name": name,
        "cluster": "gpu-cluster",
        "location": "us-west1-b",
        "initialNodeCount": 0.0,
        "autoscaling": {"totalMinNodeCount": 0.0, "totalMaxNodeCount": 10.0, "locationPolicy": "ANY"},
        "management": {"autoRepair": False, "autoUpgrade": True},
        "queuedProvisioning": {"enabled": True},
        "nodeConfig": {
            "machineType": "g2-standard-4",
            "guestAccelerators": [{"type": "nvidia-l4", "count": 1.0}],
            "reservationAffinity": {"consumeReservationType": "NO_RESERVATION"},
            "flexStart": True,
        },
    }
    body.update(props)
    return Res(POOL, name, body)


def flex_pool(name: str = "flex-pool") -> Res:
    return Res(
        POOL,
        name,
        {
            "name": name,
            "cluster": "gpu-cluster",
            "autoscaling": {"totalMinNodeCount": 0.0, "totalMaxNodeCount": 4.0, "locationPolicy": "ANY"},
            "management": {"autoRepair": False},
            "nodeConfig": {
                "machineType": "a3-highgpu-8g",
                "flexStart": True,
                "reservationAffinity": {"consumeReservationType": "NO_RESERVATION"},
            },
        },
    )


def cpu_pool(name: str = "system") -> Res:
    return Res(
        POOL,
        name,
        {
            "name": name,
            "cluster": "gpu-cluster",
            "nodeCount": 1.0,
            "nodeConfig": {"machineType": "e2-standard-4", "spot": True},
            "placementPolicy": {"type": "COMPACT"},
        },
    )


def helm_release(
    name: str, chart: str, values: dict[str, Any] | None = None, namespace: str = "default"
) -> Res:
    return Res(
        RELEASE, name, {"chart": chart, "version": "1.0.0", "namespace": namespace, "values": values or {}}
    )


def pinned_release(key: str, namespace: str, **extra: Any) -> Res:
    """A Release of the pinned chart ``key`` (charts.lock.yaml) as any program would declare it."""
    from components.chart_lock import locked

    chart = locked(key)
    props: dict[str, Any] = {"name": key, "version": chart.version, "namespace": namespace, "values": {}}
    if chart.source.startswith("oci://"):
        props["chart"] = chart.source
    else:
        props["chart"] = chart.name
        props["repositoryOpts"] = {"repo": chart.source}
    props.update(extra)
    return Res(RELEASE, key, props)


def kueue_release(config_yaml: str | None = None, **values: Any) -> Res:
    body: dict[str, Any] = dict(values)
    if config_yaml is not None:
        body.setdefault("managerConfig", {})["controllerManagerConfigYaml"] = config_yaml
    return helm_release("kueue", "oci://registry.k8s.io/kueue/charts/kueue", body, "kueue-system")


def ray_job(
    name: str = "trainer", namespace: str = "team-a", queue: str | None = "team-lq", **labels: str
) -> Res:
    all_labels = dict(labels)
    if queue is not None:
        all_labels["kueue.x-k8s.io/queue-name"] = queue
    return k8s(
        "ray.io/v1",
        "RayJob",
        name,
        namespace=namespace,
        labels=all_labels,
        spec={
            "entrypoint": "python train.py",
            "rayClusterSpec": {
                "headGroupSpec": {
                    "template": {
                        "spec": {"containers": [{"name": "head", "resources": {"limits": {"cpu": "2"}}}]}
                    }
                },
                "workerGroupSpecs": [
                    {
                        "groupName": "gpu",
                        "replicas": 2.0,
                        "template": {
                            "spec": {
                                "containers": [
                                    {"name": "w", "resources": {"limits": {"nvidia.com/gpu": "1"}}}
                                ]
                            }
                        },
                    }
                ],
            },
        },
    )


def ray_cluster(name: str = "interactive", namespace: str = "team-a", queue: str | None = "team-lq") -> Res:
    job = ray_job(name, namespace, queue)
    props = copy.deepcopy(job.props)
    props["kind"] = "RayCluster"
    props["spec"] = props["spec"]["rayClusterSpec"]
    return Res("kubernetes:ray.io/v1:RayCluster", job.name, props)
