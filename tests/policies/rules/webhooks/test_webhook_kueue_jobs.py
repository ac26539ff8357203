"""kueue-job-webhook, written from Kueue v0.19.2's webhooks (not from corpus files).

Sources (kubernetes-sigs/kueue v0.19.2):
``pkg/controller/jobframework/validation.go`` ``ValidateJobOnCreate`` (``ValidateQueueName``,
``validateCreateForMaxExecTime``, ``validateCreateForPrebuiltWorkload``,
``ValidateElasticJobAnnotation``); ``pkg/controller/jobs/job/job_webhook.go``
``validatePartialAdmissionCreate``, ``validateSyncCompletionCreate``;
``pkg/controller/jobs/pod/pod_webhook.go`` ``validateManagedLabel``, ``validatePodGroupMetadata``,
``validatePrebuiltWorkloadName``; ``pkg/controller/jobs/deployment/deployment_webhook.go``
``ValidateCreate``; ``pkg/controller/jobframework/tas_validation.go`` ``ValidateTASPodSetRequest``.
"""

from __future__ import annotations

from typing import Any

import pytest
from gpu_batch_policy.rules.webhooks.kueue_jobs import POLICIES

from tests.policies.workload_stack import (
    UNKNOWN,
    Registration,
    helm_release,
    k8s,
    local_queue,
    pod,
    ray_cluster,
    run,
    workers,
)

RULE = POLICIES[0]
QUEUE = local_queue("user-queue", "team", "cq")  # Kueue is in the stack
Q = {"kueue.x-k8s.io/queue-name": "user-queue"}


def queued(
    api: str,
    kind: str,
    spec: dict[str, Any],
    labels: dict[str, Any] | None,
    annotations: dict[str, Any] | None,
) -> Registration:
    """A ``kind`` in namespace ``team`` with the queue label, plus ``labels`` and ``annotations``."""
    labels = {**Q, **(labels or {})}
    return k8s(api, kind, kind.lower(), namespace="team", labels=labels, annotations=annotations, spec=spec)


def job(
    labels: dict[str, Any] | None = None,
    annotations: dict[str, Any] | None = None,
    template_annotations: dict[str, Any] | None = None,
    **spec: Any,
) -> Registration:
    return queued(
        "batch/v1", "Job", {"template": pod(annotations=template_annotations), **spec}, labels, annotations
    )


def bare_pod(labels: dict[str, Any] | None = None, annotations: dict[str, Any] | None = None) -> Registration:
    return queued("v1", "Pod", pod()["spec"], labels, annotations)


def deployment(labels: dict[str, Any]) -> Registration:
    return k8s("apps/v1", "Deployment", "serve", namespace="team", labels=labels, spec={"template": pod()})


def violations(*resources: Registration, config: dict[str, Any] | None = None) -> list[str]:
    return run(RULE, [QUEUE, *resources], config).violations


def test_clean_job_passes() -> None:
    assert violations(job({"kueue.x-k8s.io/max-exec-time-seconds": "3600"})) == []


@pytest.mark.parametrize("queue", ["Team_A", "user queue", "-q", "a" * 254])
def test_queue_name_must_be_a_dns1123_subdomain(queue: str) -> None:
    found = violations(job({"kueue.x-k8s.io/queue-name": queue}))
    assert len(found) == 1 and "kueue.x-k8s.io/queue-name" in found[0]


def test_queue_name_rule_covers_deployments_too() -> None:
    serve = deployment({"kueue.x-k8s.io/queue-name": "Serving"})
    assert any("queue-name='Serving'" in v for v in violations(serve))


@pytest.mark.parametrize("value", ["0", "-5", "1h", "3600 ", "1.5"])
def test_max_exec_time_must_be_a_positive_integer(value: str) -> None:
    found = violations(job({"kueue.x-k8s.io/max-exec-time-seconds": value}))
    assert len(found) == 1 and "max-exec-time-seconds" in found[0]


def test_max_exec_time_is_not_checked_on_deployments() -> None:
    """deployment_webhook.go ValidateCreate runs only ValidateQueueName and the elastic check."""
    serve = deployment({**Q, "kueue.x-k8s.io/max-exec-time-seconds": "0"})
    assert violations(serve) == []


def test_elastic_job_annotation_only_on_job_and_ray() -> None:
    elastic = {"kueue.x-k8s.io/elastic-job": "true"}
    jobset = queued("jobset.x-k8s.io/v1alpha2", "JobSet", {"replicatedJobs": []}, None, elastic)
    assert any("elastic jobs only" in v for v in violations(jobset))
    assert violations(job(annotations=elastic)) == []


def test_elastic_annotation_ignored_when_the_gate_is_off() -> None:
    off = helm_release(
        "kueue",
        "kueue",
        {
            "managerConfig": {
                "controllerManagerConfigYaml": "apiVersion: config.kueue.x-k8s.io/v1beta2\n"
                "kind: Configuration\nintegrations:\n  frameworks: [batch/job, jobset.x-k8s.io/jobset]\n"
            },
            "controllerManager": {
                "featureGates": [{"name": "ElasticJobsViaWorkloadSlices", "enabled": False}]
            },
        },
    )
    jobset = queued(
        "jobset.x-k8s.io/v1alpha2",
        "JobSet",
        {"replicatedJobs": []},
        None,
        {"kueue.x-k8s.io/elastic-job": "true"},
    )
    assert not any("elastic" in v for v in violations(off, jobset))


