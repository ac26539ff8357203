"""ray.io/v1 RayJob, RayCluster and RayService, counted as Kueue 0.19.2 does.

kubernetes-sigs/kueue v0.19.2 ``pkg/controller/jobs/raycluster/common.go`` ``BuildPodSets``
L76-128: the head (count 1) plus one pod set per worker group of ``replicas`` x ``numOfHosts``
(``effectiveWorkerCount`` L64-73) -- every group, autoscaling or not; with
``enableInTreeAutoscaling`` the head also carries the autoscaler sidecar (500m / 512Mi unless
``autoscalerOptions.resources``: L101-106, L154-180).  A RayJob adds
(``pkg/controller/jobs/rayjob/rayjob_controller.go`` ``PodSets`` L133-154): in K8sJobMode -- the
CRD default -- a submitter pod set of 1 (its ``submitterPodTemplate``, else a 500m / 200Mi
container: L249-311); in SidecarMode the same submitter container in the head (L319-332).  A RayJob
with ``clusterSelector`` runs on an existing cluster and brings no pods.  ``replicas`` defaults to
0 and ``numOfHosts`` to 1 (KubeRay CRD ``ray.io_rayclusters.yaml``).

KAI's gang is the model's ``RayWorkload.gang_size`` (``demand.kai_pod_sets``).
"""

from __future__ import annotations

from ...primitives.values import Unknown, as_bool, as_str, dig
from ..demand import CannotTellError, PodSet, kai_pod_sets, uses_existing_cluster
from ..model.workloads import RayWorkload
from .base import Gang, template_at, with_container

SUBMITTER = {"cpu": "500m", "memory": "200Mi"}
AUTOSCALER = {"cpu": "500m", "memory": "512Mi"}


def _head_extras(workload: RayWorkload, pod_set: PodSet) -> PodSet:
    template = pod_set.template
    autoscaling = as_bool(dig(workload.cluster_spec, "enableInTreeAutoscaling"))
    if isinstance(autoscaling, Unknown):
        raise CannotTellError(f"{workload.describe()} enableInTreeAutoscaling")
    if autoscaling:
        custom = dig(workload.cluster_spec, "autoscalerOptions", "resources", "requests")
        requests = {k: str(v) for k, v in custom.items()} if isinstance(custom, dict) else AUTOSCALER
        template = with_container(template, "autoscaler", requests)
    if workload.kind == "RayJob" and workload.submission_mode == "SidecarMode":
        template = with_container(template, "ray-job-submitter", SUBMITTER)
    return PodSet(pod_set.name, pod_set.count, template, pod_set.path)


def kueue_gangs(workload: RayWorkload) -> list[Gang]:
    if uses_existing_cluster(workload):
        return []
    if not workload.workers_known:
        raise CannotTellError(f"{workload.describe()} worker groups")
    if isinstance(workload.submission_mode, Unknown):
        raise CannotTellError(f"{workload.describe()} spec.submissionMode")
    pod_sets: list[PodSet] = []
    for group in workload.groups():
        if group.is_head:
            pod_sets.append(_head_extras(workload, PodSet("head", 1, group.template, group.path)))
            continue
        replicas, hosts = group.replicas, group.num_of_hosts
        if isinstance(replicas, Unknown) or isinstance(hosts, Unknown):
            raise CannotTellError(f"{group.path} replicas/numOfHosts")
        count = (replicas or 0) * (hosts if hosts and hosts > 1 else 1)
        pod_sets.append(PodSet(group.name, count, group.template, group.path))
    mode = workload.submission_mode
    if workload.kind == "RayJob" and (mode is None or as_str(mode) == "K8sJobMode"):
        custom = dig(workload.obj.spec, "submitterPodTemplate")
        if isinstance(custom, dict):
            template = template_at(workload.obj.spec, ("submitterPodTemplate",), "spec.submitterPodTemplate")
        else:
            template = with_container(template_at({}, ("x",), "submitter"), "ray-job-submitter", SUBMITTER)
        pod_sets.append(PodSet("submitter", 1, template, template.path))
    return [Gang(workload, workload.obj, tuple(pod_sets))]


def kai_gangs(workload: RayWorkload) -> list[Gang]:
    return [Gang(workload, workload.obj, tuple(kai_pod_sets(workload)))]
