"""Kinds the pack dropped before judging (issue 42 item 4): CronJobs and queue-name annotations.

Upstream: kubernetes/kubernetes v1.37.2 ``pkg/controller/cronjob/utils.go`` ``getJobFromTemplate2``
(a CronJob's Job carries ``spec.jobTemplate.metadata`` labels and annotations;
``pkg/controller/cronjob/utils_test.go`` ``TestGetJobFromTemplate2``), kubernetes-sigs/kueue
v0.19.2 ``pkg/controller/jobframework/utils.go`` ``QueueNameForObject`` (labels only), KAI v0.17.0
``plugins/cronjobs`` (the default grouper on the Job: one pod).
"""

from __future__ import annotations

from typing import Any

from gpu_batch_policy.rules.kueue import queue_name_reach
from gpu_batch_policy.rules.kueue import workload_gangs as rules_workload_gangs

from tests.policies.test_workload_gangs import KUEUE, queue
from tests.policies.test_workload_kinds import counts
from tests.policies.workload_stack import Registration, k8s, pod, run

FITS = {p.name: p for p in rules_workload_gangs.POLICIES}["workload-gang-fits-queue"]
UNREAD = queue_name_reach.POLICIES[0]


def cronjob(
    *, on_template: bool = True, on_cron: bool = False, parallelism: int = 8, **meta: Any
) -> Registration:
    template_meta: dict[str, Any] = {"labels": dict(KUEUE)} if on_template else {}
    template_meta.update(meta)
    job = {"metadata": template_meta, "spec": {"parallelism": parallelism, "template": pod(gpu=1)}}
    return k8s(
        "batch/v1",
        "CronJob",
        "nightly",
        namespace="ml",
        labels=KUEUE if on_cron else None,
        spec={"schedule": "0 0 * * *", "jobTemplate": job},
    )


def test_a_cronjob_is_judged_as_the_job_it_creates() -> None:
    """Before: a CronJob was no family, so its 8-GPU gang on a 4-GPU queue passed in silence."""
    out = run(FITS, [*queue(4), cronjob()])
    assert out.mentions("CronJob 'ml/nightly'", "nvidia.com/gpu", "never admits")
    assert run(FITS, [*queue(8), cronjob()]).violations == []
    assert counts([cronjob(parallelism=3)]) == {"nightly": [("main", 3)]}
    assert counts([cronjob(parallelism=3)], kai=True) == {"nightly": [("main", 1)]}


def test_min_parallelism_on_the_job_template_counts() -> None:
    notes = {"kueue.x-k8s.io/job-min-parallelism": "2"}
    assert run(FITS, [*queue(4), cronjob(annotations=notes)]).violations == []


def test_a_label_on_the_cronjob_itself_reaches_no_job() -> None:
    stack = [*queue(4), cronjob(on_template=False, on_cron=True)]
    [message] = run(UNREAD, stack).violations
    assert "CronJob 'ml/nightly'" in message and "spec.jobTemplate.metadata.labels" in message
    assert run(FITS, stack).violations == []  # not queued: no gang to judge, and the finding says why
    assert run(UNREAD, [*queue(4), cronjob()]).violations == []


def test_a_queue_name_annotation_is_not_read() -> None:
    annotated = k8s(
        "batch/v1", "Job", "train", namespace="ml", annotations=dict(KUEUE), spec={"template": pod(gpu=1)}
    )
    [message] = run(UNREAD, [*queue(4), annotated]).violations
    assert "Job 'ml/train'" in message and "only as a label" in message
    labelled = k8s("batch/v1", "Job", "train", namespace="ml", labels=KUEUE, spec={"template": pod(gpu=1)})
    assert run(UNREAD, [*queue(4), labelled]).violations == []
    cron = cronjob(on_template=False, annotations=dict(KUEUE))
    [message] = run(UNREAD, [*queue(4), cron]).violations
    assert "spec.jobTemplate.metadata.annotations" in message
