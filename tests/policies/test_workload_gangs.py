"""Quota and gang rules for every workload kind (rules.workload_gangs): broken caught, clean passes."""

from __future__ import annotations

from typing import Any

import yaml
from gpu_batch_policy.rules.kueue import workload_gangs as rules_workload_gangs
from gpu_batch_policy.rules.kueue.capacity import POLICIES as CAPACITY

from tests.policies.workload_stack import (
    Registration,
    cluster_queue,
    flavor,
    gke_cluster,
    helm_release,
    k8s,
    kai_queue,
    local_queue,
    node_pool,
    pod,
    pytorch_job,
    ray_job,
    run,
)

POLICY = {p.name: p for p in rules_workload_gangs.POLICIES}
KUEUE = {"kueue.x-k8s.io/queue-name": "user-queue"}


def queue(
    gpus: int = 4, covered: tuple[str, ...] = ("cpu", "memory", "nvidia.com/gpu")
) -> list[Registration]:
    quota = {"cpu": 100, "memory": "1000Gi", "nvidia.com/gpu": gpus}
    return [
        flavor("gpu"),
        cluster_queue("cq", {"gpu": quota}, covered=covered),
        local_queue("user-queue", "ml", "cq"),
    ]


def job(kind: str = "Job", gpus: int = 1, **spec: Any) -> Registration:
    if kind == "Job":
        return k8s(
            "batch/v1", "Job", "train", namespace="ml", labels=KUEUE, spec={"template": pod(gpu=gpus), **spec}
        )
    if kind == "StatefulSet":
        return k8s(
            "apps/v1",
            "StatefulSet",
            "sts",
            namespace="ml",
            labels=KUEUE,
            spec={"template": pod(gpu=gpus), **spec},
        )
    raise ValueError(kind)


def test_gang_bigger_than_the_queue_is_caught() -> None:
    out = run(POLICY["workload-gang-fits-queue"], [*queue(4), job(parallelism=8)])
    assert out.mentions("Job 'ml/train'", "nvidia.com/gpu", "never admits")
    assert run(POLICY["workload-gang-fits-queue"], [*queue(8), job(parallelism=8)]).violations == []


def test_statefulset_is_one_gang_of_its_replicas() -> None:
    out = run(POLICY["workload-gang-fits-queue"], [*queue(4), job("StatefulSet", replicas=5)])
    assert out.mentions("StatefulSet 'ml/sts'")
    assert (
        run(POLICY["workload-gang-fits-queue"], [*queue(4), job("StatefulSet", replicas=4)]).violations == []
    )


def test_unlabelled_workload_is_not_judged_against_a_queue() -> None:
    unlabelled = k8s(
        "batch/v1", "Job", "train", namespace="ml", spec={"parallelism": 8, "template": pod(gpu=1)}
    )
    assert run(POLICY["workload-gang-fits-queue"], [*queue(4), unlabelled]).violations == []


def test_uncovered_resource_is_caught_with_a_kueue_release() -> None:
    kueue = helm_release("kueue", "oci://registry.k8s.io/kueue/charts/kueue", {})
    stack = [kueue, *queue(covered=("cpu", "nvidia.com/gpu")), job()]
    out = run(POLICY["workload-resources-covered"], stack)
    assert out.mentions("Job 'ml/train'", "requests memory", "never admits")
    assert run(POLICY["workload-resources-covered"], [kueue, *queue(), job()]).violations == []
    # A Ray workload is judged too (its submitter requests cpu and memory).
    rj = ray_job("rj", namespace="ml", labels=KUEUE)
    assert run(
        POLICY["workload-resources-covered"], [kueue, *queue(covered=("nvidia.com/gpu",)), rj]
    ).mentions("RayJob 'ml/rj'", "cpu, memory")


