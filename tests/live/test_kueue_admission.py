"""Real Kueue deciding real Workloads (the ``kueue_cluster`` fixture: the dev stack's Kueue).

- The fourth review's case, caught live: a ClusterQueue with no ``namespaceSelector`` is reachable
  from no namespace (Kueue: "Defaults to null which is a nothing selector"), so a Job sent to it
  through a LocalQueue is never admitted, with Kueue's own message; the same ClusterQueue with
  ``namespaceSelector: {}`` admits it.
- The spike's case: two 4-GPU Jobs on a 4-GPU ClusterQueue: one admitted, the other pending with
  Kueue's message, admitted once the first is gone.  No node is needed: Kueue admits on quota.
  There is no kube-controller-manager, so no garbage collector: deleting the Job leaves its
  Workload (owned by the Job) in place, and the test deletes it as the collector would.
"""

from __future__ import annotations

import time
from typing import Any

from tests.live.cluster import Cluster

KUEUE = "kueue.x-k8s.io/v1beta2"
NOT_GIVEN: Any = object()
NEVER_WINDOW = 10.0  # seconds a Workload is watched for an admission that must not come


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def resource_flavor(name: str) -> dict[str, Any]:
    return {"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": name}}


def cluster_queue(name: str, flavor: str, gpus: int, namespace_selector: Any = NOT_GIVEN) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "resourceGroups": [
            {
                "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                "flavors": [
                    {
                        "name": flavor,
                        "resources": [
                            {"name": "cpu", "nominalQuota": "64"},
                            {"name": "memory", "nominalQuota": "256Gi"},
                            {"name": "nvidia.com/gpu", "nominalQuota": gpus},
                        ],
                    }
                ],
            }
        ]
    }
    if namespace_selector is not NOT_GIVEN:
        spec["namespaceSelector"] = namespace_selector
    return {"apiVersion": KUEUE, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def local_queue(ns: str, name: str, cluster_queue_name: str) -> dict[str, Any]:
    return {
        "apiVersion": KUEUE,
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"clusterQueue": cluster_queue_name},
    }


def gpu_job(ns: str, name: str, queue: str, gpus: int) -> dict[str, Any]:
    resources = {
        "requests": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": gpus},
        "limits": {"nvidia.com/gpu": gpus},
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": ns, "labels": {"kueue.x-k8s.io/queue-name": queue}},
        "spec": {
            "suspend": True,
            "parallelism": 1,
            "completions": 1,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox:1.36", "resources": resources}],
                }
            },
        },
    }


def apply_all(cluster: Cluster, objects: list[dict[str, Any]]) -> None:
    results = cluster.apply(objects)
    refused = [str(r) for r in results if not r.accepted]
    assert not refused, refused


def workload_of(cluster: Cluster, ns: str, job: str) -> dict[str, Any] | None:
    """The Workload Kueue created for the Job (the one the Job owns)."""
    for wl in cluster.list(KUEUE, "Workload", ns):
        owners = wl["metadata"].get("ownerReferences") or []
        if any(o.get("kind") == "Job" and o.get("name") == job for o in owners):
            return wl
    return None


