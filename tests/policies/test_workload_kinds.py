"""Pod sets per workload family (workload_kinds), counted as Kueue v0.19.2 and KAI v0.17.0 do."""

from __future__ import annotations

from typing import Any

from gpu_batch_policy.facts.model import StackModel
from gpu_batch_policy.facts.workload_kinds import Counted, kai_gangs, kueue_gangs
from gpu_batch_policy.primitives.values import dig

from tests.policies.workload_stack import UNKNOWN, Registration, k8s, pod, ray_cluster, ray_job, workers


def counts(stack: list[Registration], *, kai: bool = False) -> dict[str, list[tuple[str, int]] | str]:
    """object name -> [(pod set, count), ...] per gang, or the cannot-tell reason."""
    model = StackModel.from_plain(stack)
    out: dict[str, Any] = {}
    found: list[Counted] = kai_gangs(model) if kai else kueue_gangs(model)
    for counted in found:
        if counted.error is not None:
            out[counted.obj.name] = counted.error
        else:
            out[counted.obj.name] = [(p.name, p.count) for g in counted.gangs for p in g.pod_sets]
    return out


def job(name: str = "train", **spec: Any) -> Registration:
    return k8s("batch/v1", "Job", name, spec={"template": pod(gpu=1), **spec})


def test_batch_job_parallelism_completions_and_defaults() -> None:
    stack = [job("a", parallelism=4), job("b", parallelism=4, completions=2), job("c")]
    assert counts(stack) == {"a": [("main", 4)], "b": [("main", 2)], "c": [("main", 1)]}
    # KAI's BatchJob grouper: minMember 1 unless kai.scheduler/batch-min-member says otherwise.
    assert counts([job("a", parallelism=4)], kai=True) == {"a": [("main", 1)]}
    gang = k8s(
        "batch/v1",
        "Job",
        "g",
        annotations={"kai.scheduler/batch-min-member": "4"},
        spec={"parallelism": 4, "template": pod(gpu=1)},
    )
    assert counts([gang], kai=True) == {"g": [("main", 4)]}


def test_unknown_parallelism_cannot_be_counted() -> None:
    assert isinstance(counts([job("a", parallelism=UNKNOWN)])["a"], str)


def test_jobset_replicas_times_pods_per_job() -> None:
    rj = {"name": "workers", "replicas": 2, "template": {"spec": {"parallelism": 3, "template": pod(gpu=1)}}}
    leader = {"name": "leader", "template": {"spec": {"template": pod()}}}
    js = k8s("jobset.x-k8s.io/v1alpha2", "JobSet", "js", spec={"replicatedJobs": [rj, leader]})
    assert counts([js]) == {"js": [("workers", 6), ("leader", 1)]}
    in_order = k8s(
        "jobset.x-k8s.io/v1alpha2",
        "JobSet",
        "js",
        spec={"replicatedJobs": [rj, leader], "startupPolicy": {"startupPolicyOrder": "InOrder"}},
    )
    assert counts([in_order], kai=True) == {"js": [("leader", 1)]}


def test_pods_and_pod_groups() -> None:
    group = {"kueue.x-k8s.io/pod-group-name": "g"}
    stack = [
        k8s("v1", "Pod", "solo", spec=pod(gpu=1)["spec"]),
        k8s("v1", "Pod", "m1", labels=group, spec=pod(gpu=1)["spec"]),
        k8s("v1", "Pod", "m2", labels=group, spec=pod(gpu=1)["spec"]),
    ]
    assert counts(stack) == {"solo": [("solo", 1)], "m1": [("m1", 1), ("m2", 1)]}


