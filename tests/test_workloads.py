"""Ray workloads declared as code: the seeds' RayJob and RayClusters, labelled to their queues
(wire form, under the mocks), templates with overrides, and config errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from preview.harness import RunResult
from preview.records import for_display
from stacks.errors import ConfigError
from stacks.workload_templates import TEMPLATES, merge
from tests.stack_runner import config_value, named, run_stack, unedited_run

WORKLOADS = "gpu-batch:workloads"
SEEDS = Path(__file__).resolve().parent / "fixtures" / "seeds"


@pytest.fixture(scope="module")
def plans() -> dict[str, RunResult]:
    return {stack: unedited_run(stack) for stack in ("dev", "kai")}


def seed(file: str, kind: str, name: str) -> dict[str, Any]:
    for doc in yaml.safe_load_all((SEEDS / file).read_text()):
        if doc and doc["kind"] == kind and doc["metadata"]["name"] == name:
            return dict(doc)
    raise AssertionError(f"{kind}/{name} not in {file}")


def ray(result: RunResult, namespace: str, name: str, kind: str) -> dict[str, Any]:
    inputs: dict[str, Any] = for_display(named(result, f"{namespace}-{name}-{kind.lower()}").inputs)
    return inputs


class TestKueueRayJob:
    """Seed 000's PyTorch text-classifier RayJob, labelled to user-queue (and seed 003's priority)."""

    def test_spec_is_the_seed_spec_on_ray_2_52_with_token_auth(self, plans: dict[str, RunResult]) -> None:
        """The seed's job, except what Ray 2.52 changes: Ray's CUDA image (no ray-ml 2.52 exists),
        PyTorch from the runtime env (as kuberay v1.7.0's pytorch-mnist sample), and token auth."""
        job = ray(plans["dev"], "default", "pytorch-text-classifier", "RayJob")["spec"]
        theirs = seed("kueue-provisioning.yaml", "RayJob", "pytorch-text-classifier")["spec"]
        cluster, seed_cluster = job.pop("rayClusterSpec"), theirs.pop("rayClusterSpec")
        env, seed_env = (
            yaml.safe_load(job.pop("runtimeEnvYAML")),
            yaml.safe_load(theirs.pop("runtimeEnvYAML")),
        )
        assert job == theirs
        assert env == {**seed_env, "pip": ["torch", *seed_env["pip"]]}
        assert cluster.pop("authOptions") == {"mode": "token"}
        assert cluster.pop("rayVersion") == "2.52.0" and seed_cluster.pop("rayVersion") == "2.46.0"
        head = cluster["headGroupSpec"]["template"]["spec"]["containers"][0]
        seed_head = seed_cluster["headGroupSpec"]["template"]["spec"]["containers"][0]
        assert head.pop("image") == "rayproject/ray:2.52.0-gpu"
        assert seed_head.pop("image") == "rayproject/ray-ml:2.46.0.0e19ea-py311-gpu"
        assert cluster == seed_cluster

    def test_labelled_to_queue_and_priority(self, plans: dict[str, RunResult]) -> None:
        dev = ray(plans["dev"], "default", "pytorch-text-classifier", "RayJob")
        prod = ray(plans["dev"], "default", "pytorch-text-classifier-prod", "RayJob")
        assert dev["metadata"]["namespace"] == "default"
        assert dev["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "user-queue"
        assert dev["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == "dev-priority"
        assert prod["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == "prod-priority"

    def test_waits_for_its_queue_and_kuberay(self, plans: dict[str, RunResult]) -> None:
        dev = plans["dev"]
        job = named(dev, "default-pytorch-text-classifier-rayjob")
        assert named(dev, "localqueue-default-user-queue").urn in job.dependencies
        assert named(dev, "kuberay-operator-release").urn in job.dependencies


class TestKaiRayClusters:
    """Seed 002: a RayCluster in team-a's queue and one whose two workers share one GPU."""

    def test_queue_and_priority_labels(self, plans: dict[str, RunResult]) -> None:
        for name, priority in (("raycluster-sample", "build"), ("raycluster-half-gpu", "train")):
            labels = ray(plans["kai"], "team-a", name, "RayCluster")["metadata"]["labels"]
            assert labels["kai.scheduler/queue"] == "team-a"
            assert labels["priorityClassName"] == priority
            assert not any(key.startswith("kueue.x-k8s.io/") for key in labels)

    def test_sample_cluster_matches_the_seed_shape(self, plans: dict[str, RunResult]) -> None:
        ours = ray(plans["kai"], "team-a", "raycluster-sample", "RayCluster")["spec"]
        theirs = seed("kai.yaml", "RayCluster", "raycluster-sample")["spec"]
        (worker,) = ours["workerGroupSpecs"]
        (seed_worker,) = theirs["workerGroupSpecs"]
        for key in ("groupName", "replicas", "minReplicas"):
            assert worker[key] == seed_worker[key]
        seed_requests = seed_worker["template"]["spec"]["containers"][0]["resources"]["requests"]
        assert worker["template"]["spec"]["containers"][0]["resources"]["requests"] == seed_requests
        # The seed's image repository; Ray 2.52.0 instead of the seed's 2.50.1, for KubeRay's token
        # auth, which needs 2.52.0 (issue 27; stacks/workload_templates.py).
        image = ours["headGroupSpec"]["template"]["spec"]["containers"][0]["image"]
        seed_image = theirs["headGroupSpec"]["template"]["spec"]["containers"][0]["image"]
        assert image.split(":")[0] == seed_image.split(":")[0] and image.endswith(":2.52.0")
        assert ours["authOptions"] == {"mode": "token"} and ours["rayVersion"] == "2.52.0"

    def test_two_workers_share_one_gpu(self, plans: dict[str, RunResult]) -> None:
        spec = ray(plans["kai"], "team-a", "raycluster-half-gpu", "RayCluster")["spec"]
        (worker,) = spec["workerGroupSpecs"]
        assert worker["groupName"] == "shared-gpu"
        assert worker["replicas"] == 2 and worker["minReplicas"] == 2
        assert worker["template"]["metadata"]["annotations"] == {"gpu-fraction": "0.5"}
        resources = worker["template"]["spec"]["containers"][0]["resources"]
        # KAI rejects a fraction next to an nvidia.com/gpu limit.
        assert "nvidia.com/gpu" not in resources["limits"] and "nvidia.com/gpu" not in resources["requests"]
        # Without a GPU limit GKE adds no toleration: the pod must carry it to reach a GPU node.
        assert worker["template"]["spec"]["tolerations"] == [
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
        ]
        assert "tolerations" not in spec["headGroupSpec"]["template"]["spec"]

    def test_clusters_wait_for_their_queue(self, plans: dict[str, RunResult]) -> None:
        kai = plans["kai"]
        cluster = named(kai, "team-a-raycluster-half-gpu-raycluster")
        assert named(kai, "queue-team-a").urn in cluster.dependencies


class TestTemplates:
    def test_override_merges_into_the_template(self) -> None:
        workloads = config_value("dev", WORKLOADS)
        workloads[0]["head"] = {"memory": "12G"}
        workloads[0]["workerGroups"] = [
            {"groupName": "gpu", "replicas": 2, "cpu": "2", "memory": "8G", "gpu": 1}
        ]
        job = ray(run_stack("dev", {WORKLOADS: workloads}), "default", "pytorch-text-classifier", "RayJob")
        head = job["spec"]["rayClusterSpec"]["headGroupSpec"]
        limits = head["template"]["spec"]["containers"][0]["resources"]["limits"]
        assert limits == {"cpu": "2", "memory": "12G", "nvidia.com/gpu": "1"}  # cpu and gpu from the template
        assert head["rayStartParams"] == {"dashboard-host": "0.0.0.0"}
        assert job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["replicas"] == 2

    def test_merge_replaces_lists_and_keeps_the_catalogue_intact(self) -> None:
        before = yaml.safe_dump(dict(TEMPLATES["kai-ray-cluster"]))
        merged = merge(TEMPLATES["kai-ray-cluster"], {"workerGroups": [], "head": {"cpu": "2"}})
        assert merged["workerGroups"] == []
        assert merged["head"] == {"cpu": "2", "memory": "2Gi"}
        assert yaml.safe_dump(dict(TEMPLATES["kai-ray-cluster"])) == before

    def test_written_out_without_a_template(self) -> None:
        workloads = [
            {
                "name": "hand-written",
                "kind": "RayCluster",
                "team": "ml",
                "scheduler": "kueue",
                "image": "rayproject/ray:2.50.1",
                "head": {"cpu": "1", "memory": "2Gi"},
            }
        ]
        cluster = ray(run_stack("dev", {WORKLOADS: workloads}), "default", "hand-written", "RayCluster")
        assert cluster["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "user-queue"
        assert "kueue.x-k8s.io/priority-class" not in cluster["metadata"]["labels"]


def workload_errors(stack: str, change: dict[str, Any], index: int = 0) -> list[str]:
    workloads = config_value(stack, WORKLOADS)
    workloads[index].update(change)
    with pytest.raises(ConfigError) as caught:
        run_stack(stack, {WORKLOADS: workloads})
    return str(caught.value).splitlines()


class TestWorkloadErrors:
    def test_kai_rayjob_needs_a_submission_mode_kai_supports(self) -> None:
        lines = workload_errors("kai", {"kind": "RayJob", "entrypoint": "python train.py"})
        assert lines == [
            f"config error: {WORKLOADS}[0].submissionMode: got 'K8sJobMode (default)', expected HTTPMode, "
            "SidecarMode or InteractiveMode: KubeRay's KAI integration refuses K8sJobMode (the default) and the "
            "RayJob requeues forever"
        ]
        workloads = config_value("kai", WORKLOADS)
        workloads[0].update({"kind": "RayJob", "entrypoint": "python train.py", "submissionMode": "HTTPMode"})
        job = named(run_stack("kai", {WORKLOADS: workloads}), "team-a-raycluster-sample-rayjob")
        assert job.inputs["spec"]["submissionMode"] == "HTTPMode"

    def test_kueue_rayjob_must_shut_down(self) -> None:
        assert workload_errors("dev", {"shutdownAfterJobFinishes": False}) == [
            f"config error: {WORKLOADS}[0].shutdownAfterJobFinishes: got false, expected true: Kueue does not "
            "support RayJobs that keep their cluster after finishing"
        ]

    def test_rayjob_fields_on_a_raycluster(self) -> None:
        assert workload_errors("kai", {"entrypoint": "python x.py"}) == [
            f"config error: {WORKLOADS}[0].entrypoint: got 'python x.py', expected no value: only a RayJob takes it"
        ]

    def test_gpu_fraction_is_kai_only(self) -> None:
        head = {"cpu": "2", "memory": "8G", "gpu": 0, "gpuFraction": 0.5}
        assert workload_errors("dev", {"head": head}) == [
            f"config error: {WORKLOADS}[0].head.gpuFraction: got 0.5, expected no value: GPU fractions are a KAI "
            "Scheduler feature"
        ]

    def test_gpu_fraction_excludes_whole_gpus(self) -> None:
        workloads = config_value("kai", WORKLOADS)
        workloads[1]["workerGroups"] = [dict(TEMPLATES["kai-half-gpu-cluster"]["workerGroups"][0], gpu=1)]
        with pytest.raises(ConfigError) as caught:
            run_stack("kai", {WORKLOADS: workloads})
        assert str(caught.value).splitlines() == [
            f"config error: {WORKLOADS}[1].workerGroups[0].gpu: got 1, expected 0 with gpuFraction (KAI rejects a "
            "fraction next to a whole-GPU limit)"
        ]

    def test_gpu_fraction_out_of_range(self) -> None:
        lines = workload_errors("kai", {"head": {"gpuFraction": 1.5}})
        assert lines == [
            f"config error: {WORKLOADS}[0].head.gpuFraction: got 1.5, expected input should be less than 1"
        ]

    def test_gpu_fraction_needs_kai_gpu_sharing(self) -> None:
        kai = config_value("kai", "gpu-batch:kai")
        kai["gpuSharing"] = False
        with pytest.raises(ConfigError) as caught:
            run_stack("kai", {"gpu-batch:kai": kai})
        assert str(caught.value).splitlines() == [
            "config error: gpu-batch:kai.gpuSharing: got false, expected true: gpu-batch:workloads[1] "
            "(raycluster-half-gpu) requests a GPU fraction, which KAI's webhook refuses while sharing is off"
        ]

    def test_unknown_template(self) -> None:
        (line,) = workload_errors("dev", {"template": "pytorch-text-clasifier"})
        assert line.startswith(
            f"config error: {WORKLOADS}[0].template: got 'pytorch-text-clasifier', expected one of"
        )

    def test_unknown_priority_class(self) -> None:
        assert workload_errors("kai", {"priorityClass": "biuld"}) == [
            f"config error: {WORKLOADS}[0].priorityClass: got 'biuld', expected a PriorityClass the KAI chart "
            "installs (did you mean build?) (build, build-preemptible, inference, train)"
        ]

    def test_team_must_exist_and_have_the_queue(self) -> None:
        assert workload_errors("dev", {"team": "mll"}) == [
            f"config error: {WORKLOADS}[0].team: got 'mll', expected a team declared under gpu-batch:teams "
            "(did you mean ml?) (ml)"
        ]

    def test_rayjob_name_length(self) -> None:
        name = "pytorch-text-classifier-with-a-much-too-long-name"
        assert workload_errors("dev", {"name": name}) == [
            f"config error: {WORKLOADS}[0].name: got '{name}', expected at most 47 characters (KubeRay refuses "
            "longer RayJob names)"
        ]

    def test_names_unique_per_namespace_across_kinds(self) -> None:
        # The second entry is the duplicate, whatever kind the first is.
        assert workload_errors(
            "kai",
            {
                "name": "raycluster-half-gpu",
                "kind": "RayJob",
                "entrypoint": "x",
                "submissionMode": "HTTPMode",
            },
        ) == [
            f"config error: {WORKLOADS}[1].name: got 'raycluster-half-gpu', expected a workload name used once "
            "in namespace team-a"
        ]

    def test_quantity_in_a_pod(self) -> None:
        (line,) = workload_errors("kai", {"head": {"memory": "2 GiB"}})
        assert line.startswith(
            f"config error: {WORKLOADS}[0].head.memory: got '2 GiB', expected a Kubernetes quantity"
        )
