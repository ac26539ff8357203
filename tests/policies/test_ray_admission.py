"""Kueue's Ray webhooks and KubeRay's replica bounds (rules.webhooks.kueue_ray, rules.webhooks.kuberay): each rule caught on a
broken workload, silent on a clean one, advisory when Kueue is not in the stack."""

from __future__ import annotations

from typing import Any

from gpu_batch_policy.rules.webhooks import kuberay, kueue_ray

from tests.policies.workload_stack import (
    Registration,
    local_queue,
    pod,
    ray_cluster,
    ray_job,
    run,
    workers,
)

POLICY = {p.name: p for p in [*kueue_ray.POLICIES, *kuberay.POLICIES]}
WEBHOOK = POLICY["kueue-ray-webhook"]
BOUNDS = POLICY["kuberay-replica-bounds"]
KUEUE = {"kueue.x-k8s.io/queue-name": "user-queue"}
QUEUE = local_queue("user-queue", "default", "cq")  # Kueue is in the stack


def managed_job(**spec: Any) -> Registration:
    job = ray_job("job", labels=KUEUE, groups=[workers("w", pod(), 2, 1, maxReplicas=4)])
    job[1]["spec"]["shutdownAfterJobFinishes"] = True
    job[1]["spec"].update(spec)
    return job


def test_clean_managed_job_passes() -> None:
    assert run(WEBHOOK, [QUEUE, managed_job()]).violations == []


def test_shutdown_after_finish_is_required() -> None:
    out = run(WEBHOOK, [QUEUE, managed_job(shutdownAfterJobFinishes=False)])
    assert out.mentions("RayJob 'default/job'", "shutdownAfterJobFinishes")


def test_cluster_selector_with_cluster_spec_is_rejected() -> None:
    out = run(WEBHOOK, [QUEUE, managed_job(clusterSelector={"ray.io/cluster": "c"})])
    assert out.mentions("clusterSelector and spec.rayClusterSpec")


def test_cluster_selector_alone_is_not_managed() -> None:
    job = managed_job(clusterSelector={"ray.io/cluster": "c"}, shutdownAfterJobFinishes=False)
    del job[1]["spec"]["rayClusterSpec"]
    assert run(WEBHOOK, [QUEUE, job]).violations == []


def test_neither_selector_nor_cluster_spec_is_rejected() -> None:
    job = managed_job()
    del job[1]["spec"]["rayClusterSpec"]
    assert run(WEBHOOK, [QUEUE, job]).mentions("neither spec.rayClusterSpec")


def test_autoscaling_needs_the_elastic_annotation() -> None:
    job = managed_job()
    job[1]["spec"]["rayClusterSpec"]["enableInTreeAutoscaling"] = True
    assert run(WEBHOOK, [QUEUE, job]).mentions("in-tree autoscaling")
    job[1]["metadata"]["annotations"] = {"kueue.x-k8s.io/elastic-job": "true"}
    assert run(WEBHOOK, [QUEUE, job]).violations == []


def test_head_group_name_and_pod_set_count() -> None:
    head_named = ray_cluster("rc", labels=KUEUE, groups=[workers("head", pod(), 1)])
    assert run(WEBHOOK, [QUEUE, head_named]).mentions("RayCluster 'default/rc'", "reserves for the head")
    many = ray_cluster("big", labels=KUEUE, groups=[workers(f"g{i}", pod(), 1) for i in range(18)])
    assert run(WEBHOOK, [QUEUE, many]).mentions("19 pod sets")
    ok = ray_cluster("ok", labels=KUEUE, groups=[workers(f"g{i}", pod(), 1) for i in range(17)])
    assert run(WEBHOOK, [QUEUE, ok]).violations == []


def test_unlabelled_workload_is_not_judged_by_kueue() -> None:
    job = ray_job("job")
    assert run(WEBHOOK, [QUEUE, job]).violations == []


def test_without_kueue_in_the_stack_it_is_not_in_this_stack() -> None:
    out = run(WEBHOOK, [managed_job(shutdownAfterJobFinishes=False)])
    assert out.violations == [] and out.cannot_check and "not in this stack" in out.cannot_check
    closed = {"closedWorld": True}  # the stack is the whole platform: the rule applies
    assert run(WEBHOOK, [managed_job(shutdownAfterJobFinishes=False)], closed).mentions(
        "shutdownAfterJobFinishes"
    )
    external = {"externalObjects": [{"kind": "Release", "name": "kueue"}]}
    assert run(WEBHOOK, [managed_job(shutdownAfterJobFinishes=False)], external).mentions(
        "shutdownAfterJobFinishes"
    )


def test_replica_bounds() -> None:
    assert (
        run(BOUNDS, [ray_cluster("rc", groups=[workers("w", pod(), 2, 1, maxReplicas=4)])]).violations == []
    )
    inverted = ray_cluster("rc", groups=[workers("w", pod(), 2, 5, maxReplicas=4)])
    assert run(BOUNDS, [inverted]).mentions("minReplicas 5 greater than maxReplicas 4")
    negative = ray_cluster("rc", groups=[workers("w", pod(), 2, -1)])
    assert run(BOUNDS, [negative]).mentions("negative replica bound")
    defaults = ray_cluster("rc", groups=[workers("w", pod(), 2)])  # CRD defaults 0 .. 2147483647
    assert run(BOUNDS, [defaults]).violations == []


def test_pod_template_without_containers() -> None:
    empty = pod()
    empty["spec"]["containers"] = []
    assert run(BOUNDS, [ray_cluster("rc", groups=[workers("w", empty, 1)])]).mentions("has no containers")
