"""Every rule runs under a guard: a bug in one rule is one advisory finding, never a gRPC error.

Why: an exception escaping ``policy.validate`` leaves the SDK servicer
(pulumi_policy ``_PolicyAnalyzerServicer.Analyze``/``AnalyzeStack``) as a gRPC ``UNKNOWN`` error,
and the engine then fails the whole preview with an internal error, on inputs any contributor can
write.  :func:`guarded` runs the rule inside the bounded decimal context of
:mod:`.quantity` and turns any other exception into :class:`InternalRuleError`, an
``UnknownValueError``: the servicer reports those as one **advisory** diagnostic and keeps the
violations the rule had already reported.  The message names the rule, the resource the rule was
looking at (the innermost :class:`~.model.base.Subject` in the traceback, else the analysed
resource) and the exception *type* only: an exception's text may quote a property, possibly a
secret.

Tests must never see one: :data:`INTERNAL_ERRORS` counts them in-process (``tests/conftest.py``
fails any test that leaves one behind), and the preview's summary counts them in its output.
"""

from __future__ import annotations

import decimal
import sys
from collections.abc import Callable
from types import TracebackType

from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError

from ...primitives.quantity import ARITHMETIC

INTERNAL_ERROR_PREFIX = "internal error in rule"
# (rule, resource, exception type) of every internal error in this process, oldest first.
INTERNAL_ERRORS: list[tuple[str, str, str]] = []
INTERNAL_ERRORS_KEPT = 1000  # the newest; a long-lived process does not keep every one


class InternalRuleError(UnknownValueError):
    """A rule raised something unexpected; reported as one advisory finding."""

    def __init__(self, rule: str, resource: str, error: BaseException) -> None:
        super().__init__(UNKNOWN_STRING_VALUE, [])
        self.message = (
            f"{INTERNAL_ERROR_PREFIX} {rule} on resource {resource}: the rule failed unexpectedly "
            "(a bug of the pack; its log names the failure)"
        )

    def __str__(self) -> str:
        return self.message


def _subject_in(trace: TracebackType | None) -> str | None:
    """``describe()`` of the innermost frame-local that is a reportable subject."""
    frames = []
    while trace is not None:
        frames.append(trace.tb_frame)
        trace = trace.tb_next
    for frame in reversed(frames):
        for value in frame.f_locals.values():
            describe, urn = getattr(value, "describe", None), getattr(value, "urn", None)
            if callable(describe) and isinstance(urn, str) and urn:
                try:
                    text = describe()
                except Exception:
                    continue
                if isinstance(text, str):
                    return text
    return None


def guarded(rule: str, analysed: str, run: Callable[[], None]) -> None:
    """Run ``run()``; unexpected exceptions become :class:`InternalRuleError` (see module)."""
    try:
        with decimal.localcontext(ARITHMETIC):
            run()
    except UnknownValueError:  # the rule's own "cannot check yet" (or an unguarded unknown)
        raise
    except Exception as exc:
        resource = _subject_in(exc.__traceback__) or analysed
        INTERNAL_ERRORS.append((rule, resource, type(exc).__name__))
        del INTERNAL_ERRORS[:-INTERNAL_ERRORS_KEPT]
        # For the pack's developers, on its stderr (the engine's log): the exception class only,
        # since an exception's text may quote a secret value.
        print(f"gpu-batch: {INTERNAL_ERROR_PREFIX} {rule}: {type(exc).__name__}", file=sys.stderr)
        raise InternalRuleError(rule, resource, exc) from None