def condition(obj: dict[str, Any] | None, kind: str) -> dict[str, Any] | None:
    for cond in ((obj or {}).get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return dict(cond)
    return None


def admitted(wl: dict[str, Any] | None) -> bool:
    found = condition(wl, "Admitted")
    return found is not None and found.get("status") == "True"


def pending_with(cluster: Cluster, ns: str, job: str, text: str) -> dict[str, Any]:
    """Wait until the Job's Workload has QuotaReserved=False with ``text`` in Kueue's message."""

    def check() -> dict[str, Any] | None:
        reserved = condition(workload_of(cluster, ns, job), "QuotaReserved")
        if reserved and reserved.get("status") == "False" and text in str(reserved.get("message")):
            return reserved
        return None

    return cluster.wait_for(check, 60, f"{ns}/{job}'s Workload to be pending with '{text}'")


def wait_admitted(cluster: Cluster, ns: str, job: str) -> dict[str, Any]:
    def check() -> dict[str, Any] | None:
        wl = workload_of(cluster, ns, job)
        return wl if admitted(wl) else None

    wl = cluster.wait_for(check, 60, f"{ns}/{job}'s Workload to be admitted")
    # and Kueue let the Job run: it is no longer suspended
    cluster.wait_for(
        lambda: (cluster.get("batch/v1", "Job", job, ns) or {}).get("spec", {}).get("suspend") is False,
        30,
        f"Kueue to unsuspend {ns}/{job}",
    )
    return wl


def test_a_cluster_queue_without_namespace_selector_never_admits(kueue_cluster: Cluster) -> None:
    """The fourth review's finding, by the live tier alone."""
    cluster = kueue_cluster
    ns = "live-no-selector"
    apply_all(
        cluster,
        [
            namespace(ns),
            resource_flavor("live-nosel-flavor"),
            cluster_queue("live-nosel-cq", "live-nosel-flavor", 8),  # no namespaceSelector at all
            local_queue(ns, "team-queue", "live-nosel-cq"),
            gpu_job(ns, "train", "team-queue", 1),
        ],
    )
    reserved = pending_with(cluster, ns, "train", "workload namespace doesn't match ClusterQueue selector")
    # (reason "Pending": Kueue v0.19.2 says "Misconfigured" only with its UnadmittedWorkloadsExplicitStatus gate, off)
    assert reserved["reason"] == "Pending", reserved
    # and it stays so: watched for a while, never admitted, the Job still suspended
    deadline = time.monotonic() + NEVER_WINDOW
    while time.monotonic() < deadline:
        wl = workload_of(cluster, ns, "train")
        assert not admitted(wl), wl
        assert (condition(wl, "QuotaReserved") or {}).get("status") == "False", wl
        time.sleep(1)
    job = cluster.get("batch/v1", "Job", "train", ns)
    assert job is not None and job["spec"]["suspend"] is True

    # the same ClusterQueue with `namespaceSelector: {}` (every namespace) admits the same Job
    apply_all(cluster, [cluster_queue("live-nosel-cq", "live-nosel-flavor", 8, namespace_selector={})])
    wl = wait_admitted(cluster, ns, "train")
    assert wl["status"]["admission"]["clusterQueue"] == "live-nosel-cq"


def test_an_empty_namespace_selector_admits_from_the_start(kueue_cluster: Cluster) -> None:
    cluster = kueue_cluster
    ns = "live-any-namespace"
    apply_all(
        cluster,
        [
            namespace(ns),
            resource_flavor("live-any-flavor"),
            cluster_queue("live-any-cq", "live-any-flavor", 8, namespace_selector={}),
            local_queue(ns, "team-queue", "live-any-cq"),
            gpu_job(ns, "train", "team-queue", 2),
        ],
    )
    wl = wait_admitted(cluster, ns, "train")
    (assignment,) = wl["status"]["admission"]["podSetAssignments"]
    assert assignment["flavors"]["nvidia.com/gpu"] == "live-any-flavor"
    assert assignment["resourceUsage"]["nvidia.com/gpu"] in (2, "2")


def test_two_four_gpu_jobs_on_four_gpus_one_waits_for_the_other(kueue_cluster: Cluster) -> None:
    """The spike's case: one admitted, one pending with Kueue's message, admitted after the first
    is deleted."""
    cluster = kueue_cluster
    ns = "live-gang"
    apply_all(
        cluster,
        [
            namespace(ns),
            resource_flavor("live-gang-flavor"),
            cluster_queue("live-gang-cq", "live-gang-flavor", 4, namespace_selector={}),
            local_queue(ns, "team-queue", "live-gang-cq"),
            gpu_job(ns, "first", "team-queue", 4),
        ],
    )
    wait_admitted(cluster, ns, "first")
    apply_all(cluster, [gpu_job(ns, "second", "team-queue", 4)])
    reserved = pending_with(
        cluster, ns, "second", "insufficient unused quota for nvidia.com/gpu in flavor live-gang-flavor"
    )
    assert "4 more needed" in reserved["message"], reserved
    job = cluster.get("batch/v1", "Job", "second", ns)
    assert job is not None and job["spec"]["suspend"] is True

    # the first Job goes; with no garbage collector its Workload is deleted as the collector would
    first_wl = workload_of(cluster, ns, "first")
    assert first_wl is not None
    assert cluster.delete("batch/v1", "Job", "first", ns) in (200, 202)
    cluster.delete(KUEUE, "Workload", first_wl["metadata"]["name"], ns)
    cluster.wait_for(
        lambda: cluster.get(KUEUE, "Workload", first_wl["metadata"]["name"], ns) is None,
        30,
        "the first Job's Workload to be gone (Kueue removes its finalizer)",
    )
    wait_admitted(cluster, ns, "second")
