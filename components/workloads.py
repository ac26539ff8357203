"""Ray workloads (``ray.io/v1`` RayJob and RayCluster) declared as code.

How a workload reaches its queue (reference/kai-kuberay-skypilot.md §2.3-2.4, kueue.md §6):

* Kueue: the label ``kueue.x-k8s.io/queue-name: <LocalQueue>`` on the RayJob/RayCluster, and
  ``kueue.x-k8s.io/priority-class: <WorkloadPriorityClass>``.  Kueue suspends the object and
  admits it whole: the gang.
* KAI: the label ``kai.scheduler/queue: <leaf queue>`` on the RayJob/RayCluster (KubeRay copies
  it onto the pods and sets ``schedulerName: kai-scheduler``), and the ``priorityClassName``
  label.  KAI's podgrouper gangs the head with every worker group.

Every pod has requests equal to limits (a Guaranteed pod: what Kueue charges to the quota is
exactly what the node must hold).  Pods that use a GPU -- a whole one, or a KAI fraction --
tolerate the GPU pools' ``nvidia.com/gpu`` taint; for a fraction this is essential, because a pod
without an ``nvidia.com/gpu`` limit gets no toleration from GKE's admission plugin and would
never reach a GPU node.  A fraction is requested with the pod annotation ``gpu-fraction`` and
never with a GPU limit, which KAI rejects (§1.4).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

import pulumi

from components.gpu_pool import GPU_TAINT_KEY
from components.gpudirect.pod_wiring import PodWiring, wire
from components.k8s_object import KubeObject, compact, inherited_depends_on

POLICIES_DIR: Final = Path(__file__).resolve().parents[1] / "policies"
if str(POLICIES_DIR) not in sys.path:  # the pack's Ray rules, as components/chart_crds.py does
    sys.path.insert(0, str(POLICIES_DIR))

from gpu_batch_policy.rules.kuberay.auth import supports_token_auth  # noqa: E402

API_VERSION = "ray.io/v1"
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
KAI_QUEUE_LABEL = "kai.scheduler/queue"
KAI_PRIORITY_LABEL = "priorityClassName"
GPU_FRACTION_ANNOTATION = "gpu-fraction"
GPU_RESOURCE = "nvidia.com/gpu"
# The head's standard ports, as in KubeRay's samples (KubeRay would add them when missing).
HEAD_PORTS = (
    {"containerPort": 6379, "name": "gcs-server"},
    {"containerPort": 8265, "name": "dashboard"},
    {"containerPort": 10001, "name": "client"},
)
# KubeRay's recommended log volume: Ray writes logs under /tmp/ray.
LOG_VOLUME = "ray-logs"
# What Pod Security ``restricted`` requires of every container (kubernetes/pod-security-admission
# v0.36.2 policy/: check_allowPrivilegeEscalation.go, check_capabilities_restricted.go,
# check_runAsNonRoot.go, check_seccompProfile_restricted.go).  ``runAsUser`` is the Ray images'
# own user: ray-project/ray docker/base-deps/Dockerfile ``ARG RAY_UID=1000`` (``useradd ... ray
# --uid $RAY_UID``); without a number the kubelet cannot verify runAsNonRoot for the image's
# named ``USER ray`` and refuses to start the container.  KubeRay v1.7.0 copies the Ray
# container's securityContext to the init containers it injects (``common/pod.go``:
# ``wait-gcs-ready``, ``wait-for-tls-ip-san``).
RESTRICTED_SECURITY_CONTEXT: dict[str, Any] = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "runAsNonRoot": True,
    "runAsUser": 1000,
    "seccompProfile": {"type": "RuntimeDefault"},
}
# KubeRay v1.7.0 ``common/job.go`` ``GetDefaultSubmitterContainer``: the submitter Job's container
# (name, the head's image, these resources) when a RayJob gives no ``submitterPodTemplate``.
SUBMITTER_CONTAINER = "ray-job-submitter"
SUBMITTER_RESOURCES: dict[str, Any] = {
    "limits": {"cpu": "1", "memory": "1Gi"},
    "requests": {"cpu": "500m", "memory": "200Mi"},
}


@dataclass(frozen=True)
class RayPodArgs:
    """One head or worker group."""

    image: str
    cpu: str
    memory: str
    gpu: int = 0
    gpu_fraction: float | None = None
    ray_start_params: Mapping[str, str] = field(default_factory=dict)
    # Worker groups only.
    group_name: str | None = None
    replicas: int = 1
    min_replicas: int | None = None
    max_replicas: int | None = None
    # Extra pod-template annotations (Kueue's pod-set topology request).
    annotations: Mapping[str, str] = field(default_factory=dict)
    # GPUDirect wiring when every pool the group's GPU pods may land on is a GPUDirect pool.
    gpudirect: PodWiring | None = None


@dataclass(frozen=True)
class RayJobArgs:
    entrypoint: str | None
    runtime_env_yaml: str | None = None
    submission_mode: str | None = None
    shutdown_after_job_finishes: bool = True
    ttl_seconds_after_finished: int | None = None
    active_deadline_seconds: int | None = None


@dataclass(frozen=True)
class RayWorkloadArgs:
    name: str
    namespace: str
    kind: Literal["RayJob", "RayCluster"]
    labels: Mapping[str, str]
    head: RayPodArgs
    workers: tuple[RayPodArgs, ...] = ()
    ray_version: str | None = None
    job: RayJobArgs | None = None
    # The team's namespace enforces Pod Security restricted: every container the workload makes
    # carries RESTRICTED_SECURITY_CONTEXT, the K8sJobMode submitter included.
    restricted: bool = False


def queue_labels(
    scheduler: Literal["kueue", "kai"], queue: str, priority_class: str | None
) -> dict[str, str]:
    """The labels that put a workload in its queue (and priority class) for ``scheduler``."""
    if scheduler == "kueue":
        return compact({KUEUE_QUEUE_LABEL: queue, KUEUE_PRIORITY_LABEL: priority_class})
    return compact({KAI_QUEUE_LABEL: queue, KAI_PRIORITY_LABEL: priority_class})


def pod_template(pod: RayPodArgs, container: str, *, restricted: bool = False) -> dict[str, Any]:
    amounts = compact({"cpu": pod.cpu, "memory": pod.memory, GPU_RESOURCE: str(pod.gpu) if pod.gpu else None})
    head = container == "ray-head"
    uses_gpu = bool(pod.gpu) or pod.gpu_fraction is not None
    spec = compact(
        {
            "containers": [
                compact(
                    {
                        "name": container,
                        "image": pod.image,
                        "ports": [dict(p) for p in HEAD_PORTS] if head else None,
                        "resources": {"limits": dict(amounts), "requests": dict(amounts)},
                        "volumeMounts": [{"mountPath": "/tmp/ray", "name": LOG_VOLUME}],
                        "securityContext": dict(RESTRICTED_SECURITY_CONTEXT) if restricted else None,
                    }
                )
            ],
            "tolerations": [{"key": GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}]
            if uses_gpu
            else None,
            "volumes": [{"name": LOG_VOLUME, "emptyDir": {}}],
        }
    )
    fraction = format(pod.gpu_fraction, "g") if pod.gpu_fraction is not None else None
    annotations = {**pod.annotations, **({GPU_FRACTION_ANNOTATION: fraction} if fraction else {})}
    if pod.gpudirect is not None and pod.gpu:
        wire(spec, annotations, pod.gpudirect)
    return compact({"metadata": {"annotations": annotations} if annotations else None, "spec": spec})


def ray_cluster_spec(workload: RayWorkloadArgs) -> dict[str, Any]:
    head = compact(
        {
            "rayStartParams": dict(workload.head.ray_start_params),
            "template": pod_template(workload.head, "ray-head", restricted=workload.restricted),
        }
    )
    workers = [
        compact(
            {
                "groupName": worker.group_name,
                "replicas": worker.replicas,
                "minReplicas": worker.min_replicas,
                "maxReplicas": worker.max_replicas,
                "rayStartParams": dict(worker.ray_start_params),
                "template": pod_template(worker, "ray-worker", restricted=workload.restricted),
            }
        )
        for worker in workload.workers
    ]
    return compact(
        {
            "rayVersion": workload.ray_version,
            "authOptions": {"mode": "token"} if token_auth(workload.ray_version) else None,
            "headGroupSpec": head,
            "workerGroupSpecs": workers,
        }
    )


def token_auth(ray_version: str | None) -> bool:
    """Whether the cluster's Ray supports KubeRay token auth (``spec.authOptions.mode: token``):
    Ray 2.52.0 or later, as KubeRay v1.7.0 ``utils/validation.go`` ``ValidateRayClusterSpec``
    requires (the pack's ``ray-token-auth-valid`` judges the same).

    With it, KubeRay v1.7.0 creates a Secret with a random token per RayCluster
    (``raycluster_controller.go`` ``reconcileAuthSecret``), sets ``RAY_AUTH_MODE=token`` and the
    token on every Ray container (``common/pod.go`` ``SetContainerTokenAuthEnvVars``), and its own
    dashboard client sends it (``dashboardclient`` ``x-ray-authorization``): the job API (8265)
    and GCS then refuse a caller without the token, even from inside the namespace.  ``mode`` must
    be written: ``utils.IsAuthEnabled`` reads an empty mode as off."""
    return supports_token_auth(ray_version)


def ray_job_spec(workload: RayWorkloadArgs) -> dict[str, Any]:
    job = workload.job
    assert job is not None
    return compact(
        {
            "shutdownAfterJobFinishes": job.shutdown_after_job_finishes,
            "entrypoint": job.entrypoint,
            "runtimeEnvYAML": job.runtime_env_yaml,
            "submissionMode": job.submission_mode,
            "ttlSecondsAfterFinished": job.ttl_seconds_after_finished,
            "activeDeadlineSeconds": job.active_deadline_seconds,
            "submitterPodTemplate": submitter_template(workload),
            "rayClusterSpec": ray_cluster_spec(workload),
        }
    )


def submitter_template(workload: RayWorkloadArgs) -> dict[str, Any] | None:
    """Under restricted, KubeRay's default submitter pod (no securityContext) would be refused:
    give K8sJobMode (the default mode) the same container with the restricted context.  KubeRay
    v1.7.0 ``rayjob_controller.go`` ``getSubmitterTemplate``/``configureSubmitterContainer`` fills
    the command of a container that has none, as for its default."""
    job = workload.job
    if not workload.restricted or job is None or job.submission_mode not in (None, "K8sJobMode"):
        return None
    container = {
        "name": SUBMITTER_CONTAINER,
        "image": workload.head.image,
        "resources": SUBMITTER_RESOURCES,
        "securityContext": dict(RESTRICTED_SECURITY_CONTEXT),
    }
    return {"spec": {"restartPolicy": "Never", "containers": [container]}}


class RayWorkload(pulumi.ComponentResource):
    """One RayJob or RayCluster; ``opts.depends_on`` should name its queue and the KubeRay release."""

    object: KubeObject

    def __init__(self, name: str, args: RayWorkloadArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-batch:workloads:Ray", name, None, opts)
        spec = ray_job_spec(args) if args.kind == "RayJob" else ray_cluster_spec(args)
        self.object = KubeObject(
            f"{name}-{args.kind.lower()}",
            api_version=API_VERSION,
            kind=args.kind,
            metadata={
                "name": args.name,
                "namespace": args.namespace,
                "labels": {"app.kubernetes.io/managed-by": "pulumi", **args.labels},
            },
            spec=spec,
            opts=pulumi.ResourceOptions(parent=self, depends_on=inherited_depends_on(opts)),
        )
        self.register_outputs({"kind": args.kind, "name": args.name, "namespace": args.namespace})
