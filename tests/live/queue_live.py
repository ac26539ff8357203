"""Submitting a template as its team to a live deployment and reading Kueue's decision.

A template becomes the object a team sends (:func:`submission`): the stack's own declared RayJob
(Kueue's RayJob integration needs only the CRD), or a suspended ``batch/v1`` Job of the pod set
(``parallelism`` = ``completions`` = count).  It is sent with a client certificate of the team's
Google Group, read from the stack's own team RoleBinding (:func:`team_group`).

GKE's part in a ProvisioningRequest check (:func:`provision`): the ``Provisioned`` condition and
the ``provisioningClassDetails`` the check's ``podSetUpdates`` read, on the status subresource.
Kueue v0.19.2 ``pkg/controller/admissionchecks/provisioning/controller.go``: ``syncCheckStates``
sets the check Ready on ``isProvisioned(pr)`` with ``podSetUpdates(...)``, which carry the
``autoscaling.x-k8s.io/consume-provisioning-request`` (the request's name) and
``autoscaling.x-k8s.io/provisioning-class-name`` annotations and one node selector per ``ProvisioningRequestConfig.spec.podSetUpdates.nodeSelector``
(its value from ``pr.Status.ProvisioningClassDetails``).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import yaml
from gpu_batch_policy.facts.model import StackModel

from tests.live.cluster import Cluster, ControlPlane
from tests.live.pki import KeyPair
from tests.live.queue_templates import GPU, Template
from tests.live.stacks import ClusterObjects
from tests.live.test_kueue_admission import KUEUE, admitted, condition

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
PR_API = "autoscaling.x-k8s.io/v1"
# k8s.io/autoscaler/cluster-autoscaler/apis ``provisioningrequest/autoscaling.x-k8s.io/v1/types.go``
# ``ProvisioningRequestPodAnnotationKey`` / ``ProvisioningClassPodAnnotationKey``: what Kueue puts in
# every podSetUpdate of a provisioned request (controller.go ``podSetUpdates``)
CONSUME_ANNOTATION = "autoscaling.x-k8s.io/consume-provisioning-request"
CLASS_ANNOTATION = "autoscaling.x-k8s.io/provisioning-class-name"
HOLD_WINDOW = 3.0  # seconds a held Workload is watched for an admission that must not come


def declared(objects: ClusterObjects, kind: str, name: str | None = None) -> list[dict[str, Any]]:
    return [
        o
        for o in objects.declared
        if o.get("kind") == kind and (name is None or o["metadata"].get("name") == name)
    ]


def team_group(objects: ClusterObjects, namespace: str) -> str:
    """The Google Group the stack's team RoleBinding in ``namespace`` binds (components/tenancy.py)."""
    groups = sorted(
        s["name"]
        for rb in declared(objects, "RoleBinding")
        if rb["metadata"].get("namespace") == namespace
        for s in rb.get("subjects") or []
        if s.get("kind") == "Group"
    )
    assert groups, f"no team RoleBinding with a Group in {namespace}"
    return str(groups[0])


def member(plane: ControlPlane, objects: ClusterObjects, namespace: str) -> KeyPair:
    return plane.client_certificate(f"member-of-{namespace}@example.com", (team_group(objects, namespace),))


def _job(template: Template) -> dict[str, Any]:
    (pod_set,) = template.pod_sets
    requests = dict(pod_set.get("requests") or {})
    resources: dict[str, Any] = {"requests": requests}
    if GPU in requests:
        resources["limits"] = {GPU: requests[GPU]}
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [{"name": "main", "image": "busybox:1.36", "resources": resources}],
    }
    spec.update({k: pod_set[k] for k in ("tolerations", "nodeSelector", "affinity") if k in pod_set})
    pod_template: dict[str, Any] = {"spec": spec}
    if pod_set.get("annotations"):  # a topology request (whatif trace form, tests.live.queue_tas)
        pod_template["metadata"] = {"annotations": dict(pod_set["annotations"])}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": template.name, "namespace": template.namespace},
        "spec": {
            "suspend": True,
            "parallelism": pod_set["count"],
            "completions": pod_set["count"],
            "template": pod_template,
        },
    }


def submission(objects: ClusterObjects, template: Template) -> dict[str, Any]:
    """The object the team sends for ``template``, suspended, in its LocalQueue."""
    if template.declared:
        found = [o for o in objects.declared if o["metadata"].get("name") == template.declared]
        assert len(found) == 1, f"{template.declared}: declared {len(found)} times"
        obj = copy.deepcopy(found[0])
        obj["metadata"] = {"name": template.name, "namespace": template.namespace}
        obj["spec"]["suspend"] = True
    else:
        obj = _job(template)
    labels = {QUEUE_LABEL: template.queue}
    if template.priority_class:
        labels[PRIORITY_LABEL] = template.priority_class
    obj["metadata"]["labels"] = labels
    return obj


def submit(cluster: Cluster, identity: KeyPair, obj: Mapping[str, Any]) -> None:
    meta = obj["metadata"]
    path = cluster.path(obj["apiVersion"], obj["kind"], namespace=meta["namespace"])
    status, body = cluster.request("POST", path, obj, identity=identity)
    assert status == 201, (status, body)


