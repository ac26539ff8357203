"""kueue-workload-webhook, written from Kueue v0.19.2 ``pkg/webhooks/workload_webhook.go``
(``ValidateWorkload``, ``validatePodSet``, ``validateResourceList``, ``validateTASSliceSize``)."""

from __future__ import annotations

from typing import Any

import pytest
from gpu_batch_policy.rules.webhooks.kueue_workload import POLICIES

from tests.policies.workload_stack import KUEUE, UNKNOWN, Registration, k8s, pod, run

RULE = POLICIES[0]


def pod_set(name: str = "main", count: Any = 2, **extra: Any) -> dict[str, Any]:
    return {"name": name, "count": count, "template": pod(), **extra}


def workload(*pod_sets: dict[str, Any], annotations: dict[str, Any] | None = None) -> Registration:
    spec = {"queueName": "user-queue", "podSets": list(pod_sets) or [pod_set()]}
    return k8s(KUEUE, "Workload", "wl", namespace="team", annotations=annotations, spec=spec)


def test_clean_workload_passes() -> None:
    tas = {"podSetSliceRequiredTopology": "kubernetes.io/hostname", "podSetSliceSize": 2}
    assert (
        run(RULE, [workload(pod_set(minCount=1, topologyRequest=tas), pod_set("driver", 1))]).violations == []
    )


def test_at_most_one_min_count_and_not_elastic() -> None:
    two = workload(pod_set("a", minCount=1), pod_set("b", minCount=1))
    assert run(RULE, [two]).mentions("2 pod sets use minCount")
    elastic = workload(pod_set(minCount=1), annotations={"kueue.x-k8s.io/elastic-job": "true"})
    assert run(RULE, [elastic]).mentions("elastic workload")


def with_resources(resources: dict[str, Any]) -> dict[str, Any]:
    ps = pod_set()
    ps["template"]["spec"]["containers"][0]["resources"]["requests"].update(resources)
    return ps


@pytest.mark.parametrize(
    ("ps", "words"),
    [
        (with_resources({"pods": "1"}), "names 'pods'"),
        (with_resources({"cpu": "-1"}), "is negative"),
        (pod_set(topologyRequest={"podSetSliceRequiredTopology": "rack"}), "without podSetSliceSize"),
        (
            pod_set(topologyRequest={"podSetSliceRequiredTopology": "rack", "podSetSliceSize": 0}),
            "greater than 0",
        ),
        (pod_set(topologyRequest={"podSetSliceSize": 2}), "without podSetSliceRequiredTopology"),
        (
            pod_set(
                topologyRequest={"podsetSliceRequiredTopologyConstraints": [{"topology": "rack", "size": 0}]}
            ),
            "size is 0",
        ),
    ],
)
def test_pod_set_refusals(ps: dict[str, Any], words: str) -> None:
    assert run(RULE, [workload(ps)]).mentions(words, "Workload webhook refuses it")


def test_template_metadata_must_be_valid() -> None:
    ps = pod_set()
    ps["template"]["metadata"] = {"labels": {"team": "a b"}, "annotations": {"bad key": "x"}}
    outcome = run(RULE, [workload(ps)])
    assert outcome.mentions("labels has 'team: a b'") and outcome.mentions("annotations has key 'bad key'")


def test_unknown_pod_sets_are_cannot_check() -> None:
    outcome = run(RULE, [workload(pod_set(count=UNKNOWN))])
    assert outcome.violations == [] and outcome.cannot_check is not None
