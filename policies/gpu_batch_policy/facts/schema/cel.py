"""Run a CRD's own CEL rules (``x-kubernetes-validations``) with cel-python, as the API server would.

Why: a structural schema cannot say "borrowingLimit needs a cohort" or "a toleration without a
key must use Exists"; CRD authors put such rules in CEL, and the API server rejects objects that
break them.  Without running them, "valid" in the preview would mean less than what ``kubectl
apply`` says.

The semantics follow the API server (kubernetes/kubernetes, tag v1.34.0,
``staging/src/k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1/types_jsonschema.go``
``ValidationRule`` and ``.../pkg/apiserver/schema/cel/validation.go``):

* a rule on a schema node runs only when that node's value is present, with ``self`` bound to
  it, after the schema's defaults are applied (:func:`with_defaults`);
* a rule that evaluates to false fails with ``messageExpression`` if it evaluates to a
  non-blank one-line string,
  else ``message``, else ``failed rule: <rule>``; at the node's path, extended by ``fieldPath``;
  with the ``reason`` (``FieldValueInvalid`` by default) shown the way the API server words it;
* a rule whose evaluation errors on a missing field or index fails too (the API server reports
  evaluation errors as invalid values);
* transition rules (those that mention ``oldSelf``) do not run on create.

Anything this library cannot decide is **not checked**, counted with its reason, and never
counted as passed: transition rules and ``optionalOldSelf`` (there is no old object before
deploy, and cel-python 0.5.0 has no optional types), rules calling functions cel-python lacks
(the Kubernetes CEL libraries: ``isQuantity``, ``url``, ``lowerAscii``, ...), rules that do not
parse, rules reading escaped property names (``self.x__dash__prop``), rules that meet a value
unknown before deploy (``"(unknown)"`` / ``"[secret]"``), and evaluation errors other than a
missing field or index (a cel-python type gap, not the object).

Each distinct rule text is parsed and planned once per process (:func:`compiled_rule`).
"""

from __future__ import annotations

import copy
import json
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import Any, Final

import celpy
import lark
from celpy import celtypes
from celpy.adapter import json_to_cel
from celpy.evaluation import CELEvalError, base_functions

from ...primitives.words import type_word
from . import cel_parser
from .markers import MARKERS

# CEL macros cel-python expands itself (has() as a function, the rest as methods on lists/maps).
# The reason given for a transition rule.  The API server runs such a rule only when an old value
# exists (``ValidationRule``: "transition rules ... only apply when there is an old value"), so on
# create it is not evaluated at all: callers judging a create (the pack) skip it, the coverage
# benchmark still counts it.
TRANSITION_RULE: Final = "transition rule (oldSelf): runs only on update"
_MACROS: Final = frozenset({"has", "all", "exists", "exists_one", "map", "filter"})
# Every function or method cel-python 0.5.0 can call (celpy.evaluation.base_functions).
_KNOWN_FUNCTIONS: Final = frozenset(base_functions) | _MACROS

# How the API server words each ``reason`` (k8s.io/apimachinery/pkg/util/validation/field,
# ErrorType.String(), tag v0.34.0).
_REASON_TEXT: Final = {
    "FieldValueInvalid": "Invalid value",
    "FieldValueForbidden": "Forbidden",
    "FieldValueRequired": "Required value",
    "FieldValueDuplicate": "Duplicate value",
}
# The API server's escapes for property names CEL cannot spell (kubernetes/kubernetes
# staging/src/k8s.io/apiserver/pkg/cel/escaping.go ``Escape``: a CEL reserved word becomes
# ``__<word>__``; otherwise ``__`` -> ``__underscores__``, ``.`` -> ``__dot__``, ``-`` -> ``__dash__``,
# ``/`` -> ``__slash__``; a name with any other character cannot be read from CEL).  Only an object's
# declared ``properties`` are escaped; the keys of a map (``additionalProperties``) are not.
_CEL_RESERVED: Final = frozenset(
    {
        "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if",
        "import", "let", "loop", "package", "namespace", "return", "var", "void", "while",
    }
)  # fmt: skip
_ESCAPABLE: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-/]*$")


