"""TrainJob pod sets (workload_kinds.trainjob): the child JobSet its training runtime builds.

Cases ported from kubernetes-sigs/kueue v0.19.2
``pkg/controller/jobs/trainjob/trainjob_controller_test.go`` ``TestReconciler`` (the Workload's
pod sets), plus the kubeflow/trainer v2.2.1 rules they rest on (cited per test).
"""

from __future__ import annotations

from typing import Any

from gpu_batch_policy.facts.model import StackModel
from gpu_batch_policy.facts.workload_kinds import kueue_gangs
from gpu_batch_policy.primitives.values import dig
from gpu_batch_policy.rules.kueue import workload_gangs as rules_workload_gangs

from tests.policies.test_workload_gangs import KUEUE, queue
from tests.policies.test_workload_kinds import counts
from tests.policies.workload_stack import UNKNOWN, Registration, k8s, pod, run

ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
API = "trainer.kubeflow.org/v1alpha1"
GANG_POLICIES = {p.name: p for p in rules_workload_gangs.POLICIES}


def node_template(gpu: int | None = None) -> dict[str, Any]:
    template = pod(gpu=gpu)
    template["spec"]["containers"][0]["name"] = "node"
    return template


def rjob(
    name: str,
    *,
    trainer: bool = False,
    parallelism: int | None = None,
    replicas: int | None = None,
    gpu: int | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"template": node_template(gpu)}
    if parallelism is not None:
        spec["parallelism"] = parallelism
        spec["completions"] = parallelism
    template: dict[str, Any] = {"spec": spec}
    if trainer:
        template["metadata"] = {"labels": {ANCESTOR: "trainer"}}
    job: dict[str, Any] = {"name": name, "template": template}
    if replicas is not None:
        job["replicas"] = replicas
    return job


def runtime(
    name: str, *jobs: dict[str, Any], ml_policy: Any = None, namespace: str | None = None
) -> Registration:
    spec: dict[str, Any] = {"template": {"spec": {"replicatedJobs": list(jobs)}}}
    if ml_policy is not None:
        spec["mlPolicy"] = ml_policy
    kind = "TrainingRuntime" if namespace else "ClusterTrainingRuntime"
    return k8s(API, kind, name, namespace=namespace, spec=spec)


def trainjob(
    name: str = "tj",
    *,
    ref: dict[str, Any] | None = None,
    trainer: Any = None,
    labels: dict[str, str] | None = None,
    **spec: Any,
) -> Registration:
    body: dict[str, Any] = {"runtimeRef": ref or {"name": "test"}, **spec}
    if trainer is not None:
        body["trainer"] = trainer
    return k8s(API, "TrainJob", name, namespace="ns", spec=body, labels=labels)


KUEUE_TEST_RUNTIME = runtime(
    "test", rjob("node", trainer=True, parallelism=1, replicas=1), rjob("foo", parallelism=1, replicas=1)
)


def test_trainjob_pod_sets_as_kueues_test() -> None:
    """``TestReconciler`` "workload is created with the corresponding podsets": a
    ClusterTrainingRuntime with replicatedJobs node (trainer ancestor) and foo, 1 each -> node: 1,
    foo: 1; "podset count for the trainer job is set to .Spec.Trainer.NumNodes": numNodes 2 ->
    node: 2, foo: 1 (no mlPolicy: plainml's ``EnforceMLPolicy`` applies numNodes)."""
    assert counts([KUEUE_TEST_RUNTIME, trainjob()]) == {"tj": [("node", 1), ("foo", 1)]}
    two = trainjob(trainer={"numNodes": 2})
    assert counts([KUEUE_TEST_RUNTIME, two]) == {"tj": [("node", 2), ("foo", 1)]}
    # KAI: TrainJob is a skipTopOwnerGrouper; the child JobSet's grouper counts every replicatedJob.
    assert counts([KUEUE_TEST_RUNTIME, two], kai=True) == {"tj": [("node", 2), ("foo", 1)]}


def test_ml_policy_num_nodes_replicas_and_parallelism() -> None:
    """trainer ``newRuntimeInfo``: the trainer job counts ``mlPolicy.numNodes`` (default 1), any other
    job its ``parallelism`` (default 1); Kueue's JobSet pod set multiplies by ``replicas``."""
    rt = runtime(
        "test",
        rjob("init", parallelism=3, replicas=2),
        rjob("node", trainer=True, parallelism=7),
        ml_policy={"numNodes": 4, "torch": {}},
    )
    assert counts([rt, trainjob()]) == {"tj": [("init", 6), ("node", 4)]}
    assert counts([rt, trainjob(trainer={"numNodes": 8})]) == {"tj": [("init", 6), ("node", 8)]}
    no_nodes = runtime("test", rjob("node", trainer=True, parallelism=7), ml_policy={"torch": {}})
    assert counts([no_nodes, trainjob()]) == {"tj": [("node", 1)]}