def test_prebuilt_workload_name_and_kind() -> None:
    bad = violations(job(annotations={"kueue.x-k8s.io/prebuilt-workload-name": "My_WL"}))
    assert len(bad) == 1 and "prebuilt workload 'My_WL'" in bad[0]
    jax = k8s(
        "kubeflow.org/v1",
        "JAXJob",
        "jax",
        namespace="team",
        labels={**Q, "kueue.x-k8s.io/prebuilt-workload-name": "wl"},
        spec={"jaxReplicaSpecs": {}},
    )
    cfg = helm_release(
        "kueue",
        "kueue",
        {
            "managerConfig": {
                "controllerManagerConfigYaml": "integrations:\n  frameworks: [kubeflow.org/jaxjob]\n"
            }
        },
    )
    assert any("does not support for JAXJob" in v for v in violations(cfg, jax))
    assert violations(job(annotations={"kueue.x-k8s.io/prebuilt-workload-name": "wl-1"})) == []


@pytest.mark.parametrize(
    ("annotation", "spec"),
    [
        ("1", {"parallelism": 1}),
        ("4", {"parallelism": 4}),
        ("0", {"parallelism": 4}),
        ("x", {"parallelism": 4}),
        ("3", {"parallelism": 8, "completions": 3}),
    ],
)
def test_min_parallelism_must_be_below_the_pod_count(annotation: str, spec: dict[str, Any]) -> None:
    found = violations(job(annotations={"kueue.x-k8s.io/job-min-parallelism": annotation}, **spec))
    assert len(found) == 1 and "job-min-parallelism" in found[0]


def test_min_parallelism_in_range_passes_but_not_with_elastic() -> None:
    partial = {"kueue.x-k8s.io/job-min-parallelism": "2"}
    assert violations(job(annotations=partial, parallelism=4)) == []
    both = violations(job(annotations={**partial, "kueue.x-k8s.io/elastic-job": "true"}, parallelism=4))
    assert any("both an elastic job and partially admissible" in v for v in both)


def test_sync_completions_needs_indexed_and_equal_counts() -> None:
    sync = {"kueue.x-k8s.io/job-completions-equal-parallelism": "true"}
    found = violations(job(annotations=sync, parallelism=4, completions=2))
    assert any("NonIndexed" in v for v in found) and any("completions 2 != parallelism 4" in v for v in found)
    assert violations(job(annotations=sync, parallelism=4, completions=4, completionMode="Indexed")) == []
    assert any(
        "not a boolean" in v
        for v in violations(
            job(annotations={**sync, "kueue.x-k8s.io/job-completions-equal-parallelism": "yes"})
        )
    )


def test_pod_group_needs_name_and_total_count() -> None:
    name_only = violations(bare_pod(labels={"kueue.x-k8s.io/pod-group-name": "g1"}))
    assert any("without annotation kueue.x-k8s.io/pod-group-total-count" in v for v in name_only)
    count_only = violations(bare_pod(annotations={"kueue.x-k8s.io/pod-group-total-count": "3"}))
    assert any("needs both" in v for v in count_only)
    zero = violations(
        bare_pod(
            labels={"kueue.x-k8s.io/pod-group-name": "g1"},
            annotations={"kueue.x-k8s.io/pod-group-total-count": "0"},
        )
    )
    assert any("integer >= 1" in v for v in zero)
    good = bare_pod(
        labels={"kueue.x-k8s.io/pod-group-name": "g1"},
        annotations={"kueue.x-k8s.io/pod-group-total-count": "3"},
    )
    assert violations(good) == []


def test_pod_group_name_from_annotation_and_prebuilt_must_match() -> None:
    pod_ = bare_pod(
        annotations={
            "kueue.x-k8s.io/pod-group-name": "g1",
            "kueue.x-k8s.io/pod-group-total-count": "2",
            "kueue.x-k8s.io/prebuilt-workload-name": "other",
        }
    )
    assert any("requires them equal" in v for v in violations(pod_))


def test_managed_label_only_true() -> None:
    assert any(
        "only allows 'true'" in v for v in violations(bare_pod(labels={"kueue.x-k8s.io/managed": "false"}))
    )
    assert violations(bare_pod(labels={"kueue.x-k8s.io/managed": "true"})) == []


@pytest.mark.parametrize(
    "annotations",
    [
        {
            "kueue.x-k8s.io/podset-required-topology": "rack",
            "kueue.x-k8s.io/podset-preferred-topology": "block",
        },
        {"kueue.x-k8s.io/podset-required-topology": "bad key/with/slashes"},
        {"kueue.x-k8s.io/podset-unconstrained-topology": "yes"},
        {"kueue.x-k8s.io/podset-slice-size": "2"},
        {"kueue.x-k8s.io/podset-slice-required-topology": "rack"},
        {"kueue.x-k8s.io/podset-slice-required-topology": "rack", "kueue.x-k8s.io/podset-slice-size": "0"},
        {"kueue.x-k8s.io/podset-required-topology": "rack", "kueue.x-k8s.io/podset-group-name": "42"},
        {"kueue.x-k8s.io/podset-group-name": "g"},
    ],
)
def test_tas_annotations_broken(annotations: dict[str, str]) -> None:
    found = violations(job(template_annotations=annotations))
    assert found and all("spec.template.metadata.annotations" in v for v in found)


