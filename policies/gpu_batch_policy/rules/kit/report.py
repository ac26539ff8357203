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

from ...facts.model.base import Subject

# Findings one rule lists for one resource in one call; the rest are counted in one more finding
# at the rule's level.  A ClusterQueue with 3,000 copies of one resource group produced 18,000
# findings (6.7 MB) for one Analyze call, which took longer to build, send and read than to judge.
MAX_FINDINGS_PER_SUBJECT = 25


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
        self._per_subject: dict[str, int] = {}
        self._unlisted: dict[str, Subject] = {}
        self.unknown_items: list[str] = []
        self.outside_items: list[str] = []
        self._unknown_seen: set[str] = set()  # a list scan per item made 3,000 unknowns quadratic
        self._outside_seen: set[str] = set()
        self.count = 0

    def violation(self, subject: Subject, problem: str, fix: str) -> None:
        self.count += 1
        shown = self._per_subject.get(subject.urn, 0)
        self._per_subject[subject.urn] = shown + 1
        if shown >= MAX_FINDINGS_PER_SUBJECT:
            self._unlisted[subject.urn] = subject
            return
        self._send(subject, f"{subject.describe()}: {problem.rstrip('.')}. Fix: {fix}")

    def _send(self, subject: Subject, message: str) -> None:
        if self._stack and subject.urn:
            self._report(message, subject.urn)
        else:
            self._report(message, None)

    def cannot_check(self, subject: Subject, what: str) -> None:
        """Record that ``what`` about ``subject`` is unknown until apply (deduplicated)."""
        item = f"{subject.describe()}: {what}"
        if item not in self._unknown_seen:
            self._unknown_seen.add(item)
            self.unknown_items.append(item)

    def not_in_stack(self, subject: Subject, what: str) -> None:
        """Record that ``subject`` refers to ``what``, which this stack does not hold (open world:
        it may live in another stack); advisory, deduplicated."""
        item = f"{subject.describe()}: {what}"
        if item not in self._outside_seen:
            self._outside_seen.add(item)
            self.outside_items.append(item)

    def finish(self) -> None:
        for urn, subject in self._unlisted.items():
            more = self._per_subject[urn] - MAX_FINDINGS_PER_SUBJECT
            self._send(
                subject,
                f"{subject.describe()}: {more} more findings of this rule on this resource are not listed "
                f"(the first {MAX_FINDINGS_PER_SUBJECT} are). Fix: fix the listed ones; the rest are alike",
            )
        if self.unknown_items or self.outside_items:
            raise CannotCheckYetError(self.unknown_items, self.outside_items)


def config_value(config: Mapping[str, Any] | None, key: str, default: Any) -> Any:
    """A policy config property, falling back to the schema default when not configured
    (direct calls and engines that skip Configure send no config)."""
    if not config:
        return default
    value = config.get(key, default)
    return default if value is None else value