def test_mpi_num_nodes_on_the_node_job() -> None:
    """trainer ``plugins/mpi`` ``EnforceMLPolicy``: numNodes sets the ``node`` job, one less with
    ``runLauncherAsNode`` (at least 1)."""
    jobs = (rjob("launcher", trainer=True), rjob("node", parallelism=1))
    rt = runtime("test", *jobs, ml_policy={"numNodes": 1, "mpi": {}})
    assert counts([rt, trainjob(trainer={"numNodes": 4})]) == {"tj": [("launcher", 1), ("node", 4)]}
    as_node = runtime("test", *jobs, ml_policy={"numNodes": 1, "mpi": {"runLauncherAsNode": True}})
    assert counts([as_node, trainjob(trainer={"numNodes": 4})]) == {"tj": [("launcher", 1), ("node", 3)]}
    assert counts([as_node, trainjob(trainer={"numNodes": 1})]) == {"tj": [("launcher", 1), ("node", 1)]}


def test_resources_per_node_replace_the_node_container() -> None:
    """trainer ``plugins/jobset/builder.go`` ``Trainer``: resourcesPerNode become the ``node``
    container's resources in the trainer job; other jobs keep theirs."""
    rt = runtime("test", rjob("init", gpu=None), rjob("node", trainer=True, gpu=1), ml_policy={"numNodes": 2})
    tj = trainjob(
        trainer={"resourcesPerNode": {"requests": {"nvidia.com/gpu": "8"}, "limits": {"nvidia.com/gpu": "8"}}}
    )
    (counted,) = kueue_gangs(StackModel.from_plain([rt, tj]))
    (gang,) = counted.gangs
    assert gang.obj.kind == "TrainJob"
    assert [p.template.gpus() for p in gang.pod_sets] == [0, 8]
    assert gang.pod_sets[1].path.startswith(
        "ClusterTrainingRuntime/test spec.template.spec.replicatedJobs[1]"
    )


def test_runtime_lookup_and_cannot_tell() -> None:
    """``getRuntimeSpec``: ClusterTrainingRuntime by name (the default kind), TrainingRuntime by name
    in the TrainJob's namespace; a missing or unsupported runtime is "cannot tell", never a pass."""
    missing = counts([trainjob(ref={"name": "torch-distributed"})])["tj"]
    assert isinstance(missing, str) and "ClusterTrainingRuntime 'torch-distributed'" in missing
    ns_ref = {"name": "test", "kind": "TrainingRuntime"}
    other_ns = runtime("test", rjob("node", trainer=True), namespace="other")
    assert "in namespace ns (spec.runtimeRef) is not in the program" in str(
        counts([other_ns, trainjob(ref=ns_ref)])["tj"]
    )
    here = runtime("test", rjob("node", trainer=True, parallelism=2), namespace="ns")
    assert counts([here, trainjob(ref=ns_ref)]) == {"tj": [("node", 2)]}
    bad = {"name": "test", "apiGroup": "example.com", "kind": "Runtime"}
    assert "unsupported runtime" in str(counts([KUEUE_TEST_RUNTIME, trainjob(ref=bad)])["tj"])
    unknown = counts([KUEUE_TEST_RUNTIME, trainjob(trainer={"numNodes": UNKNOWN})])["tj"]
    assert isinstance(unknown, str) and "numNodes" in unknown


def job_patch(name: str, template: Any) -> dict[str, Any]:
    body = {"replicatedJobs": [{"name": name, "template": template}]}
    return {"manager": "example.com/me", "trainingRuntimeSpec": {"template": {"spec": body}}}


