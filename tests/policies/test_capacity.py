"""Capacity and gang rules for Kueue: caught on broken stacks, clean on correct ones, preview-safe."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import pytest
from gpu_batch_policy.facts.demand import PodSet
from gpu_batch_policy.facts.model.workloads import PodTemplate
from gpu_batch_policy.rules.kueue import capacity as rules_capacity
from gpu_batch_policy.rules.kueue.capacity import nodes_needed

from tests.policies.workload_stack import (
    UNKNOWN,
    UNKNOWN_NUMBER,
    Registration,
    cluster_queue,
    flavor,
    gke_cluster,
    local_queue,
    node_pool,
    pod,
    provisioning,
    ray_job,
    registration,
    run,
    workers,
)

POLICY = {p.name: p for p in rules_capacity.POLICIES}
QUEUE = {"kueue.x-k8s.io/queue-name": "user-queue"}
POOL = "cloud.google.com/gke-nodepool"


def dev_stack(
    *,
    n_workers: int = 0,
    worker_gpus: int = 1,
    gpu_quota: Any = 10,
    max_nodes: Any = 10,
    queued: bool = True,
    checks: tuple[str, ...] = ("dws",),
    flavor_labels: Mapping[str, Any] | None = None,
    extra: tuple[Registration, ...] = (),
) -> list[Registration]:
    """Seed scenario 1 as a stack: CPU pool, a 1xL4 queued-provisioning pool, DWS check, RayJob."""
    groups = [workers("w", pod(gpu=worker_gpus), n_workers)] if n_workers else []
    return [
        gke_cluster(),
        node_pool("cpu-pool", machine_type="e2-standard-4", accelerator=None, max_nodes=1),
        node_pool("gpu-node-pool", max_nodes=max_nodes, queued=queued),
        flavor("default-flavor", flavor_labels),
        *provisioning("dws"),
        cluster_queue(
            "cluster-queue",
            {"default-flavor": {"cpu": 10000, "memory": "10000Gi", "nvidia.com/gpu": gpu_quota}},
            checks=checks,
        ),
        local_queue("user-queue", "default", "cluster-queue"),
        ray_job("job", labels=QUEUE, head=pod(cpu="2", memory="8G", gpu=1), groups=groups),
        *extra,
    ]


def pods(count: int, gpus: int) -> tuple[PodSet, Decimal]:
    return PodSet("w", count, PodTemplate(pod(gpu=gpus), "t"), "spec"), Decimal(gpus)


class TestNodesNeeded:
    """A lower bound on nodes: GPU total over per-node GPUs, and pods-per-node packing."""

    def test_total_bound(self) -> None:
        assert nodes_needed([pods(9, 1)], 4) == 3

    def test_packing_bound_beats_total(self) -> None:
        # 5 pods of 3 GPUs on 4-GPU nodes: 15/4 rounds up to 4, but only one pod fits a node -> 5.
        assert nodes_needed([pods(5, 3)], 4) == 5

    def test_pod_bigger_than_node(self) -> None:
        assert nodes_needed([pods(1, 8)], 4) is None

    def test_mixed_pod_sets(self) -> None:
        # head 1x1 GPU + 4 workers x 2 GPUs on 2-GPU nodes: 9 GPUs -> 5 nodes (4 full + head).
        assert nodes_needed([pods(1, 1), pods(4, 2)], 2) == 5


class TestPodFitsNode:
    policy = POLICY["gpu-pod-fits-a-node"]

    def test_caught(self) -> None:
        out = run(self.policy, dev_stack(n_workers=1, worker_gpus=2))
        assert out.mentions("RayJob 'default/job'", "w pods request 2 GPUs", "'gpu-node-pool' (1 per node)")

    def test_clean(self) -> None:
        assert run(self.policy, dev_stack(n_workers=4)).violations == []

    def test_pod_node_selector_narrows_pools(self) -> None:
        big = node_pool("a100", machine_type="a2-highgpu-4g", accelerator=None, max_nodes=2)
        selected = ray_job(
            "sel", head=pod(gpu=4, node_selector={"cloud.google.com/gke-accelerator": "nvidia-l4"})
        )
        unselected = ray_job("free", head=pod(gpu=4))
        out = run(self.policy, [gke_cluster(), node_pool("l4"), big, selected, unselected])
        assert out.mentions("RayJob 'default/sel'") and not out.mentions("RayJob 'default/free'")

    def test_no_pools_declared_cannot_check(self) -> None:
        out = run(self.policy, [ray_job("job", head=pod(gpu=8))])
        assert out.violations == [] and out.cannot_check and "no GKE node pools" in out.cannot_check

    def test_auto_provisioning_defers_unpinned(self) -> None:
        cluster = registration(
            "gcp:container/cluster:Cluster",
            "c",
            {"name": "gpu-cluster", "clusterAutoscaling": {"enabled": True}},
        )
        out = run(self.policy, [cluster, node_pool("l4"), ray_job("job", head=pod(gpu=4))])
        assert out.violations == [] and out.cannot_check and "auto-provisioning" in out.cannot_check

    def test_unknown_gpu_count_cannot_check(self) -> None:
        out = run(
            self.policy,
            [gke_cluster(), node_pool("l4", gpus=UNKNOWN_NUMBER), ray_job("job", head=pod(gpu=4))],
        )
        assert out.violations == [] and out.cannot_check


class TestGangFitsQueue:
    policy = POLICY["kueue-gang-fits-queue"]

    def test_gang_over_quota_caught(self) -> None:
        out = run(self.policy, dev_stack(n_workers=12, max_nodes=20))
        assert out.mentions(
            "w pods (12) need 12 nvidia.com/gpu", "ClusterQueue 'cluster-queue'", "10 nvidia.com/gpu"
        )

    def test_gang_over_one_queued_pool_caught(self) -> None:
        out = run(self.policy, dev_stack(n_workers=12, gpu_quota=100))
        assert out.mentions("13 GPUs from one ProvisioningRequest", "'gpu-node-pool': 10 nodes x 1 GPUs")

    def test_queued_check_without_queued_pool_caught(self) -> None:
        assert run(self.policy, dev_stack(queued=False)).mentions("have no queued provisioning")

    def test_seed_shape_clean(self) -> None:
        assert run(self.policy, dev_stack()).violations == []
        assert run(self.policy, dev_stack(n_workers=9)).violations == []  # 10 GPUs: exactly one full pool

    def test_total_over_two_flavors_caught_but_split_podsets_clean(self) -> None:
        """Kueue assigns a flavor per PodSet, so head and workers may land in different flavors."""
        stack = [
            flavor("a"),
            flavor("b"),
            cluster_queue(
                "cq", {"a": {"nvidia.com/gpu": 4}, "b": {"nvidia.com/gpu": 4}}, covered=["nvidia.com/gpu"]
            ),
            local_queue("user-queue", "default", "cq"),
            ray_job("job", labels=QUEUE, head=pod(gpu=4), groups=[workers("w", pod(gpu=1), 4)]),
        ]
        assert run(self.policy, stack).violations == []
        stack[-1] = ray_job("job", labels=QUEUE, head=pod(gpu=4), groups=[workers("w", pod(gpu=1), 5)])
        assert run(self.policy, stack).mentions("w pods (5) need 5 nvidia.com/gpu")

    def test_borrowing_from_cohort_counts(self) -> None:
        def stack(borrowing: int | None) -> list[Registration]:
            limits = {"f": {"nvidia.com/gpu": borrowing}} if borrowing is not None else None
            return [
                flavor("f"),
                cluster_queue(
                    "team1",
                    {"f": {"nvidia.com/gpu": 2}},
                    covered=["nvidia.com/gpu"],
                    cohort="c",
                    borrowing=limits,
                ),
                cluster_queue("team2", {"f": {"nvidia.com/gpu": 6}}, covered=["nvidia.com/gpu"], cohort="c"),
                local_queue("user-queue", "default", "team1"),
                ray_job("job", labels=QUEUE, head=pod(gpu=1), groups=[workers("w", pod(gpu=1), 5)]),
            ]

        assert run(self.policy, stack(None)).violations == []  # 2 own + 6 borrowable >= 6
        assert run(self.policy, stack(3)).mentions(
            "5 nvidia.com/gpu"
        )  # borrowingLimit 3 -> 5 < 5 workers+head

    def test_lending_limit_caps_what_others_lend(self) -> None:
        stack = [
            flavor("f"),
            cluster_queue("team1", {"f": {"nvidia.com/gpu": 2}}, covered=["nvidia.com/gpu"], cohort="c"),
            cluster_queue(
                "team2",
                {"f": {"nvidia.com/gpu": 6}},
                covered=["nvidia.com/gpu"],
                cohort="c",
                lending={"f": {"nvidia.com/gpu": 1}},
            ),
            local_queue("user-queue", "default", "team1"),
            ray_job("job", labels=QUEUE, head=pod(gpu=1), groups=[workers("w", pod(gpu=1), 3)]),
        ]
        assert run(self.policy, stack).mentions("4 nvidia.com/gpu", "3 nvidia.com/gpu")

    def test_v1beta1_objects_are_read(self) -> None:
        beta1 = "kueue.x-k8s.io/v1beta1"
        stack = [
            gke_cluster(),
            node_pool("gpu-node-pool", queued=True),
            flavor("default-flavor", api=beta1),
            *provisioning("dws", api=beta1),
            cluster_queue(
                "cq",
                {"default-flavor": {"nvidia.com/gpu": 100}},
                covered=["nvidia.com/gpu"],
                checks=["dws"],
                api=beta1,
            ),
            local_queue("user-queue", "default", "cq", api=beta1),
            ray_job("job", labels=QUEUE, head=pod(gpu=1), groups=[workers("w", pod(gpu=1), 12)]),
        ]
        assert run(self.policy, stack).mentions("from one ProvisioningRequest")

    def test_unknown_quota_cannot_check(self) -> None:
        out = run(self.policy, dev_stack(gpu_quota=UNKNOWN))
        assert out.violations == [] and out.cannot_check and "nominalQuota" in out.cannot_check

    def test_unknown_pool_size_cannot_check(self) -> None:
        out = run(self.policy, dev_stack(n_workers=12, gpu_quota=100, max_nodes=UNKNOWN_NUMBER))
        assert (
            out.violations == []
            and out.cannot_check
            and "size of queued-provisioning pool" in out.cannot_check
        )

    def test_no_pools_declared_cannot_check_pool_but_still_checks_quota(self) -> None:
        stack = [r for r in dev_stack(n_workers=12) if not r[0].startswith("gcp:")]
        out = run(self.policy, stack)
        assert (
            out.mentions("12 nvidia.com/gpu") and out.cannot_check and "no GKE node pools" in out.cannot_check
        )


class TestQuotaWithinCapacity:
    policy = POLICY["kueue-quota-within-capacity"]

    def test_caught_without_provisioning_check(self) -> None:
        out = run(self.policy, dev_stack(checks=(), gpu_quota=16, queued=False))
        assert out.mentions("ResourceFlavor 'default-flavor'", "16 nominal", "at most 10 GPUs")

    @pytest.mark.parametrize("checks", [("dws",), ()])
    def test_clean_with_check_or_within_capacity(self, checks: tuple[str, ...]) -> None:
        quota = 10_000 if checks else 10
        assert run(self.policy, dev_stack(checks=checks, gpu_quota=quota)).violations == []

    def test_overcommit_ratio_from_config(self) -> None:
        stack = dev_stack(checks=(), gpu_quota=15, queued=False)
        assert run(self.policy, stack).violations
        assert run(self.policy, stack, {"maxOvercommit": 1.5}).violations == []

    def test_flavor_labels_restrict_capacity(self) -> None:
        extra = (node_pool("other-pool", max_nodes=100),)
        stack = dev_stack(
            checks=(), gpu_quota=20, queued=False, flavor_labels={POOL: "gpu-node-pool"}, extra=extra
        )
        assert run(self.policy, stack).mentions("at most 10 GPUs")
        unpinned = dev_stack(checks=(), gpu_quota=20, queued=False, extra=extra)
        assert run(self.policy, unpinned).violations == []

    def test_no_pools_cannot_check(self) -> None:
        stack = [r for r in dev_stack(checks=(), gpu_quota=16) if not r[0].startswith("gcp:")]
        out = run(self.policy, stack)
        assert out.violations == [] and out.cannot_check and "no GKE node pools" in out.cannot_check

    def test_unknown_pool_size_cannot_check(self) -> None:
        out = run(self.policy, dev_stack(checks=(), gpu_quota=16, queued=False, max_nodes=UNKNOWN_NUMBER))
        assert out.violations == [] and out.cannot_check and "maximum node count" in out.cannot_check


class TestFlavorNodepoolExists:
    policy = POLICY["kueue-flavor-nodepool-exists"]

    def test_caught(self) -> None:
        out = run(self.policy, dev_stack(flavor_labels={POOL: "gpu-pool-typo"}))
        assert out.mentions("ResourceFlavor 'default-flavor'", "gpu-pool-typo", "cpu-pool, gpu-node-pool")

    def test_clean(self) -> None:
        assert run(self.policy, dev_stack(flavor_labels={POOL: "gpu-node-pool"})).violations == []

    def test_no_pools_declared_is_not_a_failure(self) -> None:
        stack = [flavor("f", {POOL: "gpu-node-pool"})]
        assert run(self.policy, stack).violations == []

    def test_auto_named_pool_cannot_check(self) -> None:
        anonymous = registration("gcp:container/nodePool:NodePool", "p", {"cluster": "gpu-cluster"})
        out = run(self.policy, [anonymous, flavor("f", {POOL: "gpu-node-pool"})])
        assert out.violations == [] and out.cannot_check

    def test_default_pool_kept_by_cluster_counts(self) -> None:
        cluster = registration("gcp:container/cluster:Cluster", "c", {"name": "c", "location": "us-west1-b"})
        assert run(self.policy, [cluster, flavor("f", {POOL: "default-pool"})]).violations == []


class TestFlavorSelectsPool:
    policy = POLICY["kueue-flavor-selects-pool"]

    def test_caught(self) -> None:
        out = run(
            self.policy, dev_stack(flavor_labels={"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"})
        )
        assert out.mentions("gke-accelerator=nvidia-h100-80gb")

    def test_clean_on_accelerator_user_label_and_system_label(self) -> None:
        labelled = node_pool("tagged", labels={"team": "ml"})
        for labels in (
            {"cloud.google.com/gke-accelerator": "nvidia-l4"},
            {"team": "ml"},
            {"topology.kubernetes.io/zone": "us-west1-b"},
        ):
            assert run(self.policy, [*dev_stack(flavor_labels=labels), labelled]).violations == [], labels

    def test_missing_user_label_caught(self) -> None:
        assert run(self.policy, dev_stack(flavor_labels={"team": "ml"})).mentions("team=ml")

    def test_policy_is_advisory(self) -> None:
        from pulumi_policy import EnforcementLevel

        assert self.policy.enforcement_level == EnforcementLevel.ADVISORY