def workload_of(cluster: Cluster, obj: Mapping[str, Any]) -> dict[str, Any] | None:
    meta = obj["metadata"]
    for wl in cluster.list(KUEUE, "Workload", meta["namespace"]):
        owners = wl["metadata"].get("ownerReferences") or []
        if any(o.get("kind") == obj["kind"] and o.get("name") == meta["name"] for o in owners):
            return wl
    return None


def decided(cluster: Cluster, obj: Mapping[str, Any]) -> dict[str, Any]:
    """Wait until Kueue has decided the quota of ``obj``'s Workload either way."""

    def check() -> dict[str, Any] | None:
        wl = workload_of(cluster, obj)
        reserved = condition(wl, "QuotaReserved")
        return wl if reserved and reserved.get("status") in ("True", "False") else None

    return cluster.wait_for(check, 60, f"Kueue to decide {obj['metadata']['name']}'s quota")


def checks_for_admission(model: StackModel, cluster_queue: str, flavors: Iterable[str]) -> set[str]:
    """The AdmissionChecks Kueue puts on a Workload reserved in ``cluster_queue`` with
    ``flavors``, read from the stack's ClusterQueue (the pack's view of it): a check with no
    ``onFlavors`` applies to every flavor, one with a list to a Workload using any of them
    (kueue v0.19.2 ``pkg/workload/workload.go`` ``AdmissionChecksForWorkload`` with an admission,
    ``admissionChecksForAdmission``).

    Kueue's scheduler sets ``QuotaReserved`` first and its workload reconciler adds the checks
    that depend on the flavors in a later update (``pkg/controller/core/workload_controller.go``
    "The workload needs admission checks updates"): a reader between the two sees a reserved
    Workload with no ProvisioningRequest check yet, so a test that acts on the checks waits for
    these names."""
    _, cq = model.find_cluster_queue(cluster_queue)
    assert cq is not None, f"ClusterQueue {cluster_queue} is not in the stack"
    used = set(flavors)
    return {
        str(ref.name)
        for ref in cq.admission_checks
        if not ref.on_flavors or used & {str(f) for f in ref.on_flavors}
    }


def with_checks(
    cluster: Cluster, current: Callable[[], dict[str, Any] | None], names: set[str], what: str
) -> dict[str, Any]:
    """Wait until the Workload ``current`` reads lists exactly the AdmissionChecks ``names``."""

    def check() -> dict[str, Any] | None:
        wl = current()
        listed = {c["name"] for c in ((wl or {}).get("status") or {}).get("admissionChecks") or []}
        return wl if wl is not None and listed == names else None

    return cluster.wait_for(check, 30, f"Kueue to put the checks {sorted(names)} on {what}")


def provisioning_checks(objects: ClusterObjects) -> dict[str, dict[str, Any]]:
    """AdmissionCheck name -> its ProvisioningRequestConfig, as the stack declares them."""
    out = {}
    for check in declared(objects, "AdmissionCheck"):
        spec = check.get("spec") or {}
        if spec.get("controllerName") != PROVISIONING_CONTROLLER:
            continue
        (config,) = declared(objects, "ProvisioningRequestConfig", spec["parameters"]["name"])
        out[check["metadata"]["name"]] = config
    return out


def request_of(cluster: Cluster, wl: Mapping[str, Any], check: str) -> dict[str, Any] | None:
    """The ProvisioningRequest Kueue made for ``wl``'s ``check`` (it owns it)."""
    name = wl["metadata"]["name"]
    for pr in cluster.list(PR_API, "ProvisioningRequest", wl["metadata"]["namespace"]):
        owners = pr["metadata"].get("ownerReferences") or []
        if (
            any(o.get("kind") == "Workload" and o.get("name") == name for o in owners)
            and check in (pr["metadata"]["name"])
        ):
            return pr
    return None


def class_details(config: Mapping[str, Any], pr: Mapping[str, Any]) -> dict[str, str]:
    """What GKE reports per detail the config's podSetUpdates read: a stand-in per request."""
    wanted = ((config.get("spec") or {}).get("podSetUpdates") or {}).get("nodeSelector") or []
    return {str(s["valueFromProvisioningClassDetail"]): f"resize-{pr['metadata']['name']}" for s in wanted}


def provision(
    cluster: Cluster, pr: Mapping[str, Any], details: Mapping[str, str], note: str = "the pool's nodes are up"
) -> None:
    """GKE's answer: ``Provisioned`` True (autoscaler apis v1 ``Provisioned``) with the details."""
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    meta = pr["metadata"]
    body = {
        "status": {
            "conditions": [
                {
                    "type": "Provisioned",
                    "status": "True",
                    "reason": "Provisioned",
                    "message": f"played by the live tier: {note}",
                    "lastTransitionTime": now,
                }
            ],
            "provisioningClassDetails": dict(details),
        }
    }
    path = cluster.path(PR_API, "ProvisioningRequest", meta["name"], meta["namespace"]) + "/status"
    status, answer = cluster.request("PATCH", path, body, content_type="application/merge-patch+json")
    assert status == 200, (status, answer)


