"""Integration wiring rules (KubeRay <-> KAI <-> Kueue labels): caught, clean, preview-safe."""

from __future__ import annotations

import pytest
from gpu_batch_policy.rules.installs import wiring as rules_wiring
from gpu_batch_policy.rules.installs.wiring import version_tuple

from tests.policies.workload_stack import (
    UNKNOWN,
    Registration,
    k8s,
    kai_queue,
    kai_release,
    kuberay_release,
    local_queue,
    pod,
    priority_class,
    ray_cluster,
    ray_job,
    run,
    workers,
)

POLICY = {p.name: p for p in rules_wiring.POLICIES}
KAI = {"kai.scheduler/queue": "team-a"}
KUEUE = {"kueue.x-k8s.io/queue-name": "user-queue"}
HALF = {"gpu-fraction": "0.5"}


def kai_base() -> list[Registration]:
    return [kai_queue("department-1"), kai_queue("team-a", parent="department-1")]


def half_gpu_cluster(annotations: dict[str, str] | None = None, gpu: int | None = None) -> Registration:
    worker = pod(annotations=annotations or HALF, gpu=gpu, gpu_as_limit=True)
    return ray_cluster("raycluster-half-gpu", labels=KAI, groups=[workers("shared-gpu", worker, 2, 2)])


def test_version_tuple() -> None:
    assert version_tuple("v1.6.2") == (1, 6, 2)
    assert version_tuple("1.5.0-rc.1") == (1, 5, 0)
    assert version_tuple("latest") is None


class TestKubeRayBatchScheduler:
    policy = POLICY["kuberay-kai-batch-scheduler"]

    def test_kai_label_without_kai_operator_caught(self) -> None:
        out = run(self.policy, [*kai_base(), kuberay_release(None), ray_cluster("rc", labels=KAI)])
        assert out.mentions("RayCluster 'default/rc'", "batchScheduler.name=kai-scheduler")

    def test_enabled_with_name_caught(self) -> None:
        out = run(self.policy, [kuberay_release("kai-scheduler", enabled=True)])
        assert out.mentions("batchScheduler.enabled=true", "refuses to start")

    def test_unknown_scheduler_name_caught(self) -> None:
        assert run(self.policy, [kuberay_release("default")]).mentions("batchScheduler.name=default")

    def test_too_old_operator_for_rayjob_caught(self) -> None:
        stack = [
            *kai_base(),
            kuberay_release(version="1.5.1"),
            ray_job("job", labels=KAI),
            ray_cluster("rc", labels=KAI),
        ]
        out = run(self.policy, stack)
        assert out.mentions("RayJob 'default/job'", "1.6.0") and not out.mentions("RayCluster")

    def test_clean(self) -> None:
        stack = [
            *kai_base(),
            kuberay_release(),
            ray_cluster("rc", labels=KAI),
            ray_job("kueue-job", labels=KUEUE),
        ]
        assert run(self.policy, stack).violations == []

    def test_no_operator_declared_cannot_check(self) -> None:
        out = run(self.policy, [*kai_base(), ray_cluster("rc", labels=KAI)])
        assert out.violations == [] and out.cannot_check and "no kuberay-operator" in out.cannot_check

    def test_unknown_values_cannot_check(self) -> None:
        out = run(self.policy, [kuberay_release(UNKNOWN), ray_cluster("rc", labels=KAI)])
        assert out.violations == [] and out.cannot_check


class TestRayJobSubmissionMode:
    policy = POLICY["kai-rayjob-submission-mode"]

    @pytest.mark.parametrize("mode", [None, "K8sJobMode"])
    def test_default_or_k8s_job_mode_caught(self, mode: str | None) -> None:
        out = run(self.policy, [kuberay_release(), ray_job("job", labels=KAI, submission_mode=mode)])
        assert out.mentions("RayJob 'default/job'", "K8sJobMode")

    def test_operator_wide_kai_catches_unlabelled_rayjobs_too(self) -> None:
        assert run(self.policy, [kuberay_release(), ray_job("job", labels=KUEUE)]).mentions(
            "runs under a KubeRay operator"
        )

    @pytest.mark.parametrize("mode", ["SidecarMode", "HTTPMode", "InteractiveMode"])
    def test_clean_modes(self, mode: str) -> None:
        assert (
            run(self.policy, [kuberay_release(), ray_job("job", labels=KAI, submission_mode=mode)]).violations
            == []
        )

    def test_kueue_rayjob_without_kai_operator_clean(self) -> None:
        assert run(self.policy, [kuberay_release(None), ray_job("job", labels=KUEUE)]).violations == []

    def test_unknown_mode_cannot_check(self) -> None:
        out = run(self.policy, [kuberay_release(), ray_job("job", labels=KAI, submission_mode=UNKNOWN)])
        assert out.violations == [] and out.cannot_check and "submissionMode" in out.cannot_check

    def test_without_a_kuberay_operator_in_view_it_is_not_in_this_stack(self) -> None:
        job = ray_job("job", labels=KAI)
        out = run(self.policy, [job])
        assert out.violations == [] and out.cannot_check and "not in this stack" in out.cannot_check
        external = {"externalObjects": [{"kind": "Release", "name": "kuberay-operator"}]}
        assert run(self.policy, [job], external).mentions("RayJob 'default/job'", "K8sJobMode")


