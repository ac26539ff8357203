"""Small builders for stacks of GPU-batch resources, and a direct runner for stack policies.

Each builder returns one registration ``(type, props, urn, name)`` in wire form (numbers go
through a protobuf Struct and come back as floats, as the engine sends them).  ``run`` wraps
props in the policy SDK's ``unknown_checking_proxy`` and calls the policy's ``validate`` the way
the analyzer servicer does, including its handling of ``UnknownValueError`` ("cannot check yet"
becomes one advisory note, kept apart from violations).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format, struct_pb2
from pulumi_policy import (
    Policy,
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    StackValidationArgs,
)
from pulumi_policy.proxy import (
    UNKNOWN_NUMBER_VALUE,
    UNKNOWN_STRING_VALUE,
    UnknownValueError,
    unknown_checking_proxy,
)

Registration = tuple[str, dict[str, Any], str, str]
UNKNOWN = UNKNOWN_STRING_VALUE
UNKNOWN_NUMBER = UNKNOWN_NUMBER_VALUE


def wire(props: Mapping[str, Any]) -> dict[str, Any]:
    struct = struct_pb2.Struct()
    struct.update(dict(props))
    out: dict[str, Any] = json_format.MessageToDict(struct)
    return out


def registration(type_: str, name: str, props: Mapping[str, Any]) -> Registration:
    return (type_, wire(props), f"urn:pulumi:test::proj::{type_}::{name}", name)


def k8s(
    api_version: str,
    kind: str,
    name: str,
    *,
    namespace: str | None = None,
    spec: Any = None,
    labels: Mapping[str, Any] | str | None = None,
    annotations: Mapping[str, Any] | None = None,
    **top: Any,
) -> Registration:
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    if labels is not None:
        metadata["labels"] = dict(labels) if isinstance(labels, Mapping) else labels  # str: unknown
    if annotations is not None:
        metadata["annotations"] = dict(annotations)
    props: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": metadata, **top}
    if spec is not None:
        props["spec"] = spec
    group_version = api_version if "/" in api_version else f"core/{api_version}"
    pulumi_name = f"{namespace}/{name}" if namespace else name
    return registration(f"kubernetes:{group_version}:{kind}", pulumi_name, props)


# --- pods and Ray -------------------------------------------------------------------------------
def pod(
    *,
    cpu: str | None = "1",
    memory: str | None = "2Gi",
    gpu: int | str | None = None,
    gpu_as_limit: bool = False,
    annotations: Mapping[str, Any] | None = None,
    labels: Mapping[str, Any] | None = None,
    node_selector: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A pod template with one container; GPUs as requests (or limits only, like the KAI samples)."""
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    if cpu is not None:
        requests["cpu"] = cpu
    if memory is not None:
        requests["memory"] = memory
    if gpu is not None:
        (limits if gpu_as_limit else requests)["nvidia.com/gpu"] = str(gpu)
        limits["nvidia.com/gpu"] = str(gpu)
    resources: dict[str, Any] = {"requests": requests}
    if limits:
        resources["limits"] = limits
    template: dict[str, Any] = {
        "spec": {"containers": [{"name": "ray", "image": "rayproject/ray", "resources": resources}]}
    }
    if node_selector:
        template["spec"]["nodeSelector"] = dict(node_selector)
    meta: dict[str, Any] = {}
    if annotations:
        meta["annotations"] = dict(annotations)
    if labels:
        meta["labels"] = dict(labels)
    if meta:
        template["metadata"] = meta
    return template


def workers(
    name: str, template: dict[str, Any], replicas: int, min_replicas: int | None = None, **extra: Any
) -> dict[str, Any]:
    group: dict[str, Any] = {"groupName": name, "replicas": replicas, "template": template, **extra}
    if min_replicas is not None:
        group["minReplicas"] = min_replicas
    return group


def cluster_spec(head: dict[str, Any], groups: Iterable[dict[str, Any]] = ()) -> dict[str, Any]:
    return {"headGroupSpec": {"template": head}, "workerGroupSpecs": list(groups)}


def ray_cluster(
    name: str,
    *,
    head: dict[str, Any] | None = None,
    groups: Iterable[dict[str, Any]] = (),
    labels: Mapping[str, Any] | str | None = None,
    namespace: str | None = None,
) -> Registration:
    spec = cluster_spec(head or pod(), groups)
    return k8s("ray.io/v1", "RayCluster", name, namespace=namespace, labels=labels, spec=spec)


