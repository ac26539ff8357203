"""Small factories so every rule gets the same plumbing: typed views in, Reporter out.

A rule author writes ``check(view_or_model, reporter, config)``; the factory builds the model from
the SDK args (proxy → plain values, unknowns as markers), runs the check, and calls
``Reporter.finish()`` so unknown pieces surface as one advisory "cannot check yet".

Cost (issue 6: linear in the stack, whatever its size).  The analyzer servicer hands every policy
its own freshly deserialised copy of the same request: one ``AnalyzeStack`` calls each of the ~30
stack policies with all resources, one ``Analyze`` calls each resource policy with the same
resource.  Converting the props and indexing the stack once per *policy* made the model the
largest part of the pack's time, so the model (or the view) is built once per *call* and shared
by that call's policies (:class:`_CallCache`).  A resource policy also names the view classes it
judges, so resources of other types are never converted at all.

Robustness (issue 12): both factories run the rule, model building included, under
:func:`.rule_guard.guarded`, so a rule that raises becomes one advisory finding naming the rule
and resource, and a new rule gets that for free.
"""

from __future__ import annotations

import atexit
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pulumi.runtime.proto import analyzer_pb2
from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from ...facts.model import StackModel, view, view_class
from ...facts.model.base import build_resource
from ...primitives.type_predicate import judges_only
from .report import Reporter
from .rule_guard import guarded

ResourceCheck = Callable[[Any, Reporter, Mapping[str, Any]], None]
StackCheck = Callable[[StackModel, Reporter, Mapping[str, Any]], None]


def analyzer_call(report_violation: ReportViolation) -> object | None:
    """The ``AnalyzeResponse`` of the analyzer call that ``report_violation`` reports into.

    The SDK servicer (``_PolicyAnalyzerServicer.Analyze``/``AnalyzeStack``) creates one response
    per gRPC call and, per policy, a ``report_violation`` closure over it; so two policies whose
    closures hold the same response object run in the same call, on the same request.  None when
    the callback is anything else (direct calls in tests, another host): then nothing is shared.
    """
    for cell in getattr(report_violation, "__closure__", None) or ():
        try:
            contents = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if isinstance(contents, analyzer_pb2.AnalyzeResponse):
            return contents
    return None


class _CallCache:
    """What the latest analyzer call has built: one entry, replaced by the next call's.

    The entry is reused only for the same response object *and* the same resources: the same
    resource objects in the same order (pulumi-policy's servicer, as ``runtime/sdk_speedups.py``
    patches it, hands every stack policy of a call the same ``PolicyResource`` objects), or else
    the same identities (URN, type, name, in order), computed only then -- the stock servicer
    builds new objects per policy.  A new call always has a new response, and the identities
    guard against anything else.  Reading the identities of 12,000 resources for each of the 49
    stack policies was ~0.5 s of a 1,000-team ``AnalyzeStack``.  The entry holds the response
    and the resources, so no ``id`` can be reused while cached.  The SDK serves calls from a
    thread pool; an entry is one tuple, replaced whole, so a thread never sees another call's
    model for its own (concurrent calls merely rebuild).
    """

    def __init__(self) -> None:
        self._entry: tuple[object, tuple[object, ...], Sequence[tuple[str, str, str]], Any] | None = None
        self.builds = 0  # models/views built (tests check that one call builds one)
        self.identity_reads = 0  # identities computed (tests check the same objects need none)

    def get(
        self,
        call: object | None,
        members: Sequence[object],
        identity: Callable[[], Sequence[tuple[str, str, str]]],
        build: Callable[[], Any],
    ) -> Any:
        entry = self._entry
        if call is not None and entry is not None and entry[0] is call:
            cached = entry[1]
            if len(cached) == len(members) and all(map(operator.is_, cached, members)):
                return entry[3]
            if entry[2] == self._identity(identity):
                return entry[3]
        value = build()
        self.builds += 1
        if call is not None:
            self._entry = (call, tuple(members), self._identity(identity), value)
        return value

    def _identity(
        self, identity: Callable[[], Sequence[tuple[str, str, str]]]
    ) -> Sequence[tuple[str, str, str]]:
        self.identity_reads += 1
        return identity()

    def clear(self) -> None:
        """Drop the entry.  Run at exit: a protobuf (upb) message still referenced from a module
        when the interpreter tears down can crash the final garbage collection."""
        self._entry = None


STACK_CACHE = _CallCache()
RESOURCE_CACHE = _CallCache()
atexit.register(STACK_CACHE.clear)
atexit.register(RESOURCE_CACHE.clear)


def stack_model(args: StackValidationArgs, report_violation: ReportViolation) -> StackModel:
    """The model of ``args``, built once per ``AnalyzeStack`` call and shared by its policies."""
    resources = args.resources
    model: StackModel = STACK_CACHE.get(
        analyzer_call(report_violation),
        resources,
        lambda: [(r.urn, r.resource_type, r.name) for r in resources],
        lambda: StackModel.from_args(args),
    )
    return model


def resource_view(args: ResourceValidationArgs, report_violation: ReportViolation) -> Any:
    """The typed view of ``args``' resource, built once per ``Analyze`` call."""
    return RESOURCE_CACHE.get(
        analyzer_call(report_violation),
        (args.props,),
        lambda: [(args.urn, args.resource_type, args.name)],
        lambda: view(build_resource(args.resource_type, args.props, args.urn, args.name)),
    )


def _judge(
    name: str,
    analysed: str,
    subject: Callable[[], Any],
    check: Callable[[Any, Reporter, Mapping[str, Any]], None],
    *,
    args: ResourceValidationArgs | StackValidationArgs,
    report_violation: ReportViolation,
    stack: bool,
) -> None:
    """Build the subject, run ``check`` and finish its reporter, all under the rule guard."""

    def run() -> None:
        reporter = Reporter(report_violation, stack=stack)
        check(subject(), reporter, args.get_config() or {})
        reporter.finish()

    guarded(name, analysed, run)


def resource_policy(
    name: str,
    description: str,
    applies_to: type | tuple[type, ...],
    check: ResourceCheck,
    *,
    enforcement_level: EnforcementLevel = EnforcementLevel.MANDATORY,
    config_schema: PolicyConfigSchema | None = None,
) -> ResourceValidationPolicy:
    """A per-resource rule on the views of class(es) ``applies_to`` (see ``model.view``):
    ``check(view, reporter, config)`` judges.  Other resources are skipped by their type token
    alone, before any property is read."""

    def judges(resource_type: str) -> bool:
        return issubclass(view_class(resource_type), applies_to)

    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        if not judges(args.resource_type):
            return

        subject = lambda: resource_view(args, report_violation)  # noqa: E731 - built under the guard
        _judge(
            name,
            f"{args.resource_type} '{args.name}'",
            subject,
            check,
            args=args,
            report_violation=report_violation,
            stack=False,
        )

    policy = ResourceValidationPolicy(
        name=name,
        description=description,
        validate=validate,
        enforcement_level=enforcement_level,
        config_schema=config_schema,
    )
    # The patched servicer skips the call for the types `validate` returns on at once.
    return judges_only(policy, judges)


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
        model = lambda: stack_model(args, report_violation)  # noqa: E731 - built under the guard
        _judge(
            name,
            f"the stack ({len(args.resources)} resources)",
            model,
            check,
            args=args,
            report_violation=report_violation,
            stack=True,
        )

    return StackValidationPolicy(
        name=name,
        description=description,
        validate=validate,
        enforcement_level=enforcement_level,
        config_schema=config_schema,
    )
