"""kueue-resourceflavor-webhook and kueue-queue-spec-webhook, from Kueue v0.19.2's webhooks.

Sources (kubernetes-sigs/kueue v0.19.2): ``pkg/webhooks/resourceflavor_webhook.go``
``ValidateResourceFlavor`` / ``validateNodeTaints``; ``pkg/webhooks/workload_webhook.go``
``validateTolerations``; ``pkg/webhooks/common.go`` ``validateResourceName`` and
``validateFairSharing`` (run by ``clusterqueue_webhook.go`` ``validateClusterQueueSpec`` and
``cohort_webhook.go`` ``validateCohort``).
"""

from __future__ import annotations

from typing import Any

import pytest
from gpu_batch_policy.rules.webhooks.kueue_objects import POLICIES

from tests.policies.workload_stack import KUEUE, UNKNOWN, Registration, cluster_queue, k8s, run

RULES = {p.name: p for p in POLICIES}
FLAVOR, QUEUE_SPEC = RULES["kueue-resourceflavor-webhook"], RULES["kueue-queue-spec-webhook"]
TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def flavor(**spec: Any) -> Registration:
    return k8s(KUEUE, "ResourceFlavor", "gpu", spec=spec)


def test_clean_flavor_passes() -> None:
    clean = flavor(
        nodeLabels={"cloud.google.com/gke-accelerator": "nvidia-l4"},
        nodeTaints=[TAINT, {**TAINT, "effect": "NoExecute"}],
        tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}, {"operator": "Exists"}],
    )
    assert run(FLAVOR, [clean]).violations == []


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ({"nodeLabels": {"bad key": "x"}}, "has key 'bad key'"),
        ({"nodeLabels": {"pool": "a/b"}}, "whose value"),
        ({"nodeTaints": [{**TAINT, "key": "-gpu"}]}, "nodeTaints[0].key '-gpu'"),
        ({"nodeTaints": [{**TAINT, "value": "x" * 64}]}, "no more than 63"),
        ({"nodeTaints": [TAINT, {**TAINT, "value": "other"}]}, "unique by key and effect"),
        ({"tolerations": [{"key": "a b", "operator": "Exists"}]}, "tolerations[0].key 'a b'"),
    ],
)
def test_flavor_refusals(spec: dict[str, Any], words: str) -> None:
    outcome = run(FLAVOR, [flavor(**spec)])
    assert outcome.mentions(words, "ResourceFlavor webhook refuses it"), outcome.violations


def test_flavor_unknowns_are_cannot_check() -> None:
    outcome = run(FLAVOR, [flavor(nodeTaints=UNKNOWN)])
    assert outcome.violations == [] and outcome.cannot_check is not None


def test_covered_resource_must_be_a_label_key() -> None:
    bad = cluster_queue("cq", {"default": {"cpu": 1, "GPU count": 1}}, covered=("cpu", "GPU count"))
    assert run(QUEUE_SPEC, [bad]).mentions("coveredResources[1] 'GPU count'")
    assert run(QUEUE_SPEC, [cluster_queue("cq", {"default": {"cpu": 1}})]).violations == []


@pytest.mark.parametrize(
    ("weight", "refused"),
    [("-1", True), ("1n", True), ("0.5n", True), ("0", False), ("2n", False), (1, False)],
)
def test_fair_sharing_weight(weight: Any, refused: bool) -> None:
    cq = cluster_queue("cq", {"default": {"cpu": 1}})
    cq[1]["spec"]["fairSharing"] = {"weight": weight}
    cohort = k8s(KUEUE, "Cohort", "root", spec={"fairSharing": {"weight": weight}})
    outcome = run(QUEUE_SPEC, [cq, cohort])
    assert (len(outcome.violations) == 2) is refused, outcome.violations


def test_template_placeholders_are_cannot_check() -> None:
    outcome = run(FLAVOR, [flavor(nodeLabels={"cloud.google.com/gke-nodepool": "${DWS_NODEPOOL}"})])
    assert outcome.violations == []
    assert outcome.cannot_check is not None and "unsubstituted template placeholder" in outcome.cannot_check


def _strict_fifo_queue() -> Registration:
    base = cluster_queue("cq", {"default": {"cpu": 1}})
    type_, props, urn, name = base
    props["spec"].update(
        queueingStrategy="StrictFIFO",
        concurrentAdmissionPolicy={"migration": {"mode": "TryPreferredFlavors"}},
    )
    return type_, props, urn, name


def test_strict_fifo_with_a_concurrent_admission_policy_when_the_gate_is_on() -> None:
    """Kueue v0.19.2 ``clusterqueue_webhook.go`` ``validateConcurrentAdmissionPolicy`` (gate
    ConcurrentAdmission: alpha, off by default)."""
    rule = RULES["kueue-queue-spec-webhook"]
    assert run(rule, [_strict_fifo_queue()]).violations == []  # the gate is off: not validated
    on = {"kueueConfiguration": {"featureGates": {"ConcurrentAdmission": True}}}
    assert run(rule, [_strict_fifo_queue()], on).mentions("StrictFIFO", "concurrentAdmissionPolicy")
    best_effort = cluster_queue("cq", {"default": {"cpu": 1}})
    best_effort[1]["spec"].update(queueingStrategy="BestEffortFIFO", concurrentAdmissionPolicy={})
    assert run(rule, [best_effort], on).violations == []
