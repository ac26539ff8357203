"""How rules report: one message shape, and "cannot check yet" that never fails a preview.

Every violation names the resource and ends with a concrete fix:
``<Kind> '<ns/name>' (<apiVersion>): <problem> Fix: <fix>``.

Unknown values: reporting them through ``report_violation`` would carry the policy's level (a
mandatory rule would fail a preview merely because a value is computed).  Instead a rule checks
everything it can, reports real violations, and records the unknown pieces; ``finish()`` then
raises :class:`CannotCheckYetError`, an ``UnknownValueError``.  The analyzer servicer turns that into
one **advisory** diagnostic "can't run policy … during preview: cannot check yet: …" while
keeping the violations already reported (pulumi_policy ``_PolicyAnalyzerServicer.Analyze`` /
``AnalyzeStack`` append to the response before catching).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import ReportViolation
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError

from .model_base import Subject


class CannotCheckYetError(UnknownValueError):
    """Some inputs of a rule are unknown until apply, or live outside this stack; the rest was
    checked.  ``outside`` items are references to objects another stack (or a chart the stack does
    not render) owns: the same advisory channel, worded "cannot check: not in this stack"."""

    def __init__(self, items: list[str], outside: list[str] | None = None) -> None:
        super().__init__(UNKNOWN_STRING_VALUE, [])
        self.items = items
        self.outside = list(outside or [])
        parts = []
        if items:
            parts.append("cannot check yet: " + "; ".join(items))
        if self.outside:
            parts.append("cannot check: not in this stack: " + "; ".join(self.outside))
        self.message = " | ".join(parts)

    def __str__(self) -> str:
        return self.message


class Reporter:
    """Wraps ``report_violation`` for one rule run.

    ``stack=True`` (StackValidationPolicy) attaches the subject's URN; resource policies pass no
    URN because the engine attaches the analysed resource's URN itself (pulumi.md §2.4 step 8).
    """

    def __init__(self, report_violation: ReportViolation, *, stack: bool) -> None:
        self._report = report_violation
        self._stack = stack
        self.unknown_items: list[str] = []
        self.outside_items: list[str] = []
        self.count = 0

    def violation(self, subject: Subject, problem: str, fix: str) -> None:
        self.count += 1
        message = f"{subject.describe()}: {problem.rstrip('.')}. Fix: {fix}"
        if self._stack and subject.urn:
            self._report(message, subject.urn)
        else:
            self._report(message, None)

    def cannot_check(self, subject: Subject, what: str) -> None:
        """Record that ``what`` about ``subject`` is unknown until apply (deduplicated)."""
        item = f"{subject.describe()}: {what}"
        if item not in self.unknown_items:
            self.unknown_items.append(item)

    def not_in_stack(self, subject: Subject, what: str) -> None:
        """Record that ``subject`` refers to ``what``, which this stack does not hold (open world:
        it may live in another stack); advisory, deduplicated."""
        item = f"{subject.describe()}: {what}"
        if item not in self.outside_items:
            self.outside_items.append(item)

    def finish(self) -> None:
        if self.unknown_items or self.outside_items:
            raise CannotCheckYetError(self.unknown_items, self.outside_items)


def config_value(config: Mapping[str, Any] | None, key: str, default: Any) -> Any:
    """A policy config property, falling back to the schema default when not configured
    (direct calls and engines that skip Configure send no config)."""
    if not config:
        return default
    value = config.get(key, default)
    return default if value is None else value
