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
