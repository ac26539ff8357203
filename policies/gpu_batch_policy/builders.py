"""Small factories so every rule gets the same plumbing: typed views in, Reporter out.

A rule author writes ``check(view_or_model, reporter, config)``; the factory builds the model from
the SDK args (proxy → plain values, unknowns as markers), runs the check, and calls
``Reporter.finish()`` so unknown pieces surface as one advisory "cannot check yet".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from .model import StackModel, view
from .model_base import build_resource
from .report import Reporter

ResourceCheck = Callable[[Any, Reporter, Mapping[str, Any]], None]
StackCheck = Callable[[StackModel, Reporter, Mapping[str, Any]], None]


def resource_policy(
    name: str,
    description: str,
    applies_to: Callable[[Any], bool],
    check: ResourceCheck,
    *,
    enforcement_level: EnforcementLevel = EnforcementLevel.MANDATORY,
    config_schema: PolicyConfigSchema | None = None,
) -> ResourceValidationPolicy:
    """A per-resource rule: ``applies_to(view)`` selects, ``check(view, reporter, config)`` judges."""

    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        res = build_resource(args.resource_type, args.props, args.urn, args.name)
        subject = view(res)
        if not applies_to(subject):
            return
        reporter = Reporter(report_violation, stack=False)
        check(subject, reporter, args.get_config() or {})
        reporter.finish()

    return ResourceValidationPolicy(
        name=name,
        description=description,
        validate=validate,
        enforcement_level=enforcement_level,
        config_schema=config_schema,
    )


def stack_policy(
    name: str,
    description: str,
    check: StackCheck,
    *,
    enforcement_level: EnforcementLevel = EnforcementLevel.MANDATORY,
    config_schema: PolicyConfigSchema | None = None,
) -> StackValidationPolicy:
    """A whole-stack rule (references, totals): ``check(model, reporter, config)``."""

    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        model = StackModel.from_args(args)
        reporter = Reporter(report_violation, stack=True)
        check(model, reporter, args.get_config() or {})
        reporter.finish()

    return StackValidationPolicy(
        name=name,
        description=description,
        validate=validate,
        enforcement_level=enforcement_level,
        config_schema=config_schema,
    )
