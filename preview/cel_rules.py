"""The CRDs' CEL rules, run by the policy pack's ``gpu_batch_policy.facts.schema.cel`` (one code path).

Re-exported for the preview's callers and tests; see that module for the semantics.
"""

from __future__ import annotations

from gpu_batch_policy.facts.schema.cel import (
    CompiledRule,
    NodeRules,
    RuleResult,
    Verdict,
    compiled_rule,
    contains_marker,
    parse_field_path,
    with_defaults,
)

__all__ = [
    "CompiledRule",
    "NodeRules",
    "RuleResult",
    "Verdict",
    "compiled_rule",
    "contains_marker",
    "parse_field_path",
    "with_defaults",
]
