"""Stack-config errors that read as one line each and never as a traceback.

A platform engineer who mistypes a key should see *which* key, *what* they wrote and *what*
would have been accepted, in the output of ``pulumi preview`` or ``make preview``; a Python
traceback buries that.  :class:`ConfigError` derives from ``pulumi.RunError``, which the
Pulumi language host prints without a stack trace.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
from pydantic import ValidationError

PROJECT_NAMESPACE = "gpu-batch"

_MISSING = object()

# What a regular expression in the config models means, in words users recognise.
PATTERN_MEANINGS: dict[str, str] = {}


def pattern(regex: str, meaning: str) -> str:
    """Register ``meaning`` as the human reading of ``regex`` and return the regex."""
    PATTERN_MEANINGS[regex] = meaning
    return regex


@dataclass(frozen=True)
class ConfigIssue:
    """One problem in the stack config, located by its key path."""

    path: str
    expected: str
    given: Any = _MISSING

    def line(self) -> str:
        if self.given is _MISSING:
            return f"{self.path}: missing, expected {self.expected}"
        return f"{self.path}: got {show(self.given)}, expected {self.expected}"


class ConfigError(pulumi.RunError):
    """The stack config is wrong; each issue is one line of the message."""

    def __init__(self, issues: Sequence[ConfigIssue]) -> None:
        self.issues = list(issues)
        super().__init__("\n".join(f"config error: {issue.line()}" for issue in self.issues))


def show(value: Any) -> str:
    """A short, unambiguous rendering of what the user wrote (strings quoted)."""
    text = json.dumps(value, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def key_path(root: str, loc: Iterable[str | int]) -> str:
    """``gpu-batch:gpuPools`` + (0, "maxNodes") -> ``gpu-batch:gpuPools[0].maxNodes``."""
    path = root
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def suggest(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean X?)`` when a close match exists, else ``""``."""
    match = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {match[0]}?)" if match else ""


def issues_from_validation(
    root: str, error: ValidationError, accepted_keys: Callable[[tuple[str | int, ...]], list[str]]
) -> list[ConfigIssue]:
    """Translate pydantic's errors into :class:`ConfigIssue` lines.

    ``accepted_keys`` gives, for the location of a mapping, the keys it accepts, so an unknown key can
    list them and suggest the closest one.  One issue per location: pydantic can report several
    errors for one bad value, and the first is the one that explains it.
    """
    issues: list[ConfigIssue] = []
    seen: set[tuple[str | int, ...]] = set()
    for err in error.errors(include_url=False):
        loc = tuple(part for part in err["loc"] if not _is_internal(part))
        if loc in seen:
            continue
        seen.add(loc)
        path = key_path(root, loc)
        kind = err["type"]
        ctx = err.get("ctx") or {}
        if kind == "missing":
            issues.append(ConfigIssue(path, _expected_for_missing(err)))
        elif kind == "extra_forbidden":
            name = str(loc[-1]) if loc else ""
            accepted = accepted_keys(loc[:-1])
            hint = suggest(name, accepted)
            issues.append(
                ConfigIssue(
                    path, f"a known key{hint}; this mapping accepts {', '.join(accepted)}", given=name
                )
            )
        else:
            issues.append(ConfigIssue(path, _expected(kind, ctx, str(err["msg"])), err.get("input")))
    return issues


def _is_internal(part: str | int) -> bool:
    # pydantic inserts the tag of a function validator or a union member into the location.
    return isinstance(part, str) and ("[" in part or part.startswith("function-"))


def _expected_for_missing(err: Any) -> str:
    return "a value (this key is required)"


def _expected(kind: str, ctx: dict[str, Any], msg: str) -> str:
    simple = {
        "int_type": "an integer",
        "int_parsing": "an integer",
        "int_from_float": "a whole number",
        "float_type": "a number",
        "float_parsing": "a number",
        "bool_type": "true or false",
        "bool_parsing": "true or false",
        "string_type": "a string",
        "list_type": "a list",
        "dict_type": "a mapping of keys to values",
        "model_type": "a mapping of keys to values",
        "model_attributes_type": "a mapping of keys to values",
        "string_too_short": "a non-empty string",
        "too_short": f"at least {ctx.get('min_length')} item(s)",
        "too_long": f"at most {ctx.get('max_length')} item(s)",
    }
    if kind in simple:
        return simple[kind]
    if kind == "greater_than_equal":
        return f"a number >= {ctx.get('ge')}"
    if kind == "greater_than":
        return f"a number > {ctx.get('gt')}"
    if kind == "less_than_equal":
        return f"a number <= {ctx.get('le')}"
    if kind == "literal_error":
        return f"one of {ctx.get('expected')}"
    if kind == "string_pattern_mismatch":
        pattern = str(ctx.get("pattern"))
        return PATTERN_MEANINGS.get(pattern, f"a string matching {pattern}")
    if kind == "value_error":
        return msg.removeprefix("Value error, ").removeprefix("expected ")
    return msg[0].lower() + msg[1:] if msg else kind