def ray_job(
    name: str,
    *,
    head: dict[str, Any] | None = None,
    groups: Iterable[dict[str, Any]] = (),
    labels: Mapping[str, Any] | str | None = None,
    namespace: str | None = None,
    submission_mode: str | None = None,
) -> Registration:
    spec: dict[str, Any] = {
        "entrypoint": "python train.py",
        "rayClusterSpec": cluster_spec(head or pod(), groups),
    }
    if submission_mode is not None:
        spec["submissionMode"] = submission_mode
    return k8s("ray.io/v1", "RayJob", name, namespace=namespace, labels=labels, spec=spec)


def pytorch_job(
    name: str, workers: int, *, labels: Mapping[str, Any] | None = None, namespace: str = "ml"
) -> Registration:
    """A kubeflow.org/v1 PyTorchJob with ``workers`` one-GPU Worker replicas."""
    specs = {"Worker": {"replicas": workers, "template": pod(gpu=1)}}
    return k8s(
        "kubeflow.org/v1",
        "PyTorchJob",
        name,
        namespace=namespace,
        labels=labels,
        spec={"pytorchReplicaSpecs": specs},
    )


# --- KAI ----------------------------------------------------------------------------------------
def kai_queue(
    name: str,
    *,
    parent: str | None = None,
    cpu: tuple[Any, Any] | None = (-1, -1),
    gpu: tuple[Any, Any] | None = (-1, -1),
    memory: tuple[Any, Any] | None = (-1, -1),
    resources: Any = "default",
) -> Registration:
    """A KAI Queue; each resource is ``(quota, limit)`` (None = leave the resource out; a
    ``None`` inside the tuple leaves that field out)."""
    spec: dict[str, Any] = {}
    if parent is not None:
        spec["parentQueue"] = parent
    if resources == "default":
        built: dict[str, Any] = {}
        for key, pair in (("cpu", cpu), ("gpu", gpu), ("memory", memory)):
            if pair is None:
                continue
            entry: dict[str, Any] = {"overQuotaWeight": 1}
            if pair[0] is not None:
                entry["quota"] = pair[0]
            if pair[1] is not None:
                entry["limit"] = pair[1]
            built[key] = entry
        spec["resources"] = built
    elif resources is not None:
        spec["resources"] = resources
    return k8s("scheduling.run.ai/v2", "Queue", name, spec=spec)


# --- Helm ---------------------------------------------------------------------------------------
def helm_release(
    name: str,
    chart: str,
    values: Mapping[str, Any] | str,
    *,
    namespace: str | None = None,
    version: str | None = None,
) -> Registration:
    props: dict[str, Any] = {"name": name, "chart": chart, "values": values}
    if namespace is not None:
        props["namespace"] = namespace
    if version is not None:
        props["version"] = version
    return registration("kubernetes:helm.sh/v3:Release", name, props)


def kai_release(gpu_sharing: bool | None = True, **values: Any) -> Registration:
    merged: dict[str, Any] = dict(values)
    if gpu_sharing is not None:
        merged["global"] = {"gpuSharing": gpu_sharing}
    return helm_release(
        "kai-scheduler",
        "oci://ghcr.io/nvidia/kai-scheduler/kai-scheduler",
        merged,
        namespace="kai-scheduler",
        version="v0.13.0",
    )


def kuberay_release(
    batch_scheduler: str | None = "kai-scheduler", *, enabled: bool | None = None, version: str = "1.7.0"
) -> Registration:
    values: dict[str, Any] = {}
    scheduler: dict[str, Any] = {}
    if batch_scheduler is not None:
        scheduler["name"] = batch_scheduler
    if enabled is not None:
        scheduler["enabled"] = enabled
    if scheduler:
        values["batchScheduler"] = scheduler
    return helm_release(
        "kuberay-operator", "kuberay-operator", values, namespace="kuberay-system", version=version
    )


# --- Kueue --------------------------------------------------------------------------------------
KUEUE = "kueue.x-k8s.io/v1beta2"


def flavor(name: str, node_labels: Mapping[str, Any] | None = None, *, api: str = KUEUE) -> Registration:
    return k8s(api, "ResourceFlavor", name, spec={"nodeLabels": dict(node_labels)} if node_labels else {})


