"""KAI queue rules: each caught on a broken stack, clean on a correct one, and preview-safe."""

from __future__ import annotations

from decimal import Decimal

import pytest
from gpu_batch_policy.facts.kai import quota as kai_quota
from gpu_batch_policy.facts.kai.quota import UNLIMITED, fits, limit_allows, total
from gpu_batch_policy.rules.kai import queues as rules_kai

from tests.policies.workload_stack import (
    UNKNOWN,
    UNKNOWN_NUMBER,
    Registration,
    k8s,
    kai_queue,
    kai_release,
    pod,
    ray_cluster,
    run,
    workers,
)

POLICY = {p.name: p for p in rules_kai.POLICIES}
KAI = "kai.scheduler/queue"


def team(**labels: str) -> dict[str, str]:
    return {KAI: "team-a", **labels}


def seed_queues() -> list[Registration]:
    """The seed's department-1 -> team-a, every quota and limit -1."""
    return [kai_queue("department-1"), kai_queue("team-a", parent="department-1")]


def gpu_gang(name: str, gpus_per_worker: int, n: int, **labels: str) -> Registration:
    return ray_cluster(name, labels=team(**labels), groups=[workers("w", pod(gpu=gpus_per_worker), n, n)])


class TestArithmetic:
    """-1 is unlimited in sums and caps; an unset limit is 0, which blocks any request."""

    def test_unlimited_absorbs_sums(self) -> None:
        assert total([Decimal(2), UNLIMITED, Decimal(3)]) == UNLIMITED
        assert total([Decimal(2), Decimal(3)]) == Decimal(5)

    def test_unlimited_cap_admits_anything_but_unlimited_need_exceeds_any_finite_cap(self) -> None:
        assert fits(Decimal(10**9), UNLIMITED)
        assert not fits(UNLIMITED, Decimal(10**9))

    def test_unset_limit_blocks_nonzero_requests_only(self) -> None:
        assert not limit_allows(None, Decimal("0.5"))
        assert limit_allows(None, Decimal(0))
        assert limit_allows(UNLIMITED, Decimal(8))

    def test_units(self) -> None:
        assert kai_quota.cpu_to_kai(Decimal("1.5")) == 1500
        assert kai_quota.memory_to_kai(Decimal(2 * 1024**3)) == Decimal("2147.483648")


class TestQueueHasResources:
    def test_caught(self) -> None:
        out = run(POLICY["kai-queue-has-resources"], [kai_queue("bare", resources=None)])
        assert out.mentions("Queue 'bare'", "spec.resources")

    def test_clean(self) -> None:
        assert run(POLICY["kai-queue-has-resources"], seed_queues()).violations == []

    def test_unknown_resources_cannot_check(self) -> None:
        out = run(POLICY["kai-queue-has-resources"], [kai_queue("q", resources=UNKNOWN)])
        assert out.violations == [] and out.cannot_check and "spec.resources" in out.cannot_check


class TestQueueParent:
    def test_missing_parent_caught(self) -> None:
        closed = {"closedWorld": True}
        out = run(POLICY["kai-queue-parent-exists"], [kai_queue("team-a", parent="department-9")], closed)
        assert out.mentions("Queue 'team-a'", "department-9")

    def test_missing_parent_with_other_queues_is_a_typo(self) -> None:
        queues = [kai_queue("department-1"), kai_queue("team-a", parent="departmnet-1")]
        out = run(POLICY["kai-queue-parent-exists"], queues)
        assert out.mentions("Queue 'team-a'", "did you mean 'department-1'?")

    def test_parent_in_another_stack_is_advisory_or_external(self) -> None:
        queue = [kai_queue("team-a", parent="department-9")]
        out = run(POLICY["kai-queue-parent-exists"], queue)
        assert out.violations == [] and out.cannot_check and "not in this stack" in out.cannot_check
        assert "externalObjects" in out.cannot_check
        listed = {"externalObjects": [{"kind": "Queue", "name": "department-9"}]}
        out = run(POLICY["kai-queue-parent-exists"], queue, listed)
        assert out.violations == [] and not out.cannot_check

    def test_cycle_caught(self) -> None:
        out = run(POLICY["kai-queue-parent-exists"], [kai_queue("x", parent="y"), kai_queue("y", parent="x")])
        assert len(out.violations) == 2 and all("cycle" in v for v in out.violations)

    def test_clean(self) -> None:
        assert run(POLICY["kai-queue-parent-exists"], seed_queues()).violations == []

    def test_chart_default_parent_counts_as_existing(self) -> None:
        out = run(
            POLICY["kai-queue-parent-exists"],
            [kai_release(), kai_queue("team-b", parent="default-parent-queue")],
        )
        assert out.violations == []

    def test_unknown_parent_cannot_check(self) -> None:
        out = run(POLICY["kai-queue-parent-exists"], [kai_queue("team-a", parent=UNKNOWN)])
        assert out.violations == [] and out.cannot_check


