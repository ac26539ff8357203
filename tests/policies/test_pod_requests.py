"""A pod's effective request, as Kueue counts it against quota (issue 42 item 3: as stored, not as written).

Cases from kubernetes/component-helpers v0.37.2 ``resource/helpers_test.go``
``TestPodResourceRequests`` ("restartable init container", "multiple restartable init
containers", "multiple restartable and regular init containers", "restartable-init, init and
regular"), ``TestPodRequestsAndLimits`` (overhead) and ``TestPodLevelResourceRequests``; Kueue
v0.19.2 ``pkg/workload/workload.go`` ``totalRequestsFromPodSets`` calls ``PodRequests`` after
``pkg/workload/resources.go`` ``UseLimitsAsMissingRequestsInPod``.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from gpu_batch_policy.facts.model.workloads import PodTemplate
from gpu_batch_policy.rules.kueue import workload_gangs as rules_workload_gangs

from tests.policies.test_workload_gangs import KUEUE, queue
from tests.policies.workload_stack import k8s, pod, run

FITS = {p.name: p for p in rules_workload_gangs.POLICIES}["workload-gang-fits-queue"]


def c(name: str, cpu: str, sidecar: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "resources": {"requests": {"cpu": cpu}}}
    if sidecar:
        out["restartPolicy"] = "Always"
    return out


def cpu(spec: dict[str, Any]) -> Decimal:
    amount = PodTemplate({"spec": spec}, "spec.template").request("cpu")
    assert isinstance(amount, Decimal)
    return amount


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"initContainers": [c("r1", "1", True)], "containers": [c("c1", "1")]}, "2"),
        (
            {
                "initContainers": [c("i1", "5"), c("r1", "1", True), c("r2", "2", True), c("r3", "3", True)],
                "containers": [c("c1", "1")],
            },
            "7",
        ),
        (
            {
                "initContainers": [
                    c("i1", "5"),
                    c("r1", "1", True),
                    c("r2", "2", True),
                    c("i2", "5"),
                    c("r3", "3", True),
                ],
                "containers": [c("c1", "1")],
            },
            "8",
        ),
        ({"initContainers": [c("r1", "10", True), c("i1", "200")], "containers": [c("c1", "100")]}, "210"),
        ({"containers": [c("c1", "1")], "overhead": {"cpu": "5"}}, "6"),
        ({"containers": [], "overhead": {"cpu": "5"}}, "5"),
        ({"containers": [c("c1", "1"), c("c2", "2")], "resources": {"requests": {"cpu": "10"}}}, "10"),
        (
            {"containers": [{"name": "c", "resources": {"limits": {"cpu": "3"}}}]},
            "3",
        ),  # limits as missing requests
    ],
)
def test_pod_requests_as_upstream(spec: dict[str, Any], expected: str) -> None:
    assert cpu(spec) == Decimal(expected)


def test_pod_level_requests_replace_only_cpu_memory_and_hugepages() -> None:
    template = PodTemplate(
        {
            "spec": {
                "resources": {"requests": {"cpu": "10", "nvidia.com/gpu": "8"}},
                "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "2"}}}],
            }
        },
        "spec.template",
    )
    assert template.request("cpu") == Decimal(10)
    assert template.request("nvidia.com/gpu") == Decimal(2)  # IsSupportedPodLevelResource: no


def forty_pods(template: dict[str, Any]) -> Any:
    """A queued Job of 40 pods of ``template``."""
    return k8s(
        "batch/v1",
        "Job",
        "train",
        namespace="ml",
        labels=KUEUE,
        spec={"parallelism": 40, "template": template},
    )


def test_runtime_class_overhead_counts_against_quota() -> None:
    """Kueue ``handlePodOverhead``: 40 pods of 1 CPU fit a 100-CPU queue, but with a RuntimeClass
    whose ``overhead.podFixed`` is 2 CPU each needs 120 (the API server's RuntimeClass admission
    ``setOverhead`` gives every pod the same overhead)."""
    template = pod(gpu=None)
    template["spec"]["runtimeClassName"] = "gvisor"
    job = forty_pods(template)
    sandbox = k8s(
        "node.k8s.io/v1", "RuntimeClass", "gvisor", handler="gvisor", overhead={"podFixed": {"cpu": "2"}}
    )
    assert run(FITS, [*queue(4), job]).violations == []
    out = run(FITS, [*queue(4), job, sandbox])
    assert out.mentions("Job 'ml/train'", "cpu", "never admits")


def test_limit_range_defaults_count_against_quota() -> None:
    """Kueue ``handlePodLimitRange``: a namespace LimitRange's ``defaultRequest`` (or ``default``
    limit, then taken as the request) fills a container that requests none; the first LimitRange
    (by name) wins a resource (``addToSummary``), a container's own value wins over both."""
    template = pod(cpu=None, gpu=None)
    job = forty_pods(template)

    def limits(name: str, item: dict[str, Any], namespace: str = "ml") -> Any:
        return k8s(
            "v1", "LimitRange", name, namespace=namespace, spec={"limits": [{"type": "Container", **item}]}
        )

    assert run(FITS, [*queue(4), job]).violations == []
    assert run(FITS, [*queue(4), job, limits("a", {"defaultRequest": {"cpu": "3"}})]).mentions(
        "cpu", "never admits"
    )
    assert run(FITS, [*queue(4), job, limits("a", {"default": {"cpu": "3"}})]).mentions("cpu", "never admits")
    assert (
        run(FITS, [*queue(4), job, limits("a", {"defaultRequest": {"cpu": "3"}}, "other")]).violations == []
    )
    first_wins = [
        limits("a", {"defaultRequest": {"cpu": "1"}}),
        limits("b", {"defaultRequest": {"cpu": "3"}}),
    ]
    assert run(FITS, [*queue(4), job, *first_wins]).violations == []
    own = pod(cpu="1", gpu=None)
    job_own = forty_pods(own)
    assert run(FITS, [*queue(4), job_own, limits("a", {"defaultRequest": {"cpu": "3"}})]).violations == []
