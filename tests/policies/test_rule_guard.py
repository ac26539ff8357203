"""A rule that raises becomes one advisory finding, in-process and over gRPC."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import pytest
from gpu_batch_policy.facts.model import StackModel
from gpu_batch_policy.facts.model.kueue import ClusterQueue
from gpu_batch_policy.rules.kit.builders import resource_policy, stack_policy
from gpu_batch_policy.rules.kit.report import Reporter
from gpu_batch_policy.rules.kit.rule_guard import INTERNAL_ERRORS, InternalRuleError

from tests.policies.pack_harness import Res, run
from tests.policies.pack_objects import cluster_queue, local_queue


def _broken_stack_check(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for cq in model.cluster_queues():
        reporter.violation(cq, "first finding survives", "nothing")
        _ = Decimal(1) / Decimal(0)  # a rule bug: division by zero under the bounded context


def _broken_resource_check(cq: ClusterQueue, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    raise RecursionError("deep")


def _run(policy: Any, resources: list[Res]) -> tuple[InternalRuleError, str]:
    """The guard's error and the exception class its in-process record keeps (taken out)."""
    before = len(INTERNAL_ERRORS)
    with pytest.raises(InternalRuleError) as caught:
        run(policy, resources)
    assert len(INTERNAL_ERRORS) == before + 1
    recorded = INTERNAL_ERRORS[-1][2]
    del INTERNAL_ERRORS[before:]
    return caught.value, recorded


def test_stack_rule_error_names_rule_resource_and_type_only() -> None:
    policy = stack_policy("broken-stack", "test", _broken_stack_check)
    error, recorded = _run(policy, [cluster_queue(), local_queue()])
    assert error.message.startswith("internal error in rule broken-stack on resource ClusterQueue '")
    assert error.message.endswith(
        "the rule failed unexpectedly (a bug of the pack; its log names the failure)"
    )
    assert "DivisionByZero" not in error.message and recorded == "DivisionByZero"


def test_resource_rule_error_falls_back_to_the_analysed_resource() -> None:
    policy = resource_policy("broken-resource", "test", ClusterQueue, _broken_resource_check)
    error, recorded = _run(policy, [cluster_queue()])
    assert error.message.startswith("internal error in rule broken-resource on resource ")
    assert "ClusterQueue" in error.message and "RecursionError" not in error.message
    assert recorded == "RecursionError"  # the developers' record keeps the class
    assert "deep" not in error.message  # the exception's text is never quoted


def test_findings_past_the_cap_are_counted_in_one_more_finding() -> None:
    from gpu_batch_policy.rules.kit.report import MAX_FINDINGS_PER_SUBJECT

    sent: list[str] = []

    def report(message: str, urn: str | None = None) -> None:
        sent.append(message)

    class Queue:
        urn = "urn:q"

        def describe(self) -> str:
            return "ClusterQueue 'q'"

    reporter = Reporter(report, stack=True)
    for i in range(MAX_FINDINGS_PER_SUBJECT + 7):
        reporter.violation(Queue(), f"problem {i}", "fix it")
    reporter.finish()
    assert len(sent) == MAX_FINDINGS_PER_SUBJECT + 1 and reporter.count == MAX_FINDINGS_PER_SUBJECT + 7
    assert sent[-1].startswith(
        "ClusterQueue 'q': 7 more findings of this rule on this resource are not listed"
    )
