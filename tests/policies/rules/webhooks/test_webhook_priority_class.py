"""priority-class-admission, from the API server's own rules (not from corpus files).

Sources: kubernetes/kubernetes ``pkg/apis/scheduling/validation/validation.go``
``ValidatePriorityClass`` (``system-`` prefix reserved, value <= HighestUserDefinablePriority
= 1e9), ``pkg/apis/scheduling/v1/helpers.go`` ``IsKnownSystemPriorityClass`` and
``plugin/pkg/admission/priority/admission.go`` ``validatePriorityClass`` (one globalDefault).
"""

from __future__ import annotations

from typing import Any

from gpu_batch_policy.rules.webhooks.priority_class import POLICIES

from tests.policies.workload_stack import UNKNOWN, Registration, k8s, run

RULE = POLICIES[0]


def priority_class(name: str, value: Any, **top: Any) -> Registration:
    return k8s("scheduling.k8s.io/v1", "PriorityClass", name, value=value, **top)


def test_user_value_above_one_billion_is_refused() -> None:
    outcome = run(RULE, [priority_class("urgent", 1_000_000_001)])
    assert outcome.mentions("PriorityClass 'urgent'", "value 1000000001", "1,000,000,000")


def test_user_value_at_the_limit_passes() -> None:
    assert run(RULE, [priority_class("urgent", 1_000_000_000), priority_class("low", -5)]).violations == []


def test_system_prefix_is_reserved() -> None:
    outcome = run(RULE, [priority_class("system-batch", 100)])
    assert outcome.mentions("'system-batch'", "reserves the 'system-' prefix")


def test_system_class_redeclared_with_another_value_is_refused() -> None:
    assert run(RULE, [priority_class("system-node-critical", 5)]).mentions("redefines system class")
    assert run(RULE, [priority_class("system-cluster-critical", 2_000_000_000)]).violations == []


def test_two_global_defaults_are_refused_one_is_fine() -> None:
    two = [
        priority_class("a", 10, globalDefault=True),
        priority_class("b", 20, globalDefault=True),
        priority_class("c", 30, globalDefault=False),
    ]
    outcome = run(RULE, two)
    assert len(outcome.violations) == 2
    assert outcome.mentions("one of 2 PriorityClasses with globalDefault: true ('a', 'b')")
    assert run(RULE, two[1:]).violations == []


def test_unknown_value_is_cannot_check_not_a_pass_or_failure() -> None:
    outcome = run(RULE, [priority_class("urgent", UNKNOWN), priority_class("b", 1, globalDefault=UNKNOWN)])
    assert outcome.violations == []
    assert outcome.cannot_check is not None and "value" in outcome.cannot_check


def test_malformed_value_is_not_a_crash() -> None:
    assert run(RULE, [priority_class("odd", {"x": 1}), priority_class("odd2", "high")]).violations == []


def test_an_unknown_preemption_policy_is_refused() -> None:
    """``ValidatePriorityClass`` -> ``ValidatePreemptionPolicy``: PreemptLowerPriority or Never."""
    outcome = run(RULE, [priority_class("batch", 100, preemptionPolicy="Sometimes")])
    assert outcome.mentions("preemptionPolicy 'Sometimes'", "PreemptLowerPriority and Never")
    for fine in ("Never", "PreemptLowerPriority"):
        assert run(RULE, [priority_class("batch", 100, preemptionPolicy=fine)]).violations == []


POD_RULE = POLICIES[1]


def _job(priority_class_name: str) -> Registration:
    template = {
        "spec": {"priorityClassName": priority_class_name, "containers": [{"name": "c", "image": "i"}]}
    }
    return k8s("batch/v1", "Job", "train", namespace="ml", spec={"template": template})


def test_pod_templates_name_a_priority_class_that_exists() -> None:
    """``plugin/pkg/admission/priority/admission.go`` ``admitPod``: an unknown class refuses the pod."""
    classes = [priority_class("high", 1000), priority_class("low", 10)]
    outcome = run(POD_RULE, [*classes, _job("hihg")])
    assert outcome.mentions("Job 'ml/train'", "priorityClassName 'hihg'", "did you mean 'high'")
    assert run(POD_RULE, [*classes, _job("high")]).violations == []
    assert run(POD_RULE, [*classes, _job("system-cluster-critical")]).violations == []
    # With no PriorityClass in the stack, the class may live elsewhere: not in this stack.
    elsewhere = run(POD_RULE, [_job("high")])
    assert elsewhere.violations == [] and elsewhere.cannot_check is not None


def test_an_appwrappers_pod_templates_are_checked_too() -> None:
    wrapped = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "spec": {"template": {"spec": {"priorityClassName": "nope"}}},
    }
    aw = k8s(
        "workload.codeflare.dev/v1beta2",
        "AppWrapper",
        "aw",
        namespace="ml",
        spec={"components": [{"template": wrapped}]},
    )
    assert run(POD_RULE, [priority_class("high", 1000), aw]).mentions("AppWrapper 'ml/aw'", "'nope'")