def test_tas_annotations_clean() -> None:
    fine = {
        "kueue.x-k8s.io/podset-required-topology": "cloud.google.com/gce-topology-block",
        "kueue.x-k8s.io/podset-slice-required-topology": "kubernetes.io/hostname",
        "kueue.x-k8s.io/podset-slice-size": "2",
    }
    assert violations(job(template_annotations=fine)) == []
    grouped = {
        "kueue.x-k8s.io/podset-preferred-topology": "rack",
        "kueue.x-k8s.io/podset-group-name": "leader",
    }
    assert violations(job(template_annotations=grouped)) == []


def test_tas_on_ray_worker_groups() -> None:
    bad = pod(annotations={"kueue.x-k8s.io/podset-slice-size": "x"})
    cluster = ray_cluster("rc", namespace="team", labels=Q, groups=[workers("gpu", bad, 2)])
    found = violations(cluster)
    assert any("spec.workerGroupSpecs[0].template.metadata.annotations" in v for v in found)


def test_disabled_integration_has_no_webhook() -> None:
    jobs_only = helm_release(
        "kueue",
        "kueue",
        {"managerConfig": {"controllerManagerConfigYaml": "integrations:\n  frameworks: [batch/job]\n"}},
    )
    serve = deployment({"kueue.x-k8s.io/queue-name": "Bad_Name"})
    assert violations(jobs_only, serve) == []


def test_kube_system_is_outside_the_webhooks() -> None:
    sys_job = k8s(
        "batch/v1",
        "Job",
        "j",
        namespace="kube-system",
        labels={"kueue.x-k8s.io/queue-name": "Bad_Name"},
        spec={"template": pod()},
    )
    assert violations(sys_job) == []


def test_without_kueue_in_view_it_is_advisory() -> None:
    outcome = run(RULE, [job({"kueue.x-k8s.io/max-exec-time-seconds": "0"})])
    assert outcome.violations == []
    assert outcome.cannot_check is not None and "not in this stack" in outcome.cannot_check
    closed = run(RULE, [job({"kueue.x-k8s.io/max-exec-time-seconds": "0"})], {"closedWorld": True})
    assert len(closed.violations) == 1


def test_unknown_labels_are_cannot_check() -> None:
    outcome = run(RULE, [QUEUE, job({"kueue.x-k8s.io/max-exec-time-seconds": UNKNOWN})])
    assert outcome.violations == []
    assert outcome.cannot_check is not None and "max-exec-time-seconds" in outcome.cannot_check


def test_malformed_job_is_not_a_crash() -> None:
    weird = k8s(
        "batch/v1",
        "Job",
        "w",
        namespace="team",
        labels=Q,
        annotations={"kueue.x-k8s.io/job-min-parallelism": "2"},
        spec={"template": "oops", "parallelism": "many"},
    )
    run(RULE, [QUEUE, weird])  # any exception fails the test


def test_leaderworkerset_replicas_bounds() -> None:
    """leaderworkerset_webhook.go validateReplicasField: 0 <= replicas <= 1,000,000."""

    def lws(replicas: int) -> Registration:
        template = {"leaderWorkerTemplate": {"size": 2, "workerTemplate": pod()}, "replicas": replicas}
        return queued("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", template, None, None)

    assert any("1,000,000" in v for v in violations(lws(1_000_001)))
    assert any("spec.replicas -1" in v for v in violations(lws(-1)))
    assert violations(lws(3)) == []


def test_managed_jobs_namespace_selector_scopes_the_webhooks() -> None:
    """charts/kueue/templates/webhook/manifests.yaml: namespaceSelector = managedJobsNamespaceSelector."""
    config = "managedJobsNamespaceSelector:\n  matchLabels:\n    kueue: enabled\n"
    release = helm_release("kueue", "kueue", {"managerConfig": {"controllerManagerConfigYaml": config}})
    bad = job({"kueue.x-k8s.io/max-exec-time-seconds": "0"})
    selected = k8s("v1", "Namespace", "team", labels={"kueue": "enabled"})
    other = k8s("v1", "Namespace", "team", labels={"kueue": "off"})
    assert len(violations(release, selected, bad)) == 1
    assert violations(release, other, bad) == []
    undeclared = run(RULE, [QUEUE, release, bad])
    assert undeclared.violations == [] and "cover namespace team" in (undeclared.cannot_check or "")


def test_template_placeholder_label_is_cannot_check() -> None:
    outcome = run(RULE, [QUEUE, job({"kueue.x-k8s.io/queue-name": "${QUEUE}"})])
    assert outcome.violations == []
    assert outcome.cannot_check is not None and "template placeholder" in outcome.cannot_check