def escape_property(name: str) -> str | None:
    """The identifier a CRD rule reads ``name`` by (None: not readable as a field)."""
    if name in _CEL_RESERVED:
        return f"__{name}__"
    if not _ESCAPABLE.match(name):
        return None
    return (
        name.replace("__", "__underscores__")
        .replace(".", "__dot__")
        .replace("-", "__dash__")
        .replace("/", "__slash__")
    )


def escaped_for_cel(value: Any, schema: Mapping[str, Any]) -> Any:
    """``value`` with its objects' declared property names escaped as the API server exposes them."""
    if isinstance(value, list):
        items = schema.get("items")
        return [escaped_for_cel(item, items) for item in value] if isinstance(items, Mapping) else value
    if not isinstance(value, Mapping):
        return value
    props = schema.get("properties")
    if isinstance(props, Mapping) and props:
        out: dict[str, Any] = {}
        for key, item in value.items():
            sub = props.get(key)
            name = escape_property(str(key)) if key in props else str(key)
            if name is not None:
                out[name] = escaped_for_cel(item, sub) if isinstance(sub, Mapping) else item
        return out
    additional = schema.get("additionalProperties")
    if isinstance(additional, Mapping):
        return {key: escaped_for_cel(item, additional) for key, item in value.items()}
    return value


_FIELD_PATH_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*)|\[\s*'((?:[^'\\]|\\.)*)'\s*\]")


def _environment() -> celpy.Environment:
    """cel-python's environment, without its side effect: ``celpy.Environment()`` raises the
    process's recursion limit to 2,500 (celpy/__init__.py ``Environment.__init__``), which would
    let the SDK recurse into requests nested deep enough to overflow the C stack (see
    ``servicer_guard``).  CRD rules are a line each; the default limit parses them."""
    limit = sys.getrecursionlimit()
    cel_parser.install()  # the parser from lark's cache (:mod:`.cel_parser`), not rebuilt
    try:
        return celpy.Environment()
    finally:
        sys.setrecursionlimit(limit)


_ENV = _environment()

_NUMBERS: Final = (celtypes.IntType, celtypes.UintType, celtypes.DoubleType)


def _heterogeneous_eq(a: Any, b: Any) -> Any:
    """CEL's heterogeneous equality, as the API server's cel-go evaluates ``==``: values of
    different types are unequal (numbers compare by value) instead of "no matching overload"
    (cel-spec doc/langdef.md, "Equality"; cel-python 0.5.0 raises for e.g. string == int).  An
    ``x-kubernetes-int-or-string`` value is either, so a rule such as GMP's ``self != 0`` on
    ``endpoints[].port`` (prometheus-engine podmonitorings CRD) holds for a port name."""
    if isinstance(a, CELEvalError) or isinstance(b, CELEvalError):
        return a if isinstance(a, CELEvalError) else b
    try:
        return base_functions["_==_"](a, b)
    except TypeError:
        if isinstance(a, _NUMBERS) and isinstance(b, _NUMBERS):
            return celtypes.BoolType(float(a) == float(b))
        return celtypes.BoolType(False)


def _heterogeneous_ne(a: Any, b: Any) -> Any:
    equal = _heterogeneous_eq(a, b)
    return equal if isinstance(equal, CELEvalError) else celtypes.BoolType(not equal)


_EQUALITY: Final = {"_==_": _heterogeneous_eq, "_!=_": _heterogeneous_ne}


class Verdict(StrEnum):
    """What one rule said about one value."""

    PASSED = "passed"
    FAILED = "failed"
    UNCHECKED = "unchecked"


@dataclass(frozen=True)
class RuleResult:
    """The outcome of one rule on one value: a failure carries its message and path suffix."""

    verdict: Verdict
    # FAILED: "Invalid value: <message>"; UNCHECKED: why the rule could not be decided.
    message: str = ""
    # FAILED: the rule's fieldPath as path segments, relative to the node the rule sits on.
    field_path: tuple[str, ...] = ()


