"""A MultiKueue program as registrations: one manager, two workers, one provider per cluster.

Shapes are Kueue v0.19.2 v1beta2 (``apis/kueue/v1beta2/multikueue_types.go``); the manager's
ClusterQueue carries only the MultiKueue check, each worker's carries its own
ProvisioningRequest (DWS) check, and namespaces and LocalQueues are mirrored.
"""

from __future__ import annotations

import base64
from typing import Any

from tests.policies.pack_harness import Res

K = "kubernetes:kueue.x-k8s.io/v1beta2"
MANAGER = "urn:pulumi:test::gpu-batch::pulumi:providers:kubernetes::manager-k8s"
WORKERS = {
    "worker-us": "urn:pulumi:test::gpu-batch::pulumi:providers:kubernetes::worker-us-k8s",
    "worker-eu": "urn:pulumi:test::gpu-batch::pulumi:providers:kubernetes::worker-eu-k8s",
}
# What Kueue's create-multikueue-kubeconfig.sh writes: a ServiceAccount token, CA data, https server.
TOKEN_KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: {name}
  cluster:
    server: https://34.1.2.3
    certificate-authority-data: LS0tLS1CRUdJTg==
users:
- name: multikueue-sa
  user:
    token: not-a-real-token
contexts:
- name: {name}
  context: {{cluster: {name}, user: multikueue-sa}}