def still_held(cluster: Cluster, obj: Mapping[str, Any]) -> dict[str, Any]:
    """Watch the Workload for :data:`HOLD_WINDOW`: never Admitted, the object still suspended."""
    deadline = time.monotonic() + HOLD_WINDOW
    wl = workload_of(cluster, obj)
    while time.monotonic() < deadline:
        wl = workload_of(cluster, obj)
        assert wl is not None and not admitted(wl), wl
        time.sleep(0.5)
    meta = obj["metadata"]
    stored = cluster.get(obj["apiVersion"], obj["kind"], meta["name"], meta["namespace"])
    assert stored is not None and stored["spec"]["suspend"] is True, stored
    assert wl is not None
    return wl


def remove(cluster: Cluster, obj: Mapping[str, Any]) -> None:
    """Delete the object, then its Workload, then the ProvisioningRequests the Workload owned, as
    the garbage collector would (there is none here): owner first.  Deleting a request while its
    Workload still holds quota makes Kueue create it again under the same name (kueue v0.19.2
    ``provisioning/controller.go`` ``syncOwnedProvisionRequest``: no request in its cache for a
    check that is not Ready), which earlier runs saw as "Created ProvisioningRequest" twice."""
    meta = obj["metadata"]
    wl = workload_of(cluster, obj)
    cluster.delete(obj["apiVersion"], obj["kind"], meta["name"], meta["namespace"])
    if wl is None:
        return
    name, ns = wl["metadata"]["name"], meta["namespace"]
    cluster.delete(KUEUE, "Workload", name, ns)
    cluster.wait_for(lambda: cluster.get(KUEUE, "Workload", name, ns) is None, 30, f"Workload {name} gone")
    for pr in cluster.list(PR_API, "ProvisioningRequest", ns):
        if any(o.get("name") == name for o in pr["metadata"].get("ownerReferences") or []):
            cluster.delete(PR_API, "ProvisioningRequest", pr["metadata"]["name"], ns)


def pod_templates(obj: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Pod set name -> the pod template Kueue starts it with (Job: ``main``; RayJob: ``head`` and
    each worker group and ``submitter``, kueue v0.19.2 ``pkg/controller/jobs/rayjob``
    ``PodSets``)."""
    spec = obj["spec"]
    if obj["kind"] == "Job":
        return {"main": spec["template"]}
    cluster_spec = spec["rayClusterSpec"]
    out = {"head": cluster_spec["headGroupSpec"]["template"]}
    for group in cluster_spec.get("workerGroupSpecs") or []:
        out[group["groupName"]] = group["template"]
    if "submitterPodTemplate" in spec:
        # set by Kueue on start when the RayJob has none (``RunWithPodSetsInfo``, K8sJobMode)
        out["submitter"] = spec["submitterPodTemplate"]
    return out


def worker_token(worker: Cluster, objects: ClusterObjects) -> str:
    """A token of the worker's MultiKueue ServiceAccount (the one the stack declares a token
    Secret for), by the TokenRequest API: there is no token controller here to fill the Secret."""
    (secret,) = [
        s
        for s in declared(objects, "Secret")
        if (s.get("type") == "kubernetes.io/service-account-token")
        and "multikueue"
        in str(s["metadata"].get("annotations", {}).get("kubernetes.io/service-account.name"))
    ]
    account = secret["metadata"]["annotations"]["kubernetes.io/service-account.name"]
    namespace = secret["metadata"]["namespace"]
    path = f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token"
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}
    status, answer = worker.request("POST", path, body)
    assert status == 201, (status, answer)
    return str(answer["status"]["token"])


def connect_workers(manager: Cluster, manager_objects: ClusterObjects, workers: Mapping[str, Any]) -> None:
    """Each MultiKueueCluster's kubeconfig Secret (a stand-in until apply) written as GKE's would
    be: the worker's API server and its MultiKueue ServiceAccount's token; then wait until Kueue
    has connected every cluster (``Active``, kueue v0.19.2 ``multikueuecluster.go``)."""
    for mkc in declared(manager_objects, "MultiKueueCluster"):
        name = mkc["metadata"]["name"]
        worker, objects = workers[name]
        location = mkc["spec"]["clusterSource"]["kubeConfig"]["location"]
        (stand_in,) = declared(manager_objects, "Secret", location)
        config = worker.kubeconfig_for(worker.plane.admin)
        config["users"] = [{"name": "admin", "user": {"token": worker_token(worker, objects)}}]
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": location, "namespace": stand_in["metadata"]["namespace"]},
            "stringData": {"kubeconfig": yaml.safe_dump(config)},
        }
        results = manager.apply([secret])
        assert all(r.accepted for r in results), results
    for mkc in declared(manager_objects, "MultiKueueCluster"):
        manager.wait_for(_active(manager, mkc["metadata"]["name"]), 60, f"{mkc['metadata']['name']} Active")


def _active(manager: Cluster, name: str) -> Callable[[], bool]:
    def check() -> bool:
        found = condition(manager.get(KUEUE, "MultiKueueCluster", name), "Active") or {}
        return found.get("status") == "True"

    return check