def test_excluded_or_transformed_resources_count_as_kueue_sees_them() -> None:
    config = {"resources": {"excludeResourcePrefixes": ["memory"]}}
    kueue = helm_release(
        "kueue",
        "oci://registry.k8s.io/kueue/charts/kueue",
        {"managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(config)}},
    )
    stack = [kueue, *queue(covered=("cpu", "nvidia.com/gpu")), job()]
    assert run(POLICY["workload-resources-covered"], stack).violations == []


def test_uncovered_resource_without_kueue_in_the_stack_assumes_kueue_defaults() -> None:
    """Issue 18 item 6: with no Kueue release, Kueue 0.19.2's shipped Configuration applies (no
    resource exclusions or transformations), under which flavorassigner.go findFlavorForPodSets
    fails the pod set ('resource %s unavailable in ClusterQueue'); the finding says so."""
    stack = [*queue(covered=("cpu", "nvidia.com/gpu")), job()]
    out = run(POLICY["workload-resources-covered"], stack)
    assert out.mentions("Job 'ml/train'", "requests memory", "assuming Kueue 0.19.2's defaults")
    # The user's install excludes memory: stated in kueueConfiguration, the stack is fine.
    stated = {"kueueConfiguration": {"resources": {"excludeResourcePrefixes": ["memory"]}}}
    assert run(POLICY["workload-resources-covered"], stack, config=stated).violations == []


def test_queue_quotaing_what_nobody_requests_suggests_a_transformation() -> None:
    """Kueue's ResourceTransformation (apis/config/v1beta2 configuration_types.go) maps a request
    (HAMi's nvidia.com/gpucores) to what the queue covers (nvidia.com/total-gpucores); with no
    Kueue release, a queue covering such an output is "not in this stack", not a violation."""
    quota = {"cpu": 100, "memory": "1000Gi", "nvidia.com/total-gpucores": 600}
    hami_queue = [
        flavor("gpu"),
        cluster_queue("cq", {"gpu": quota}, covered=("cpu", "memory", "nvidia.com/total-gpucores")),
        local_queue("user-queue", "ml", "cq"),
    ]
    template = pod()
    template["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpucores"] = "30"
    hami = k8s("batch/v1", "Job", "train", namespace="ml", labels=KUEUE, spec={"template": template})
    out = run(POLICY["workload-resources-covered"], [*hami_queue, hami])
    assert out.violations == [] and "not in this stack" in (out.cannot_check or "")


def test_kind_whose_integration_is_off_is_not_judged() -> None:
    """Kueue 0.19.2's chart leaves kubeflow.org/pytorchjob out of integrations.frameworks
    (../shared/vendor/kueue-0.19.2/values.yaml), so Kueue never queues a PyTorchJob by default."""
    ptj = pytorch_job("ptj", 8, labels=KUEUE)
    assert run(POLICY["workload-gang-fits-queue"], [*queue(4), ptj]).violations == []
    enabled = {"kueueConfiguration": {"integrations": {"frameworks": ["kubeflow.org/pytorchjob"]}}}
    out = run(POLICY["workload-gang-fits-queue"], [*queue(4), ptj], config=enabled)
    assert out.mentions("PyTorchJob 'ml/ptj'", "never admits")


def test_pod_needing_more_gpus_than_a_node_has() -> None:
    pools = [gke_cluster(), node_pool("gpu-pool", gpus=1)]
    out = run(POLICY["workload-pod-fits-node"], [*pools, *queue(), job(gpus=2)])
    assert out.mentions("Job 'ml/train'", "2 GPUs each")
    assert run(POLICY["workload-pod-fits-node"], [*pools, *queue(), job(gpus=1)]).violations == []


def test_kai_gang_over_the_limit_chain() -> None:
    kai_pod = pod(gpu=1)
    labelled = k8s(
        "batch/v1",
        "Job",
        "train",
        labels={"kai.scheduler/queue": "team-a"},
        annotations={"kai.scheduler/batch-min-member": "4"},
        spec={"parallelism": 4, "template": kai_pod},
    )
    queues = [kai_queue("dept", gpu=(-1, 2)), kai_queue("team-a", parent="dept")]
    out = run(POLICY["kai-workload-gang-within-limits"], [*queues, labelled])
    assert out.mentions("Job 'default/train'", "queue 'dept' caps gpu at 2")
    roomy = [kai_queue("dept"), kai_queue("team-a", parent="dept")]
    assert run(POLICY["kai-workload-gang-within-limits"], [*roomy, labelled]).violations == []


def test_ray_gang_counts_the_submitter_like_kueue_019() -> None:
    """kueue-gang-fits-queue (the Ray rule) now counts Kueue 0.19.2's pod sets: a K8sJobMode RayJob
    brings a 500m submitter pod, so a queue sized for head + workers alone never admits it."""
    rule = next(p for p in CAPACITY if p.name == "kueue-gang-fits-queue")
    exact = [
        flavor("gpu"),
        cluster_queue("cq", {"gpu": {"cpu": 2, "memory": "100Gi", "nvidia.com/gpu": 4}}),
        local_queue("user-queue", "ml", "cq"),
    ]
    k8s_mode = ray_job("rj", namespace="ml", labels=KUEUE)  # head: 1 cpu; no workers; + submitter
    k8s_mode[1]["spec"]["rayClusterSpec"]["workerGroupSpecs"] = [
        {"groupName": "w", "replicas": 1, "template": pod(cpu="1", gpu=1)}
    ]
    assert run(rule, [*exact, k8s_mode]).mentions("RayJob 'ml/rj'", "cpu")
    http = ray_job("rj", namespace="ml", labels=KUEUE, submission_mode="HTTPMode")
    http[1]["spec"]["rayClusterSpec"]["workerGroupSpecs"] = k8s_mode[1]["spec"]["rayClusterSpec"][
        "workerGroupSpecs"
    ]
    assert run(rule, [*exact, http]).violations == []


def test_pods_as_a_quota_resource_counts_each_pod() -> None:
    """Kueue v0.19.2 ``flavorassigner.go`` ``assignFlavors``: a ClusterQueue covering ``pods``
    charges each pod set ``pods = count`` (Kueue's ``flavorassigner_test.go`` ``TestAssignFlavors`` "num pods fit" / "num pods don't fit")."""
    covered = ("cpu", "memory", "nvidia.com/gpu", "pods")
    quota = {"cpu": 100, "memory": "1000Gi", "nvidia.com/gpu": 16, "pods": 3}
    stack = [
        flavor("gpu"),
        cluster_queue("cq", {"gpu": quota}, covered=covered),
        local_queue("user-queue", "ml", "cq"),
    ]
    out = run(POLICY["workload-gang-fits-queue"], [*stack, job(parallelism=4)])
    assert out.mentions("Job 'ml/train'", "pods", "never admits")
    assert run(POLICY["workload-gang-fits-queue"], [*stack, job(parallelism=3)]).violations == []
    # Without pods covered, pod count is no quota.
    assert run(POLICY["workload-gang-fits-queue"], [*queue(16), job(parallelism=4)]).violations == []


def test_an_uncovered_request_is_caught_when_the_queue_covers_only_core_resources() -> None:
    """Under Kueue's assumed defaults (no transformations), a queue covering pods/cpu/memory the
    job does not request is no sign of a transformation: the uncovered GPU request is refused
    ("resource ... unavailable in ClusterQueue", flavorassigner.go ``findFlavorForPodSets``).  A
    covered extended resource the job does not request still may be one (not in this stack)."""
    covered = ("pods", "cpu", "memory")
    stack = [
        flavor("gpu"),
        cluster_queue("cq", {"gpu": {"pods": 10}}, covered=covered),
        local_queue("user-queue", "ml", "cq"),
    ]
    gpu_only = k8s(
        "batch/v1",
        "Job",
        "train",
        namespace="ml",
        labels=KUEUE,
        spec={"template": pod(cpu=None, memory=None, gpu=1)},
    )
    out = run(POLICY["workload-resources-covered"], [*stack, gpu_only])
    assert out.mentions("Job 'ml/train'", "nvidia.com/gpu", "never admits")
    credits = ("example.com/credits",)
    hedged = [
        flavor("gpu"),
        cluster_queue("cq", {"gpu": {}}, covered=credits),
        local_queue("user-queue", "ml", "cq"),
    ]
    out = run(POLICY["workload-resources-covered"], [*hedged, gpu_only])
    assert out.violations == [] and out.cannot_check is not None and "example.com/credits" in out.cannot_check


def test_a_queued_kind_kueue_does_not_register_is_cannot_tell() -> None:
    """Kueue's registry (workload_kinds.registry) has no ``example.com`` Trainer: never a pass."""
    trainer = k8s("example.com/v1", "Trainer", "t", namespace="ml", labels=KUEUE, spec={"workers": 64})
    out = run(POLICY["workload-gang-fits-queue"], [*queue(4), trainer])
    assert out.violations == [] and out.cannot_check is not None
    assert "example.com/Trainer" in out.cannot_check and "externalFrameworks" in out.cannot_check
    unlabelled = k8s("example.com/v1", "Trainer", "t", namespace="ml", spec={"workers": 64})
    assert run(POLICY["workload-gang-fits-queue"], [*queue(4), unlabelled]).cannot_check is None
    assert run(POLICY["workload-gang-fits-queue"], [*queue(8), job(parallelism=8)]).cannot_check is None


def _kai_deployment(**labels: str) -> Registration:
    template = pod(gpu=1, labels={"kai.scheduler/queue": "team-a"})
    template["spec"]["schedulerName"] = "kai-scheduler"
    spec = {"replicas": 1, "selector": {"matchLabels": {"app": "s"}}, "template": template}
    return k8s(
        "apps/v1",
        "Deployment",
        "serve",
        namespace="ml",
        labels={"kai.scheduler/queue": "team-a", **labels},
        spec=spec,
    )


def test_a_non_preemptible_workload_of_any_kind_needs_queue_quota() -> None:
    """KAI v0.17.0: a Deployment with no priority class is ``inference`` (125, non-preemptible:
    ``plugins/deployment`` grouper), which runs only within quota (``quota_check.go``)."""
    rule = POLICY["kai-workload-nonpreemptible-within-quota"]
    no_gpu_quota = [kai_queue("dept"), kai_queue("team-a", parent="dept", gpu=(0, -1))]
    out = run(rule, [*no_gpu_quota, _kai_deployment()])
    assert out.mentions("Deployment 'ml/serve'", "non-preemptible", "inference", "guarantees only 0")
    # A preemptible class (train, 50) may run over quota.
    assert run(rule, [*no_gpu_quota, _kai_deployment(priorityClassName="train")]).violations == []
    # A Job defaults to train under KAI's default grouper.
    job_template = pod(gpu=1)
    kai_job = k8s(
        "batch/v1",
        "Job",
        "j",
        namespace="ml",
        labels={"kai.scheduler/queue": "team-a"},
        spec={"template": job_template},
    )
    assert run(rule, [*no_gpu_quota, kai_job]).violations == []
    with_quota = [kai_queue("dept"), kai_queue("team-a", parent="dept", gpu=(1, -1))]
    assert run(rule, [*with_quota, _kai_deployment()]).violations == []


def test_ignore_undeclared_quota_check_strategy_lets_uncovered_requests_through() -> None:
    """Kueue v0.19.2 ``QuotaCheckStrategy``: BlockUndeclared (default) refuses an uncovered request;
    IgnoreUndeclared checks only covered resources."""
    covered = ("cpu", "memory")
    stack = [
        flavor("gpu"),
        cluster_queue("cq", {"gpu": {"cpu": 10, "memory": "10Gi"}}, covered=covered),
        local_queue("user-queue", "ml", "cq"),
    ]
    rule = POLICY["workload-resources-covered"]
    assert run(rule, [*stack, job()]).mentions("nvidia.com/gpu", "never admits")
    ignore = {"kueueConfiguration": {"resources": {"quotaCheckStrategy": "IgnoreUndeclared"}}}
    assert run(rule, [*stack, job()], ignore).violations == []
    block = {"kueueConfiguration": {"resources": {"quotaCheckStrategy": "BlockUndeclared"}}}
    assert run(rule, [*stack, job()], block).mentions("nvidia.com/gpu")