@dataclass(frozen=True)
class CompiledRule:
    """One ``x-kubernetes-validations`` entry, parsed and ready to evaluate (or why it cannot)."""

    rule: str
    message: str
    reason: str
    field_path: tuple[str, ...]
    program: celpy.Runner | None
    message_program: celpy.Runner | None
    # Why the rule cannot be checked before deploy; "" when ``program`` can run.
    unchecked_reason: str = ""
    # The fields of ``self`` the rule (and its messageExpression) read; None when it reads all.
    self_fields: frozenset[str] | None = None

    def evaluate(self, value: Any, schema: Mapping[str, Any]) -> RuleResult:
        """Evaluate with ``self`` = ``value`` (defaulted per ``schema``, the rule's node)."""
        return NodeRules([], schema).run_one(self, value)

    def run(self, activation: Mapping[str, Any]) -> RuleResult:
        """Evaluate on a prepared activation (``self`` already converted to CEL values)."""
        if self.program is None:
            return RuleResult(Verdict.UNCHECKED, self.unchecked_reason)
        outcome: Any
        try:
            outcome = self.program.evaluate(dict(activation))
        except CELEvalError as error:
            outcome = error
        except Exception as error:  # mixed-type compares and other gaps are cel-python's, not the object's
            return RuleResult(Verdict.UNCHECKED, f"cel-python could not evaluate it ({_brief(error)})")
        if isinstance(outcome, CELEvalError):
            if _is_missing_member(outcome):
                return self._failed(activation, f" (evaluation error: {_brief(outcome)})")
            return RuleResult(Verdict.UNCHECKED, f"cel-python could not evaluate it ({_brief(outcome)})")
        if not isinstance(outcome, celtypes.BoolType):
            return RuleResult(Verdict.UNCHECKED, f"rule evaluated to a {type_word(outcome)}, not a boolean")
        if outcome:
            return RuleResult(Verdict.PASSED)
        return self._failed(activation, "")

    def _failed(self, activation: Mapping[str, Any], suffix: str) -> RuleResult:
        message = self._message(activation) + suffix
        return RuleResult(
            Verdict.FAILED, f"{_REASON_TEXT.get(self.reason, self.reason)}: {message}", self.field_path
        )

    def _message(self, activation: Mapping[str, Any]) -> str:
        if self.message_program is not None:
            try:
                text = self.message_program.evaluate(dict(activation))
            except Exception:  # a broken messageExpression falls back to message, as upstream
                text = None
            if isinstance(text, str) and text.strip() and "\n" not in text:
                return str(text)
        return self.message or f"failed rule: {self.rule}"


_MEMO_LIMIT: Final = 4096
_UNKNOWN_VALUE: Final = "a value under its node is unknown until deploy"


class NodeRules:
    """The CEL rules of one schema node, run together on each value present there.

    The value is defaulted and converted to CEL once for all of the node's rules, and results
    are memoised per value (rules are pure functions of ``self``): a thousand teams' identical
    ``preemption`` blocks cost one evaluation.  cel-python interprets its parse tree, at roughly
    a millisecond per rule, so this matters at scale.
    """

    __slots__ = ("_memo", "fields", "rules", "schema")

    def __init__(self, rules: Iterable[Mapping[str, Any]], schema: Mapping[str, Any]) -> None:
        self.rules = tuple(compiled_rule(rule) for rule in rules)
        self.schema = schema
        self._memo: dict[str, tuple[RuleResult, ...]] = {}
        # The fields of an object value the runnable rules read (None: the whole value): only
        # they are keyed, converted and scanned for markers, so a ClusterQueue spec rule that
        # reads cohortName and resourceGroups ignores each team's own namespaceSelector.
        self.fields: frozenset[str] | None = None
        runnable = [rule.self_fields for rule in self.rules if rule.program is not None]
        if runnable and all(fields is not None for fields in runnable):
            self.fields = frozenset(field for fields in runnable if fields is not None for field in fields)

    def run(self, value: Any) -> tuple[RuleResult, ...]:
        """Every rule's result on ``value`` (a present value of this node)."""
        if self.fields is not None and isinstance(value, Mapping):
            fields = self.fields
            value = {key: item for key, item in value.items() if (escape_property(str(key)) or key) in fields}
        key = json.dumps(value, sort_keys=True, default=repr)
        results = self._memo.get(key)
        if results is None:
            results = self._run(value, self.rules)
            if len(self._memo) >= _MEMO_LIMIT:
                self._memo.clear()
            self._memo[key] = results
        return results

    def run_one(self, rule: CompiledRule, value: Any) -> RuleResult:
        return self._run(value, (rule,))[0]

    def _run(self, value: Any, rules: tuple[CompiledRule, ...]) -> tuple[RuleResult, ...]:
        if all(rule.program is None for rule in rules):
            return tuple(RuleResult(Verdict.UNCHECKED, rule.unchecked_reason) for rule in rules)
        unchecked: str | None = _UNKNOWN_VALUE if contains_marker(value) else None
        activation: dict[str, Any] = {}
        if unchecked is None:
            try:
                activation["self"] = json_to_cel(
                    escaped_for_cel(with_defaults(value, self.schema), self.schema)
                )
            except Exception as error:  # a YAML timestamp or another non-JSON value
                unchecked = f"cel-python could not evaluate it ({_brief(error)})"
        return tuple(
            RuleResult(Verdict.UNCHECKED, unchecked)
            if unchecked is not None and rule.program is not None
            else rule.run(activation)
            for rule in rules
        )