class TestGpuSharing:
    policy = POLICY["kai-gpu-sharing"]

    def test_sharing_off_caught(self) -> None:
        out = run(self.policy, [kai_release(gpu_sharing=False), half_gpu_cluster()])
        assert out.mentions("shared-gpu pods", "global.gpuSharing=true")

    def test_chart_default_is_off(self) -> None:
        assert run(self.policy, [kai_release(gpu_sharing=None), half_gpu_cluster()]).mentions("gpuSharing")

    @pytest.mark.parametrize("value", ["1", "0", "1.5", "half", "-0.5"])
    def test_fraction_out_of_range_caught(self, value: str) -> None:
        out = run(self.policy, [kai_release(), half_gpu_cluster({"gpu-fraction": value})])
        assert out.mentions(f"gpu-fraction '{value}'")

    def test_fraction_with_whole_gpu_limit_caught(self) -> None:
        assert run(self.policy, [kai_release(), half_gpu_cluster(gpu=1)]).mentions("also 1 nvidia.com/gpu")

    def test_gpu_memory_rules(self) -> None:
        assert run(self.policy, [kai_release(), half_gpu_cluster({"gpu-memory": "2GiB"})]).mentions(
            "positive integer"
        )
        both = {"gpu-fraction": "0.5", "gpu-memory": "2000"}
        assert run(self.policy, [kai_release(), half_gpu_cluster(both)]).mentions(
            "both gpu-fraction and gpu-memory"
        )
        assert run(self.policy, [kai_release(), half_gpu_cluster({"gpu-memory": "2000"})]).violations == []

    def test_any_pod_template_is_checked(self) -> None:
        deployment = k8s(
            "apps/v1",
            "Deployment",
            "infer",
            namespace="ml",
            spec={"template": pod(annotations={"gpu-fraction": "2"})},
        )
        assert run(self.policy, [kai_release(), deployment]).mentions("Deployment 'ml/infer'")

    def test_seed_sample_clean(self) -> None:
        assert run(self.policy, [kai_release(), *kai_base(), half_gpu_cluster()]).violations == []

    def test_no_kai_release_cannot_check(self) -> None:
        out = run(self.policy, [half_gpu_cluster()])
        assert out.violations == [] and out.cannot_check and "no kai-scheduler release" in out.cannot_check

    def test_unknown_annotation_cannot_check(self) -> None:
        out = run(self.policy, [kai_release(), half_gpu_cluster({"gpu-fraction": UNKNOWN})])
        assert out.violations == [] and out.cannot_check


class TestQueueLabelResolves:
    policy = POLICY["kueue-queue-label-resolves"]

    def test_other_namespace_caught(self) -> None:
        out = run(
            self.policy,
            [local_queue("user-queue", "team1", "cq"), ray_job("job", labels=KUEUE, namespace="team2")],
        )
        assert out.mentions("RayJob 'team2/job'", "namespace 'team2' has no LocalQueue 'user-queue'", "team1")

    def test_clean(self) -> None:
        assert (
            run(
                self.policy, [local_queue("user-queue", "default", "cq"), ray_job("job", labels=KUEUE)]
            ).violations
            == []
        )

    def test_unknown_local_queue_name_cannot_check(self) -> None:
        stack = [local_queue(UNKNOWN, "default", "cq"), ray_job("job", labels=KUEUE)]
        out = run(self.policy, stack)
        assert out.violations == [] and out.cannot_check


class TestPriorityClassExists:
    policy = POLICY["kueue-priority-class-exists"]

    def labelled(self, name: str) -> Registration:
        return ray_job("job", labels={**KUEUE, "kueue.x-k8s.io/priority-class": name})

    def test_caught(self) -> None:
        out = run(self.policy, [priority_class("prod-priority", 1000), self.labelled("dev-priority")])
        assert out.mentions("dev-priority", "prod-priority")

    def test_clean_v1beta1_class(self) -> None:
        stack = [
            priority_class("dev-priority", 100, api="kueue.x-k8s.io/v1beta1"),
            self.labelled("dev-priority"),
        ]
        assert run(self.policy, stack).violations == []

    def test_unknown_label_cannot_check(self) -> None:
        out = run(self.policy, [self.labelled(UNKNOWN)])
        assert out.violations == [] and out.cannot_check