class TestChildrenQuota:
    policy = POLICY["kai-children-quota-within-parent"]

    def test_sum_over_parent_caught(self) -> None:
        out = run(
            self.policy,
            [
                kai_queue("dept", gpu=(4, -1)),
                kai_queue("a", parent="dept", gpu=(3, -1)),
                kai_queue("b", parent="dept", gpu=(2, -1)),
            ],
        )
        assert out.mentions("Queue 'dept'", "sum to 5", "a=3", "b=2")

    def test_unlimited_child_under_limited_parent_caught(self) -> None:
        out = run(
            self.policy, [kai_queue("dept", cpu=(8000, -1)), kai_queue("a", parent="dept", cpu=(-1, -1))]
        )
        assert out.mentions("Queue 'dept'", "cpu", "unlimited")

    def test_unlimited_parent_and_exact_sum_clean(self) -> None:
        stack = [
            *seed_queues(),
            kai_queue("dept2", gpu=(4, 8)),
            kai_queue("c", parent="dept2", gpu=(2, 8)),
            kai_queue("d", parent="dept2", gpu=(2, 8)),
        ]
        assert run(self.policy, stack).violations == []

    def test_unset_child_quota_counts_as_zero(self) -> None:
        stack = [kai_queue("dept", gpu=(0, -1)), kai_queue("a", parent="dept", gpu=(None, -1))]
        assert run(self.policy, stack).violations == []

    def test_unknown_quota_cannot_check(self) -> None:
        out = run(
            self.policy,
            [kai_queue("dept", gpu=(2, -1)), kai_queue("a", parent="dept", gpu=(UNKNOWN_NUMBER, -1))],
        )
        assert out.violations == [] and out.cannot_check and "gpu.quota" in out.cannot_check


class TestQuotaWithinLimit:
    policy = POLICY["kai-quota-within-limit"]

    def test_quota_above_limit_caught(self) -> None:
        assert run(self.policy, [kai_queue("a", gpu=(4, 2))]).mentions("Queue 'a'", "gpu quota 4", "limit 2")

    def test_unset_limit_with_quota_caught(self) -> None:
        out = run(self.policy, [kai_queue("a", memory=(1000, None))])
        assert out.mentions("memory quota 1000", "unset")

    def test_unlimited_quota_under_finite_limit_caught(self) -> None:
        assert run(self.policy, [kai_queue("a", cpu=(-1, 4000))]).mentions("cpu quota unlimited")

    def test_clean(self) -> None:
        stack = [
            *seed_queues(),
            kai_queue("b", gpu=(2, 4)),
            kai_queue("c", gpu=(2, -1)),
            kai_queue("d", gpu=(0, None)),
        ]
        assert run(self.policy, stack).violations == []