def test_runtime_patches_merge_before_counting() -> None:
    """trainer ``mergeRuntimePatches``: a strategic merge patch of the named replicatedJob's
    template.  The patch API has no parallelism or resources, so counts stay and placement follows
    the patch: nodeSelector merged key by key, tolerations replaced, containers merged by name."""
    rt = runtime("test", rjob("node", trainer=True, gpu=1))
    pod_spec = {
        "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
        "containers": [{"name": "node", "env": [{"name": "A", "value": "1"}]}],
    }
    patch = job_patch("node", {"spec": {"template": {"spec": pod_spec}}})
    (counted,) = kueue_gangs(StackModel.from_plain([rt, trainjob(runtimePatches=[patch])]))
    (gang,) = counted.gangs
    (node,) = gang.pod_sets
    assert node.count == 1 and node.template.gpus() == 1
    spec = dig(node.template.raw, "spec")
    assert spec["nodeSelector"] == pod_spec["nodeSelector"]
    assert spec["tolerations"] == pod_spec["tolerations"]
    (container,) = spec["containers"]
    assert container["env"] == [{"name": "A", "value": "1"}] and "resources" in container
    # A patch of a job the runtime does not have changes nothing.
    assert counts([rt, trainjob(runtimePatches=[job_patch("absent", {})])]) == {"tj": [("node", 1)]}
    # Neither a field outside the patch API nor a directive is silently dropped or applied.
    wrong = counts([rt, trainjob(runtimePatches=[job_patch("node", {"spec": {"parallelism": 9}})])])["tj"]
    assert isinstance(wrong, str) and "runtimePatches[0]" in wrong and "parallelism is no field" in wrong
    directive = counts([rt, trainjob(runtimePatches=[job_patch("node", {"$patch": "replace"})])])["tj"]
    assert isinstance(directive, str) and "directive" in directive


def test_over_quota_trainjob_is_caught() -> None:
    """Corrupted variant: a TrainJob of 8 one-GPU nodes on a 4-GPU ClusterQueue is caught by
    ``workload-gang-fits-queue``; 4 nodes pass; without its runtime the rule cannot check."""
    policy = GANG_POLICIES["workload-gang-fits-queue"]
    rt = runtime("torch", rjob("node", trainer=True, gpu=1), ml_policy={"numNodes": 1, "torch": {}})

    def tj(nodes: int, ref: str = "torch") -> Registration:
        spec = {"runtimeRef": {"name": ref}, "trainer": {"numNodes": nodes}}
        return k8s(API, "TrainJob", "tj", namespace="ml", labels=KUEUE, spec=spec)

    assert run(policy, [*queue(4), rt, tj(4)]).violations == []
    out = run(policy, [*queue(4), rt, tj(8)])
    assert out.mentions("TrainJob 'ml/tj'", "nvidia.com/gpu", "never admits")
    missing = run(policy, [*queue(4), tj(8, ref="gone")])
    assert missing.violations == [] and missing.cannot_check


def test_malformed_runtime_never_crashes() -> None:
    """A malformed runtime is counted as the API server would default it or is "cannot tell"."""
    odd = runtime("test", {"name": "node", "template": "nonsense"}, {"name": "x", "template": {"spec": 3}})
    assert counts([odd, trainjob()]) == {"tj": [("node", 1), ("x", 1)]}
    weird = k8s(API, "ClusterTrainingRuntime", "test", spec={"template": {"spec": [1]}})
    assert counts([weird, trainjob()]) == {"tj": []}
    unknown = k8s(
        API, "ClusterTrainingRuntime", "test", spec={"template": {"spec": {"replicatedJobs": UNKNOWN}}}
    )
    assert "replicatedJobs" in str(counts([unknown, trainjob()])["tj"])


def test_kai_groups_the_child_jobset() -> None:
    """KAI v0.17.0 ``hub.go``: TrainJob is a ``skipTopOwnerGrouper``, so the JobSet grouper judges
    the child JobSet, which carries the runtime template's annotations (trainer
    ``plugins/jobset/jobset.go`` ``Build``: ``WithAnnotations(info.Annotations)``):
    ``kai.scheduler/batch-min-member: 1`` needs only the replicatedJob with the fewest GPUs."""
    jobs = [rjob("init"), rjob("node", trainer=True, gpu=1)]
    meta = {"annotations": {"kai.scheduler/batch-min-member": "1"}}
    spec = {"mlPolicy": {"numNodes": 4}, "template": {"metadata": meta, "spec": {"replicatedJobs": jobs}}}
    rt = k8s(API, "ClusterTrainingRuntime", "test", spec=spec)
    assert counts([rt, trainjob()], kai=True) == {"tj": [("init", 1)]}
    assert counts([rt, trainjob()]) == {"tj": [("init", 1), ("node", 4)]}  # Kueue: every pod set
    plain = runtime("test", *jobs, ml_policy={"numNodes": 4})
    assert counts([plain, trainjob()], kai=True) == {"tj": [("init", 1), ("node", 4)]}
