"""Every admission-webhook rule survives malformed input: each field of a valid object replaced by
values of the wrong shape never raises (the conftest fixture fails any test whose rules hit an
internal error); a wrong-shaped value is a finding, "cannot check", or the schema's to report."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from gpu_batch_policy.rules.webhooks import POLICIES

from tests.policies.pack_fuzz import _set as set_at  # the fuzzer's own copy-and-set
from tests.policies.workload_stack import (
    KUEUE,
    UNKNOWN,
    Registration,
    cluster_queue,
    k8s,
    kai_queue,
    local_queue,
    pod,
    ray_cluster,
    ray_job,
    run,
    workers,
)

ODD_VALUES: list[Any] = [None, [], {}, 1.5, -1, "x", "${X}", UNKNOWN, [None]]


def valid_objects() -> list[Registration]:
    job_template = pod(annotations={"kueue.x-k8s.io/podset-required-topology": "rack"})
    return [
        local_queue("user-queue", "team", "cq"),
        kai_queue("team-a"),
        cluster_queue("cq", {"default": {"cpu": 1}}),
        k8s(
            KUEUE,
            "ResourceFlavor",
            "rf",
            spec={"nodeLabels": {"a": "b"}, "nodeTaints": [{"key": "k", "effect": "NoSchedule"}]},
        ),
        k8s(
            "batch/v1",
            "Job",
            "j",
            namespace="team",
            labels={"kueue.x-k8s.io/queue-name": "q", "kueue.x-k8s.io/max-exec-time-seconds": "10"},
            annotations={"kueue.x-k8s.io/job-min-parallelism": "1"},
            spec={"parallelism": 2, "template": job_template},
        ),
        k8s(
            "v1",
            "Pod",
            "p",
            namespace="team",
            labels={"kueue.x-k8s.io/pod-group-name": "g"},
            spec=pod()["spec"],
        ),
        ray_cluster("rc", groups=[workers("w", pod(), 1, idleTimeoutSeconds=5)]),
        ray_job("rj", groups=[workers("w", pod(), 1)]),
        k8s(
            "ray.io/v1", "RayService", "rs", spec={"rayClusterConfig": {"headGroupSpec": {"template": pod()}}}
        ),
        k8s(
            "scheduling.run.ai/v2alpha2",
            "PodGroup",
            "pg",
            namespace="team",
            spec={"subGroups": [{"name": "a"}]},
        ),
        k8s(
            KUEUE,
            "Workload",
            "wl",
            namespace="team",
            spec={"podSets": [{"name": "m", "count": 1, "template": pod()}]},
        ),
        k8s("scheduling.k8s.io/v1", "PriorityClass", "pc", value=10, globalDefault=True),
    ]


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*prefix, key)
            yield from paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield (*prefix, index)
            yield from paths(item, (*prefix, index))


@pytest.mark.parametrize("index", range(len(valid_objects())))
def test_no_rule_crashes_on_any_wrong_shaped_field(index: int) -> None:
    objects = valid_objects()
    type_, props, urn, name = objects[index]
    for path in paths(props):
        if path[0] in ("apiVersion", "kind"):
            continue
        for odd in ODD_VALUES:
            stack = [*objects[:2], (type_, set_at(props, path, odd), urn, name)]  # installs + the object
            for rule in POLICIES:
                run(rule, stack)