def test_pytorchjob_roles_and_kai_min_available() -> None:
    specs = {"Master": {"replicas": 1, "template": pod()}, "Worker": {"replicas": 3, "template": pod(gpu=1)}}
    ptj = k8s("kubeflow.org/v1", "PyTorchJob", "ptj", spec={"pytorchReplicaSpecs": specs})
    assert counts([ptj]) == {"ptj": [("Master", 1), ("Worker", 3)]}
    assert counts([ptj], kai=True) == {"ptj": [("Master", 1), ("Worker", 3)]}
    partial = k8s(
        "kubeflow.org/v1",
        "PyTorchJob",
        "ptj",
        spec={"pytorchReplicaSpecs": specs, "runPolicy": {"schedulingPolicy": {"minAvailable": 2}}},
    )
    assert counts([partial], kai=True) == {"ptj": [("Master", 1), ("Worker", 1)]}


def test_trainjob_without_its_runtime_is_cannot_tell() -> None:
    """A TrainJob's pods come from the runtime it references (workload_kinds.trainjob; counted in
    test_trainjob_pod_sets): absent from the program, its gang is "cannot tell"."""
    tj = k8s("trainer.kubeflow.org/v1alpha1", "TrainJob", "tj", spec={"runtimeRef": {"name": "torch"}})
    assert "runtime ClusterTrainingRuntime 'torch' (spec.runtimeRef) is not in the program" in str(
        counts([tj])["tj"]
    )


def test_leaderworkerset_one_gang_per_group() -> None:
    template = {"size": 4, "leaderTemplate": pod(), "workerTemplate": pod(gpu=1)}
    lws = k8s(
        "leaderworkerset.x-k8s.io/v1",
        "LeaderWorkerSet",
        "lws",
        spec={"replicas": 3, "leaderWorkerTemplate": template},
    )
    assert counts([lws]) == {"lws": [("leader", 1), ("worker", 3)]}
    no_leader = k8s(
        "leaderworkerset.x-k8s.io/v1",
        "LeaderWorkerSet",
        "lws",
        spec={"leaderWorkerTemplate": {"size": 2, "workerTemplate": pod(gpu=1)}},
    )
    assert counts([no_leader]) == {"lws": [("worker", 2)]}


def test_deployment_pods_one_by_one_statefulset_as_one() -> None:
    dep = k8s("apps/v1", "Deployment", "dep", spec={"replicas": 5, "template": pod(gpu=1)})
    sts = k8s("apps/v1", "StatefulSet", "sts", spec={"replicas": 5, "template": pod(gpu=1)})
    assert counts([dep, sts]) == {"dep": [("main", 1)], "sts": [("main", 5)]}


def test_ray_counts_submitter_and_sidecars_like_kueue_019() -> None:
    group = workers("gpu", pod(gpu=1), 2, 1, numOfHosts=2)
    default_mode = ray_job("rj", groups=[group])  # unset = K8sJobMode: a submitter pod set
    assert counts([default_mode]) == {"rj": [("head", 1), ("gpu", 4), ("submitter", 1)]}
    sidecar = ray_job("rj", groups=[group], submission_mode="SidecarMode")
    model = StackModel.from_plain([sidecar])
    [counted] = kueue_gangs(model)
    [head, _] = counted.gangs[0].pod_sets
    assert [c.get("name") for c in dig(head.template.raw, "spec", "containers")] == [
        "ray",
        "ray-job-submitter",
    ]
    cluster = ray_cluster("rc", groups=[group])
    cluster[1]["spec"]["enableInTreeAutoscaling"] = True  # workers still count in 0.19.2
    model = StackModel.from_plain([cluster])
    [counted] = kueue_gangs(model)
    [head, gpu] = counted.gangs[0].pod_sets
    assert gpu.count == 4 and dig(head.template.raw, "spec", "containers", -1, "name") == "autoscaler"
    # KAI's Ray gang: minReplicas x hosts.
    assert counts([ray_cluster("rc", groups=[group])], kai=True) == {"rc": [("head", 1), ("gpu", 2)]}


def test_rayjob_on_an_existing_cluster_brings_no_pods() -> None:
    rj = ray_job("rj")
    rj[1]["spec"]["clusterSelector"] = {"ray.io/cluster": "shared"}
    assert counts([rj]) == {"rj": []}