class TestWorkloadLeafQueue:
    policy = POLICY["kai-workload-leaf-queue"]

    def test_parent_queue_caught(self) -> None:
        stack = [*seed_queues(), ray_cluster("rc", labels={KAI: "department-1"})]
        assert run(self.policy, stack).mentions("RayCluster 'default/rc'", "parent queue", "team-a")

    def test_missing_queue_caught(self) -> None:
        out = run(self.policy, [*seed_queues(), ray_cluster("rc", labels={KAI: "team-z"})])
        assert out.mentions("team-z", "no KAI Queue")

    def test_any_kind_of_workload_is_checked(self) -> None:
        job = k8s("batch/v1", "Job", "etl", namespace="ml", labels={KAI: "department-1"}, spec={})
        assert run(self.policy, [*seed_queues(), job]).mentions("Job 'ml/etl'")

    def test_leaf_and_chart_default_queue_clean(self) -> None:
        stack = [
            *seed_queues(),
            kai_release(),
            ray_cluster("rc", labels=team()),
            ray_cluster("d", labels={KAI: "default-queue"}),
        ]
        assert run(self.policy, stack).violations == []

    def test_unknown_label_cannot_check(self) -> None:
        out = run(self.policy, [*seed_queues(), ray_cluster("rc", labels={KAI: UNKNOWN})])
        assert out.violations == [] and out.cannot_check

    def test_unknown_queue_name_defers_missing(self) -> None:
        out = run(
            self.policy,
            [
                *seed_queues(),
                k8s("scheduling.run.ai/v2", "Queue", UNKNOWN, spec={"resources": {}}),
                ray_cluster("rc", labels={KAI: "team-z"}),
            ],
        )
        assert out.violations == [] and out.cannot_check and "team-z" in out.cannot_check


class TestGangWithinLimits:
    policy = POLICY["kai-gang-within-limits"]

    def test_gang_over_leaf_limit_caught(self) -> None:
        stack = [
            kai_queue("department-1"),
            kai_queue("team-a", parent="department-1", gpu=(2, 3)),
            gpu_gang("rc", 1, 4),
        ]
        out = run(self.policy, stack)
        assert out.mentions("RayCluster 'default/rc'", "needs 4 GPUs", "caps gpu at 3")

    def test_gang_over_ancestor_limit_caught(self) -> None:
        stack = [
            kai_queue("department-1", gpu=(2, 2)),
            kai_queue("team-a", parent="department-1", gpu=(2, -1)),
            gpu_gang("rc", 1, 2),
        ]
        # head (no GPU) + 2 workers x 1 GPU = 2 GPUs: fits 2. A third worker does not.
        assert run(self.policy, stack).violations == []
        stack[-1] = gpu_gang("rc", 1, 3)
        assert run(self.policy, stack).mentions("queue 'department-1'", "needs 3 GPUs")

    def test_unset_limit_blocks_requested_resource(self) -> None:
        stack = [
            kai_queue("department-1"),
            kai_queue("team-a", parent="department-1", gpu=None),
            gpu_gang("rc", 1, 1),
        ]
        assert run(self.policy, stack).mentions("gpu limit unset", "nothing allowed")

    def test_unset_limit_of_unrequested_resource_is_fine(self) -> None:
        stack = [
            kai_queue("department-1"),
            kai_queue("team-a", parent="department-1", gpu=None),
            ray_cluster("rc", labels=team()),
        ]
        assert run(self.policy, stack).violations == []

    def test_min_replicas_count_not_replicas(self) -> None:
        """KAI's minMember uses minReplicas when > 0: 2 of 8 replicas x 1 GPU fit a limit of 2."""
        group = workers("w", pod(gpu=1), 8, 2)
        stack = [
            kai_queue("department-1"),
            kai_queue("team-a", parent="department-1", gpu=(2, 2)),
            ray_cluster("rc", labels=team(), groups=[group]),
        ]
        assert run(self.policy, stack).violations == []

    def test_fractions_count_as_fractions(self) -> None:
        half = pod(annotations={"gpu-fraction": "0.5"})
        stack = [
            kai_queue("department-1"),
            kai_queue("team-a", parent="department-1", gpu=(1, 1)),
            ray_cluster("rc", labels=team(), groups=[workers("w", half, 2, 2)]),
        ]
        assert run(self.policy, stack).violations == []
        stack[-1] = ray_cluster("rc", labels=team(), groups=[workers("w", half, 3, 3)])
        assert run(self.policy, stack).mentions("needs 1.5 GPUs")

    def test_cpu_and_memory_in_kai_units(self) -> None:
        stack = [
            kai_queue("department-1"),
            kai_queue("team-a", parent="department-1", cpu=(0, 2500), memory=(0, 4000)),
            ray_cluster(
                "rc",
                labels=team(),
                head=pod(cpu="1", memory="2G"),
                groups=[workers("w", pod(cpu="1", memory="1G"), 2, 2)],
            ),
        ]
        out = run(self.policy, stack)
        assert out.mentions("3000 millicores of CPU", "caps cpu at 2500")
        assert not out.mentions("memory")  # 2G + 2 x 1G = 4000 MB fits exactly

    def test_unknown_replicas_cannot_check(self) -> None:
        group = workers("w", pod(gpu=1), UNKNOWN_NUMBER)  # type: ignore[arg-type]
        stack = [
            kai_queue("department-1"),
            kai_queue("team-a", parent="department-1", gpu=(0, 1)),
            ray_cluster("rc", labels=team(), groups=[group]),
        ]
        out = run(self.policy, stack)
        assert out.violations == [] and out.cannot_check and "gang size" in out.cannot_check

    def test_gpu_memory_request_cannot_check(self) -> None:
        stack = [
            kai_queue("department-1"),
            kai_queue("team-a", parent="department-1", gpu=(0, 1)),
            ray_cluster(
                "rc", labels=team(), groups=[workers("w", pod(annotations={"gpu-memory": "2000"}), 4, 4)]
            ),
        ]
        out = run(self.policy, stack)
        assert out.violations == [] and out.cannot_check and "GPU memory" in out.cannot_check