current-context: {name}
"""


def _obj(
    kind: str, name: str, spec: Any, provider: str, *, namespace: str | None = None, version: str = K
) -> Res:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    props: dict[str, Any] = {"apiVersion": f"{version.split(':', 1)[1]}", "kind": kind, "metadata": meta}
    if spec is not None:
        props["spec"] = spec
    cluster = provider.rsplit("::", 1)[-1]
    return Res(
        f"{version}:{kind}",
        f"{cluster}-{namespace + '-' if namespace else ''}{name}",
        props,
        provider=provider,
    )


def _cq(
    name: str,
    checks: list[str],
    gpus: int,
    provider: str,
    covered: tuple[str, ...] = ("cpu", "nvidia.com/gpu"),
) -> Res:
    quotas = {"cpu": "100", "nvidia.com/gpu": str(gpus), "memory": "1000Gi"}
    return _obj(
        "ClusterQueue",
        name,
        {
            "namespaceSelector": {},
            "admissionChecksStrategy": {"admissionChecks": [{"name": c} for c in checks]},
            "resourceGroups": [
                {
                    "coveredResources": list(covered),
                    "flavors": [
                        {
                            "name": "h100",
                            "resources": [{"name": r, "nominalQuota": quotas[r]} for r in covered],
                        }
                    ],
                }
            ],
        },
        provider,
    )


def secret(name: str, kubeconfig: str, provider: str = MANAGER, *, encoded: bool = True) -> Res:
    data = (
        {"data": {"kubeconfig": base64.b64encode(kubeconfig.encode()).decode()}}
        if encoded
        else {"stringData": {"kubeconfig": kubeconfig}}
    )
    props = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": "kueue-system"},
        **data,
    }
    return Res("kubernetes:core/v1:Secret", f"manager-{name}", props, provider=provider)


def multikueue_cluster(name: str, source: dict[str, Any], provider: str = MANAGER) -> Res:
    return _obj("MultiKueueCluster", name, {"clusterSource": source}, provider)


def manager(gpus: int = 16, *, worker_names: tuple[str, ...] = tuple(WORKERS)) -> list[Res]:
    out = [
        _obj(
            "AdmissionCheck",
            "multikueue",
            {
                "controllerName": "kueue.x-k8s.io/multikueue",
                "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": "workers"},
            },
            MANAGER,
        ),
        _obj("MultiKueueConfig", "workers", {"clusters": list(worker_names)}, MANAGER),
        _obj("ResourceFlavor", "h100", {}, MANAGER),
        _cq("team-a", ["multikueue"], gpus, MANAGER),
        _obj("LocalQueue", "team-a", {"clusterQueue": "team-a"}, MANAGER, namespace="team-a"),
        Res(
            "kubernetes:core/v1:Namespace",
            "manager-ns-team-a",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}},
            provider=MANAGER,
        ),
    ]
    for name in worker_names:
        out.append(
            multikueue_cluster(
                name, {"kubeConfig": {"locationType": "Secret", "location": f"{name}-kubeconfig"}}
            )
        )
        out.append(secret(f"{name}-kubeconfig", TOKEN_KUBECONFIG.format(name=name)))
    return out


def worker(name: str, gpus: int = 8, covered: tuple[str, ...] = ("cpu", "nvidia.com/gpu")) -> list[Res]:
    provider = WORKERS[name]
    return [
        _obj(
            "ProvisioningRequestConfig",
            "dws",
            {
                "provisioningClassName": "queued-provisioning.gke.io",
                "managedResources": ["nvidia.com/gpu"],
                "podSetUpdates": {
                    "nodeSelector": [
                        {
                            "key": "autoscaling.gke.io/provisioning-request",
                            "valueFromProvisioningClassDetail": "ResizeRequestName",
                        }
                    ]
                },
            },
            provider,
        ),
        _obj(
            "AdmissionCheck",
            "dws",
            {
                "controllerName": "kueue.x-k8s.io/provisioning-request",
                "parameters": {
                    "apiGroup": "kueue.x-k8s.io",
                    "kind": "ProvisioningRequestConfig",
                    "name": "dws",
                },
            },
            provider,
        ),
        _obj(
            "ResourceFlavor",
            "h100",
            {
                "tolerations": [
                    {"key": "cloud.google.com/gke-queued", "operator": "Exists", "effect": "NoSchedule"}
                ]
            },
            provider,
        ),
        _cq("team-a", ["dws"], gpus, provider, covered),
        _obj("LocalQueue", "team-a", {"clusterQueue": "team-a"}, provider, namespace="team-a"),
        Res(
            "kubernetes:core/v1:Namespace",
            f"{name}-ns-team-a",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}},
            provider=provider,
        ),
    ]


def program() -> list[Res]:
    """Manager quota 16 GPUs = 8 + 8 on the two workers: clean for every MultiKueue rule."""
    return [*manager(), *worker("worker-us"), *worker("worker-eu")]


def replace(resources: list[Res], name: str, new: Res | None) -> list[Res]:
    """``resources`` with the one named ``name`` replaced by ``new`` (or dropped)."""
    assert any(r.name == name for r in resources), name
    return [r for r in resources if r.name != name] + ([new] if new is not None else [])


def with_pools(max_nodes: int, pools_per_worker: int = 2) -> list[Res]:
    """``program()`` where each worker is a GKE cluster of its own, reached by its Kubernetes
    provider (whose kubeconfig depends on the cluster), with ``pools_per_worker`` queued
    one-L4-GPU pools of ``max_nodes`` nodes that the worker's flavor selects by a node label.
    Both workers' pools carry the same GKE names, as two regions built from one config do."""
    from tests.policies.pack_objects import gke_cluster, queued_pool

    out = [r for r in program() if not (r.type.endswith(":ResourceFlavor") and r.provider != MANAGER)]
    for name, provider in WORKERS.items():
        cluster = gke_cluster(f"{name}-cluster")
        out.append(cluster)
        out.append(
            Res(
                "pulumi:providers:kubernetes",
                provider.rsplit("::", 1)[-1],
                {},
                urn=provider,
                property_dependencies={"kubeconfig": [cluster.urn]},
            )
        )
        for i in range(pools_per_worker):
            pool = queued_pool(f"dws-{i}")
            pool.name = f"{name}-dws-{i}"
            pool.urn = f"urn:pulumi:test::gpu-batch::{pool.type}::{pool.name}"
            pool.props["cluster"] = f"{name}-cluster"
            pool.props["autoscaling"]["totalMaxNodeCount"] = float(max_nodes)
            pool.props["nodeConfig"]["labels"] = {"gpu-batch/dws": "l4"}
            pool.property_dependencies = {"cluster": [cluster.urn]}
            out.append(pool)
        out.append(
            _obj(
                "ResourceFlavor",
                "h100",
                {
                    "nodeLabels": {"gpu-batch/dws": "l4"},
                    "tolerations": [
                        {"key": "cloud.google.com/gke-queued", "operator": "Exists", "effect": "NoSchedule"}
                    ],
                },
                provider,
            )
        )
    return out
