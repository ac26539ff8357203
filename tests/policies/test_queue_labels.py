"""Queue labels where they matter (rules.queue_labels): mandatory where the stack enforces
queueing, advisory where Kueue/KAI merely run, nothing where neither does."""

from __future__ import annotations

import yaml
from gpu_batch_policy.rules.kueue import queue_labels as rules_queue_labels

from tests.policies.workload_stack import (
    UNKNOWN,
    Registration,
    helm_release,
    k8s,
    kai_queue,
    kai_release,
    kuberay_release,
    local_queue,
    pod,
    ray_cluster,
    ray_job,
    run,
)

POLICY = {p.name: p for p in rules_queue_labels.POLICIES}
ENFORCED = POLICY["workload-has-queue-label"]
ADVISED = POLICY["workload-queue-label-advised"]
KAI = {"kai.scheduler/queue": "team-a"}
KUEUE = {"kueue.x-k8s.io/queue-name": "user-queue"}
# KAI chart values that stop it creating default-parent-queue / default-queue.
NO_CHART_QUEUES = {"createDefaultQueue": False}


def kueue_release(manage_all: bool) -> Registration:
    config = yaml.safe_dump({"manageJobsWithoutQueueName": manage_all})
    return helm_release(
        "kueue",
        "oci://registry.k8s.io/kueue/charts/kueue",
        {"managerConfig": {"controllerManagerConfigYaml": config}},
    )


def test_team_namespace_with_a_local_queue_is_enforced() -> None:
    out = run(ENFORCED, [local_queue("user-queue", "default", "cq"), ray_job("job")])
    assert out.mentions("RayJob 'default/job'", "team namespace", "default/user-queue")


def test_unlabelled_gpu_job_caught_but_cpu_job_not() -> None:
    gpu_job = k8s("batch/v1", "Job", "train", namespace="ml", spec={"template": pod(gpu=1)})
    cpu_job = k8s("batch/v1", "Job", "etl", namespace="ml", spec={"template": pod()})
    out = run(ENFORCED, [local_queue("q", "ml", "cq"), gpu_job, cpu_job])
    assert out.mentions("Job 'ml/train'") and not out.mentions("ml/etl")


def test_manage_jobs_without_queue_name_is_enforced_everywhere() -> None:
    job = k8s("batch/v1", "Job", "train", namespace="other", spec={"template": pod(gpu=1)})
    assert run(ENFORCED, [kueue_release(True), job]).mentions(
        "Job 'other/train'", "manageJobsWithoutQueueName"
    )
    assert run(ENFORCED, [kueue_release(False), job]).violations == []
    assert run(ADVISED, [kueue_release(False), job]).mentions("Job 'other/train'")


def test_no_kueue_and_no_kai_says_nothing() -> None:
    stack = [ray_job("job"), k8s("batch/v1", "Job", "train", spec={"template": pod(gpu=1)})]
    assert run(ENFORCED, stack).violations == [] and run(ADVISED, stack).violations == []


def test_kueue_installed_elsewhere_is_advisory() -> None:
    external = {"externalObjects": [{"kind": "Release", "name": "kueue"}]}
    assert run(ENFORCED, [ray_job("job")], external).violations == []
    assert run(ADVISED, [ray_job("job")], external).mentions("RayJob 'default/job'")


def test_kai_without_default_queue_is_enforced() -> None:
    kai_pod = pod(gpu=1)
    kai_pod["spec"]["schedulerName"] = "kai-scheduler"
    job = k8s("batch/v1", "Job", "train", spec={"template": kai_pod})
    stack = [kai_release(defaultQueue=NO_CHART_QUEUES), kai_queue("team-a"), job]
    assert run(ENFORCED, stack).mentions("Job 'default/train'", "default-queue")
    with_default = [*stack, kai_queue("default-queue")]
    assert run(ENFORCED, with_default).violations == []
    assert run(ADVISED, with_default).mentions("Job 'default/train'")


def test_ray_under_kuberay_kai_plugin_counts_as_kai_scheduled() -> None:
    stack = [
        kai_release(defaultQueue=NO_CHART_QUEUES),
        kuberay_release(),
        kai_queue("team-a"),
        ray_cluster("rc"),
    ]
    assert run(ENFORCED, stack).mentions("RayCluster 'default/rc'", "default-queue")


def test_the_kai_charts_own_default_queue_counts_as_declared() -> None:
    """The chart creates default-queue unless told not to (KAI v0.13.0 values.yaml
    defaultQueue.createDefaultQueue: true); the rendered Queue is judged like a declared one."""
    kai_pod = pod(gpu=1)
    kai_pod["spec"]["schedulerName"] = "kai-scheduler"
    job = k8s("batch/v1", "Job", "train", spec={"template": kai_pod})
    stack = [kai_release(), kai_queue("team-a"), job]
    assert run(ENFORCED, stack).violations == []
    assert run(ADVISED, stack).mentions("Job 'default/train'")


def test_kai_label_on_the_pod_template_counts() -> None:
    kai_pod = pod(gpu=1, labels=KAI)
    kai_pod["spec"]["schedulerName"] = "kai-scheduler"
    job = k8s("batch/v1", "Job", "train", spec={"template": kai_pod})
    stack = [kai_release(), kai_queue("team-a"), job]
    assert run(ENFORCED, stack).violations == [] and run(ADVISED, stack).violations == []


def test_kueue_label_on_the_pod_template_does_not_count() -> None:
    # Kueue reads the job object's own label, never its pod template's.
    job = k8s("batch/v1", "Job", "train", namespace="ml", spec={"template": pod(gpu=1, labels=KUEUE)})
    assert run(ENFORCED, [local_queue("user-queue", "ml", "cq"), job]).mentions("Job 'ml/train'")


def test_clean_with_either_label_or_default_local_queue() -> None:
    stack = [
        local_queue("user-queue", "default", "cq"),
        ray_job("a", labels=KUEUE),
        ray_cluster("b", labels=KAI),
        local_queue("default", "team1", "cq"),
        ray_job("c", namespace="team1"),
    ]
    assert run(ENFORCED, stack).violations == [] and run(ADVISED, stack).violations == []


def test_unknown_labels_cannot_check() -> None:
    out = run(ENFORCED, [local_queue("q", "default", "cq"), ray_job("job", labels=UNKNOWN)])
    assert out.violations == [] and out.cannot_check
