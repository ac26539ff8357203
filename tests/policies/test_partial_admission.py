"""PartialAdmission: a Job with ``kueue.x-k8s.io/job-min-parallelism`` is judged at its minimum (issue 42 item 3).

Upstream: kubernetes-sigs/kueue v0.19.2 ``pkg/scheduler/scheduler_test.go`` ``TestSchedule``
"partial admission single variable pod set" (50 pods of 2 CPU, minimum 20, a 50-CPU queue: admitted
with 25) and "partial admission disabled, multiple variable pod sets"; ``pkg/scheduler/
flavorassigner/podset_reducer_test.go`` ``TestSearch``; ``pkg/controller/jobs/job/job_controller.go``
``minPodsCount`` and ``job_webhook.go`` ``validatePartialAdmissionCreate`` (0 < min < pods).
"""

from __future__ import annotations

from typing import Any

from gpu_batch_policy.facts.model import StackModel
from gpu_batch_policy.facts.workload_kinds import kueue_gangs
from gpu_batch_policy.facts.workload_kinds.base import at_minimum
from gpu_batch_policy.rules.kueue import workload_gangs as rules_workload_gangs

from tests.policies.test_workload_gangs import KUEUE, queue
from tests.policies.workload_stack import Registration, k8s, pod, run

FITS = {p.name: p for p in rules_workload_gangs.POLICIES}["workload-gang-fits-queue"]
MIN = "kueue.x-k8s.io/job-min-parallelism"


def job(minimum: Any = None, parallelism: int = 50) -> Registration:
    notes = None if minimum is None else {MIN: minimum}
    spec = {"parallelism": parallelism, "template": pod(gpu=2)}
    return k8s("batch/v1", "Job", "train", namespace="ml", labels=KUEUE, annotations=notes, spec=spec)


def test_a_job_that_fits_at_its_minimum_is_no_finding() -> None:
    """50 pods x 2 GPUs = 100 > 50, but at the minimum of 20 pods (40 GPUs) Kueue admits it."""
    assert run(FITS, [*queue(50), job("20")]).violations == []


def test_a_job_too_big_even_at_its_minimum_is_caught() -> None:
    out = run(FITS, [*queue(50), job("30")])
    assert out.mentions("Job 'ml/train'", "nvidia.com/gpu", "never admits")
    assert run(FITS, [*queue(50), job()]).mentions("never admits")  # no minimum: all or nothing


def test_partial_admission_turned_off_judges_the_whole_gang() -> None:
    """``clearMinCountsIfFeatureDisabled`` (jobframework/reconciler.go): no gate, no MinCount."""
    off = {"kueueConfiguration": {"featureGates": {"PartialAdmission": False}}}
    assert run(FITS, [*queue(50), job("20")], off).mentions("never admits")


def test_a_minimum_the_webhook_refuses_leaves_the_count_whole() -> None:
    """``validatePartialAdmissionCreate``: 0 < min < pods, else the Job is refused (no Workload)."""
    for bad in ("0", "50", "80", "-3", "x"):
        [counted] = kueue_gangs(StackModel.from_plain([job(bad)]))
        [pod_set] = counted.gangs[0].pod_sets
        assert pod_set.min_count is None and at_minimum((pod_set,))[0].count == 50
    [counted] = kueue_gangs(StackModel.from_plain([job("20")]))
    assert [p.count for p in at_minimum(counted.gangs[0].pod_sets)] == [20]