class TestNonPreemptibleWithinQuota:
    policy = POLICY["kai-nonpreemptible-within-quota"]

    def queues(self, quota: int) -> list[Registration]:
        return [kai_queue("department-1"), kai_queue("team-a", parent="department-1", gpu=(quota, -1))]

    @pytest.mark.parametrize(
        "labels", [{"priorityClassName": "build"}, {"ray.io/priority-class-name": "inference"}]
    )
    def test_build_or_inference_over_quota_caught(self, labels: dict[str, str]) -> None:
        out = run(self.policy, [*self.queues(1), gpu_gang("rc", 1, 2, **labels)])
        assert out.mentions("non-preemptible", "needs 2 GPUs", "guarantees only 1")

    def test_quota_zero_never_runs_non_preemptible(self) -> None:
        assert run(self.policy, [*self.queues(0), gpu_gang("rc", 1, 1, priorityClassName="build")]).mentions(
            "guarantees only 0"
        )

    def test_preemptible_and_within_quota_clean(self) -> None:
        stack = [
            *self.queues(2),
            gpu_gang("train", 1, 4, priorityClassName="train"),
            gpu_gang("build", 1, 2, priorityClassName="build"),
            gpu_gang("default", 1, 8),
        ]
        assert run(self.policy, stack).violations == []

    def test_explicit_preemptibility_label_overrides_priority(self) -> None:
        stack = [
            *self.queues(1),
            gpu_gang(
                "rc", 1, 2, priorityClassName="build", **{"kai.scheduler/preemptibility": "preemptible"}
            ),
        ]
        assert run(self.policy, stack).violations == []

    def test_declared_priority_class_value_is_used(self) -> None:
        pc = k8s("scheduling.k8s.io/v1", "PriorityClass", "critical", value=1000)
        assert run(
            self.policy, [*self.queues(1), pc, gpu_gang("rc", 1, 2, priorityClassName="critical")]
        ).mentions("'critical' = 1000")

    def test_unknown_priority_class_cannot_check(self) -> None:
        out = run(self.policy, [*self.queues(1), gpu_gang("rc", 1, 2, priorityClassName="mystery")])
        assert out.violations == [] and out.cannot_check and "mystery" in out.cannot_check