def cluster_queue(
    name: str,
    quotas: Mapping[str, Mapping[str, Any]],
    *,
    covered: Iterable[str] = ("cpu", "memory", "nvidia.com/gpu"),
    cohort: str | None = None,
    checks: Iterable[str] = (),
    borrowing: Mapping[str, Mapping[str, Any]] | None = None,
    lending: Mapping[str, Mapping[str, Any]] | None = None,
    api: str = KUEUE,
) -> Registration:
    """``quotas``: flavor -> resource -> nominalQuota (one resource group covering ``covered``)."""
    covered = list(covered)
    flavors = []
    for fname, per_res in quotas.items():
        resources = []
        for res in covered:
            entry: dict[str, Any] = {"name": res, "nominalQuota": per_res.get(res, 0)}
            if borrowing and res in borrowing.get(fname, {}):
                entry["borrowingLimit"] = borrowing[fname][res]
            if lending and res in lending.get(fname, {}):
                entry["lendingLimit"] = lending[fname][res]
            resources.append(entry)
        flavors.append({"name": fname, "resources": resources})
    spec: dict[str, Any] = {
        "namespaceSelector": {},
        "resourceGroups": [{"coveredResources": covered, "flavors": flavors}],
    }
    beta1 = api.endswith("v1beta1")
    if cohort is not None:
        spec["cohort" if beta1 else "cohortName"] = cohort
    checks = list(checks)
    if checks:
        if beta1:
            spec["admissionChecks"] = checks
        else:
            spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": c} for c in checks]}
    return k8s(api, "ClusterQueue", name, spec=spec)


def local_queue(name: str, namespace: str, cq: str, *, api: str = KUEUE) -> Registration:
    return k8s(api, "LocalQueue", name, namespace=namespace, spec={"clusterQueue": cq})


def provisioning(
    name: str = "dws", klass: str = "queued-provisioning.gke.io", *, api: str = KUEUE
) -> list[Registration]:
    """An AdmissionCheck ``name`` and its ProvisioningRequestConfig ``<name>-config``."""
    return [
        k8s(
            api,
            "AdmissionCheck",
            name,
            spec={
                "controllerName": "kueue.x-k8s.io/provisioning-request",
                "parameters": {
                    "apiGroup": "kueue.x-k8s.io",
                    "kind": "ProvisioningRequestConfig",
                    "name": f"{name}-config",
                },
            },
        ),
        k8s(
            api,
            "ProvisioningRequestConfig",
            f"{name}-config",
            spec={"provisioningClassName": klass, "managedResources": ["nvidia.com/gpu"]},
        ),
    ]


def priority_class(name: str, value: int, *, api: str = KUEUE) -> Registration:
    return k8s(api, "WorkloadPriorityClass", name, value=value)


# --- GKE ----------------------------------------------------------------------------------------
def gke_cluster(name: str = "gpu-cluster", location: str = "us-west1-b") -> Registration:
    return registration(
        "gcp:container/cluster:Cluster",
        name,
        {"name": name, "location": location, "removeDefaultNodePool": True},
    )


def node_pool(
    name: str,
    *,
    machine_type: str = "g2-standard-4",
    accelerator: str | None = "nvidia-l4",
    gpus: int | str = 1,
    max_nodes: int | str = 10,
    queued: bool = False,
    cluster: str = "gpu-cluster",
    labels: Mapping[str, str] | None = None,
) -> Registration:
    node_config: dict[str, Any] = {"machineType": machine_type}
    if accelerator is not None:
        node_config["guestAccelerators"] = [{"type": accelerator, "count": gpus}]
    if labels:
        node_config["labels"] = dict(labels)
    props: dict[str, Any] = {
        "name": name,
        "cluster": cluster,
        "location": "us-west1-b",
        "nodeConfig": node_config,
        "autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": max_nodes, "locationPolicy": "ANY"},
        "initialNodeCount": 0,
    }
    if queued:
        props["queuedProvisioning"] = {"enabled": True}
    return registration("gcp:container/nodePool:NodePool", name, props)


# --- running a policy ---------------------------------------------------------------------------
@dataclass
class Outcome:
    """What one stack-policy run produced: violation messages, and the "cannot check yet" note."""

    violations: list[str] = field(default_factory=list)
    cannot_check: str | None = None

    def mentions(self, *parts: str) -> bool:
        return any(all(p in v for p in parts) for v in self.violations)


def _opts() -> PolicyResourceOptions:
    return PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], parent=None)


def run(
    policy: Policy, resources: Iterable[Registration], config: Mapping[str, Any] | None = None
) -> Outcome:
    """Run a stack policy on ``resources`` as the servicer's AnalyzeStack does."""
    policy_resources = [
        PolicyResource(t, unknown_checking_proxy(props), urn, name, _opts(), None, None, [], {})
        for t, props, urn, name in resources
    ]
    args = StackValidationArgs(policy_resources, dict(config or {}))
    outcome = Outcome()

    def report(message: str, urn: str | None = None) -> None:
        outcome.violations.append(message)

    try:
        policy.validate(args, report)  # type: ignore[attr-defined]
    except UnknownValueError as err:
        outcome.cannot_check = err.message
    return outcome