def _brief(error: BaseException) -> str:
    text = str(error.args[0]) if error.args else "an evaluation error"
    return text if len(text) <= 120 else text[:117] + "..."


def _is_missing_member(error: CELEvalError) -> bool:
    """A missing field, key or index: the API server rejects the object for it too."""
    kind = error.args[1] if len(error.args) > 1 else None
    return isinstance(kind, type) and issubclass(kind, (KeyError, IndexError))


def contains_marker(value: Any) -> bool:
    """Whether a display marker (unknown or secret) sits anywhere in ``value``."""
    if isinstance(value, str):
        return value in MARKERS
    if isinstance(value, Mapping):
        return any(contains_marker(item) for item in value.values())
    if isinstance(value, list):
        return any(contains_marker(item) for item in value)
    return False


def with_defaults(value: Any, schema: Mapping[str, Any]) -> Any:
    """``value`` with the schema's ``default``s filled in where absent, recursively.

    The API server defaults before it validates, so ``self.reclaimWithinCohort`` on a
    ClusterQueue's ``preemption`` reads its default ``Never`` when the user left it out.
    Integral floats under ``type: integer`` become ints (the Pulumi wire has only doubles).
    The input is never modified.
    """
    if isinstance(value, float) and value.is_integer() and schema.get("type") == "integer":
        return int(value)
    if isinstance(value, list):
        items = schema.get("items")
        return [with_defaults(item, items) for item in value] if isinstance(items, Mapping) else value
    if not isinstance(value, Mapping):
        return value
    props = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    out: dict[str, Any] = {}
    for key, item in value.items():
        sub = props.get(key, additional if isinstance(additional, Mapping) else None)
        out[key] = with_defaults(item, sub) if isinstance(sub, Mapping) else item
    for key, sub in props.items():
        if key not in out and isinstance(sub, Mapping) and "default" in sub:
            out[key] = with_defaults(copy.deepcopy(sub["default"]), sub)
    return out


def _names_used(tree: lark.Tree[Any]) -> tuple[set[str], set[str]]:
    """(functions and methods called, identifiers read) in a parsed CEL expression."""
    functions: set[str] = set()
    identifiers: set[str] = set()
    for node in tree.iter_subtrees():
        if node.data == "ident_arg" and node.children:
            functions.add(str(node.children[0]))
        elif node.data == "member_dot_arg" and len(node.children) > 1:
            functions.add(str(node.children[1]))
        elif node.data == "ident" and node.children:
            identifiers.add(str(node.children[0]))
    return functions, identifiers


def _is_bare_self(node: Any) -> bool:
    """Whether a parse-tree node is just ``self`` (member -> primary -> ident self)."""
    while isinstance(node, lark.Tree) and node.data in ("member", "primary") and len(node.children) == 1:
        node = node.children[0]
    return isinstance(node, lark.Tree) and node.data == "ident" and str(node.children[0]) == "self"


def _self_fields(tree: lark.Tree[Any]) -> frozenset[str] | None:
    """The fields of ``self`` an expression reads, or None if it uses ``self`` whole.

    ``self.a.b``, ``has(self.a)`` read field ``a``; ``self.all(...)``, ``self == x`` or
    ``size(self)`` read all of it.
    """
    fields: set[str] = set()
    selves = accounted = 0
    for node in tree.iter_subtrees():
        if node.data == "member_dot" and len(node.children) == 2 and _is_bare_self(node.children[0]):
            fields.add(str(node.children[1]))
            accounted += 1
        elif node.data == "ident" and node.children and str(node.children[0]) == "self":
            selves += 1
    return frozenset(fields) if selves == accounted else None


@dataclass(frozen=True)
class _Plan:
    runner: celpy.Runner | None
    # Why it cannot run here ("" when it can), and the fields of self it reads (None: all).
    why: str = ""
    self_fields: frozenset[str] | None = None


@lru_cache(maxsize=4096)  # rule texts: the pinned CRDs' few hundred, plus what a stack's CRDs bring
def _plan(text: str) -> _Plan:
    """Parse and plan one CEL text once."""
    try:
        tree = _ENV.compile(text)
    except Exception as error:  # CELParseError and lark's own errors alike
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else "a parse error"
        return _Plan(None, f"cel-python 0.5.0 cannot parse it ({first_line[:80]})")
    functions, identifiers = _names_used(tree)
    if "oldSelf" in identifiers:
        return _Plan(None, TRANSITION_RULE)
    missing = sorted(functions - _KNOWN_FUNCTIONS)
    if missing:
        return _Plan(None, f"needs {', '.join(missing)}, which cel-python 0.5.0 lacks")
    return _Plan(_ENV.program(tree, functions=_EQUALITY), "", _self_fields(tree))


@lru_cache(maxsize=4096)
def _compile(
    rule: str, *, message: str, reason: str, field_path: str, message_expression: str, optional: bool
) -> CompiledRule:
    steps, path_ok = parse_field_path(field_path)
    plan = _Plan(None, "optionalOldSelf needs CEL optional types, which cel-python 0.5.0 lacks")
    if not optional:
        plan = _plan(rule)
    program, why, fields = plan.runner, plan.why, plan.self_fields
    if program is not None and not path_ok:
        program, why = None, f"fieldPath {field_path!r} is not a supported path"
    message_plan = _plan(message_expression) if message_expression else _Plan(None, self_fields=frozenset())
    message_program = message_plan.runner
    if fields is not None and message_program is not None:
        fields = None if message_plan.self_fields is None else fields | message_plan.self_fields
    return CompiledRule(
        rule=rule,
        message=message,
        reason=reason or "FieldValueInvalid",
        field_path=steps,
        program=program,
        message_program=message_program,
        unchecked_reason=why,
        self_fields=fields,
    )


def compiled_rule(raw: Mapping[str, Any]) -> CompiledRule:
    """The compiled form of one ``x-kubernetes-validations`` entry (cached by its content)."""

    def text(key: str) -> str:
        value = raw.get(key)
        return value if isinstance(value, str) else ""

    rule = text("rule")
    if not rule:
        return CompiledRule(
            rule="",
            message="",
            reason="",
            field_path=(),
            program=None,
            message_program=None,
            unchecked_reason="entry has no rule text",
        )
    return _compile(
        rule,
        message=text("message"),
        reason=text("reason"),
        field_path=text("fieldPath"),
        message_expression=text("messageExpression"),
        optional=bool(raw.get("optionalOldSelf", False)),
    )


def parse_field_path(text: str) -> tuple[tuple[str, ...], bool]:
    """Split a rule's ``fieldPath`` (``.spec.x`` / ``.m['k']``) into segments; ok False if malformed."""
    if not text:
        return (), True
    steps: list[str] = []
    position = 0
    while position < len(text):
        match = _FIELD_PATH_STEP.match(text, position)
        if match is None:
            return (), False
        steps.append(match.group(1) if match.group(1) is not None else match.group(2))
        position = match.end()
    return tuple(steps), True
