"""Strict validation of rendered Kubernetes custom resources against the upstream CRD schemas.

Why this exists: the API server *prunes* any field a CRD's structural schema does not declare,
silently.  A v1beta1-style ``spec.cohort`` or ``spec.admissionChecks`` list on a v1beta2
ClusterQueue is accepted by ``kubectl apply`` and simply vanishes, leaving a queue that never
borrows or never waits for capacity.  So here a field the schema does not know is an *error*,
not a warning, and so is everything else the schema itself can decide before deploy: types,
enums, required fields, bounds, patterns, ``x-kubernetes-int-or-string``, list-set/list-map
uniqueness, and the standard ObjectMeta rules CRD schemas leave open at the root.

What this does not do, on purpose:

* CEL rules (``x-kubernetes-validations``) run through ``.cel`` (cel-python).  A
  rule it cannot decide (``oldSelf``, a function cel-python lacks, a value unknown before
  deploy) is counted in ``cel_rules_unchecked`` with its reason, never as passed, so "valid" is
  never mistaken for "the API server would accept it".
* Values not known at preview time are rendered as the display markers ``"(unknown)"`` and
  ``"[secret]"`` (:mod:`.markers`).  A string equal to a
  marker is accepted for *any* schema type and counted in ``unchecked_values``: it cannot be
  checked yet, and failing on it would make every real preview red.  Pass objects in display
  form (``preview.records.for_display``), not the engine's wire sentinels.
* Integral floats are accepted where the schema says ``integer``: the Pulumi wire protocol has
  only doubles, and the API server's own OpenAPI validation accepts ``1.0`` as an integer too.

Schemas come from the CRDs the pinned Helm charts ship (``charts.lock.yaml``; Kueue's chart
templates, KAI's and KubeRay's ``crds/``), rendered by the real Helm engine -- or from a directory
of CRD YAML files (``$GPU_BATCH_CRD_DIR``, or an explicit argument), which tests use to compare.  Each file is parsed at most once per catalog,
only when an object of its group is validated, and each (group, version, kind) gets one compiled
validator whose schema nodes are built lazily, because the RayJob/RayCluster/Workload CRDs are
1-1.4 MB of mostly pod-spec schema that a given object never touches.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

import yaml

from ...primitives.bounded import BoundedCache
from ...primitives.yaml_loader import SAFE_LOADER
from .cel import NodeRules, RuleResult, Verdict
from .depth import MAX_SCHEMA_DEPTH, nesting_depth
from .markers import MARKERS
from .stored import as_stored

SCHEMA_DIR_ENV: Final = "GPU_BATCH_CRD_DIR"
"""Environment variable that overrides the default CRD schema directory."""


_Path = tuple[str | int, ...]


_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_QUALIFIED_NAME_PART = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")
_GENERATE_NAME = re.compile(r"[a-z0-9][-a-z0-9.]*")
_PATH_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MAX_ANNOTATIONS_BYTES = 256 * 1024

# ObjectMeta fields a client may send; anything else under the root ``metadata`` is dropped.
_OBJECT_META_FIELDS: Final = frozenset(
    {
        "name",
        "generateName",
        "namespace",
        "labels",
        "annotations",
        "finalizers",
        "ownerReferences",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "managedFields",
        "selfLink",
    }
)
_IMPLICIT_ROOT_FIELDS: Final = frozenset({"apiVersion", "kind", "metadata"})
_OWNER_REFERENCE_REQUIRED: Final = ("apiVersion", "kind", "name", "uid")
_OWNER_REFERENCE_FIELDS: Final = frozenset(
    {"apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"}
)


PATCH_CEL: Final = "a patch: the API server runs CEL rules on the object it merges into"


class SchemaDirError(FileNotFoundError):
    """The CRD schema directory does not exist (wrong checkout layout or a bad override)."""


class Outcome(StrEnum):
    """How an object fared; only ``INVALID`` is a failure."""

    VALID = "valid"
    INVALID = "invalid"
    # No CRD in the schema directory serves this API group (core kinds, apps/v1, ...).
    NOT_CUSTOM_RESOURCE = "not-a-custom-resource"
    # The group has CRDs here, but none for this kind: schema missing from the directory.
    NO_SCHEMA = "no-schema"
    # Nested deeper than the walk reads (:data:`.depth.MAX_SCHEMA_DEPTH`): not checked at all.
    TOO_DEEP = "too-deep"


@dataclass(frozen=True)
class Violation:
    """One schema violation at a path inside the object (``spec.resourceGroups[0].flavors``)."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass(frozen=True)
class ValidationResult:
    """The verdict on one object, with enough identity to print actionable messages."""

    api_version: str
    kind: str
    name: str
    namespace: str | None
    outcome: Outcome
    # "<group>/<version>" of the schema used, "" when none applied.
    schema: str = ""
    violations: tuple[Violation, ...] = ()
    # Why the object was not checked (NOT_CUSTOM_RESOURCE / NO_SCHEMA), for humans.
    note: str = ""
    # CEL rules attached to schema nodes the object populated: run (passed or failed) ...
    cel_rules_checked: int = 0
    # ... or not decidable here (oldSelf, a function cel-python lacks, an unknown value).
    cel_rules_unchecked: int = 0
    # Why rules were not checked, one line per distinct reason: "<reason> (<count>)".
    cel_unchecked_reasons: tuple[str, ...] = ()
    # Values equal to a display marker, accepted without a check.
    unchecked_values: int = 0
    # Schema patterns this Python cannot compile (Go RE2 syntax), skipped.
    patterns_skipped: int = 0
    # INVALID only because the CRD found does not serve ``apiVersion``'s version: the catalog's
    # install would refuse it, another install of the group may serve it (the pack: "cannot check").
    unserved_version: bool = False

    @property
    def ok(self) -> bool:
        """Whether the object may go ahead (everything but ``INVALID``)."""
        return self.outcome is not Outcome.INVALID

    @property
    def ref(self) -> str:
        """``Kind/name`` (cluster-scoped or no namespace) or ``Kind/namespace/name``."""
        name = self.name or "<unnamed>"
        if self.namespace:
            return f"{self.kind}/{self.namespace}/{name}"
        return f"{self.kind}/{name}"

    def messages(self) -> list[str]:
        """One line per violation: ``ClusterQueue/cq: spec.cohort: field not declared ...``."""
        return [f"{self.ref}: {v}" for v in self.violations]


# --------------------------------------------------------------------------------------------
# Small helpers


def format_path(path: Sequence[str | int]) -> str:
    """Render a path like ``spec.resourceGroups[0].flavors`` or ``metadata.labels["a/b"]``."""
    out = ""
    for seg in path:
        if isinstance(seg, int):
            out += f"[{seg}]"
        elif _PATH_IDENT.fullmatch(seg):
            out += f".{seg}" if out else seg
        else:
            out += f"[{json.dumps(seg)}]"
    return out or "<root>"


def _is_marker(value: Any) -> bool:
    return isinstance(value, str) and value in MARKERS


def _is_int(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and value.is_integer()


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list):
        return "array"
    return "value"


def _show(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


_TYPE_CHECKS: Final[dict[str, Any]] = {
    "object": lambda v: isinstance(v, Mapping),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": _is_int,
    "number": _is_number,
    "boolean": lambda v: isinstance(v, bool),
}

# Compiled schema patterns (a CRD the program declares brings its own).
_PATTERN_CACHE: BoundedCache[str, re.Pattern[str] | None] = BoundedCache(2048)


def _compile_pattern(pattern: str) -> re.Pattern[str] | None:
    """Compile a Go (RE2) schema pattern for Python, or None if Python cannot express it.

    RE2 allows inline flags after ``^`` (``^(?i)[a-z]...``), which Python rejects; hoisting them
    to the front keeps the meaning.
    """
    if pattern in _PATTERN_CACHE:
        return _PATTERN_CACHE.get(pattern)
    text = re.sub(r"^\^\(\?([imsU]+)\)", r"(?\1)^", pattern).replace(r"\z", r"\Z")
    compiled: re.Pattern[str] | None
    try:
        compiled = re.compile(text)
    except re.error:
        compiled = None
    _PATTERN_CACHE.put(pattern, compiled)
    return compiled


def _suggest(key: str, known: Iterable[str]) -> str | None:
    candidates = sorted(known)
    for candidate in candidates:
        if candidate.lower() == key.lower():
            return candidate
    close = difflib.get_close_matches(key, candidates, n=1, cutoff=0.6)
    return close[0] if close else None


def _in_enum(value: Any, allowed: Iterable[Any]) -> bool:
    """Enum membership without Python's ``True == 1`` conflation."""
    return any(e == value and isinstance(e, bool) == isinstance(value, bool) for e in allowed)


def _unique_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


class _Collector:
    """Mutable tallies for one validation run (kept out of the immutable result until the end)."""

    __slots__ = ("cel_checked", "cel_unchecked", "errors", "partial", "patterns_skipped", "unchecked")

    def __init__(self, partial: bool = False) -> None:
        self.errors: list[Violation] = []
        self.cel_checked = 0
        self.cel_unchecked: dict[str, int] = {}
        self.unchecked = 0
        self.patterns_skipped = 0
        # A server-side apply patch (:meth:`CrdCatalog.validate` ``patch``): only what the patch
        # itself decides is judged.
        self.partial = partial

    def error(self, path: _Path, message: str) -> None:
        self.errors.append(Violation(format_path(path), message))

    def cel(self, result: RuleResult, path: _Path) -> None:
        """Tally one CEL rule's result; a failure is a violation at its (fieldPath-extended) path."""
        if result.verdict is Verdict.UNCHECKED:
            self.cel_unchecked[result.message] = self.cel_unchecked.get(result.message, 0) + 1
            return
        self.cel_checked += 1
        if result.verdict is Verdict.FAILED:
            self.error((*path, *result.field_path), result.message)

    def cel_reasons(self) -> tuple[str, ...]:
        return tuple(f"{reason} ({count})" for reason, count in sorted(self.cel_unchecked.items()))


# --------------------------------------------------------------------------------------------
# Compiled schema nodes


class _Context:
    """What every node of one (group, version, kind) schema shares, for messages and hints."""

    __slots__ = ("label", "other_versions")

    def __init__(self, label: str, other_versions: Mapping[str, Mapping[str, Any]]) -> None:
        self.label = label
        # Other served versions' raw root schemas, to say "declared in v1beta1" on unknown fields.
        self.other_versions = other_versions


class _Node:
    """One schema node, with its children compiled on first use.

    ``strict_fields`` is False inside anyOf/allOf/oneOf/not branches: in a structural schema
    those only add value constraints; field pruning is decided by the main ``properties``.
    """

    __slots__ = (
        "additional",
        "branches",
        "cel",
        "ctx",
        "embedded",
        "enum",
        "format",
        "has_value_checks",
        "int_or_string",
        "items",
        "list_keys",
        "list_type",
        "nullable",
        "pattern",
        "pattern_skipped",
        "preserve_unknown",
        "props",
        "props_raw",
        "raw",
        "strict_fields",
        "type",
    )

    def __init__(self, raw: Mapping[str, Any], ctx: _Context, strict_fields: bool = True) -> None:
        self.ctx = ctx
        self.raw = raw
        kind = raw.get("type")
        self.type: str | None = kind if isinstance(kind, str) else None
        self.nullable = bool(raw.get("nullable", False))
        self.int_or_string = bool(raw.get("x-kubernetes-int-or-string", False))
        self.preserve_unknown = bool(raw.get("x-kubernetes-preserve-unknown-fields", False))
        self.embedded = bool(raw.get("x-kubernetes-embedded-resource", False))
        self.strict_fields = strict_fields
        enum = raw.get("enum")
        self.enum: list[Any] | None = list(enum) if isinstance(enum, list) else None
        rules = [rule for rule in raw.get("x-kubernetes-validations") or () if isinstance(rule, Mapping)]
        self.cel = NodeRules(rules, raw) if rules else None
        self.format: str | None = raw.get("format")
        pattern = raw.get("pattern")
        self.pattern = _compile_pattern(pattern) if isinstance(pattern, str) else None
        self.pattern_skipped = isinstance(pattern, str) and self.pattern is None
        props = raw.get("properties")
        self.props_raw: Mapping[str, Any] = props if isinstance(props, Mapping) else {}
        self.props: dict[str, _Node] = {}
        additional = raw.get("additionalProperties")
        self.additional: _Node | bool | None
        if isinstance(additional, Mapping):
            self.additional = _Node(additional, ctx, strict_fields)
        elif isinstance(additional, bool):
            self.additional = additional
        else:
            self.additional = None
        items = raw.get("items")
        self.items = _Node(items, ctx, strict_fields) if isinstance(items, Mapping) else None
        # anyOf of bare types is how int-or-string is spelled; the flag already covers it.
        branches: list[tuple[str, list[_Node]]] = []
        for keyword in ("allOf", "anyOf", "oneOf"):
            subs = raw.get(keyword)
            if isinstance(subs, list) and not (keyword == "anyOf" and self.int_or_string):
                branches.append((keyword, [_Node(s, ctx, False) for s in subs]))
        if isinstance(raw.get("not"), Mapping):
            branches.append(("not", [_Node(raw["not"], ctx, False)]))
        self.branches = branches
        self.list_type: str | None = raw.get("x-kubernetes-list-type")
        self.list_keys: list[str] = list(raw.get("x-kubernetes-list-map-keys") or ())
        self.has_value_checks = any(
            k in raw
            for k in (
                "minimum",
                "maximum",
                "multipleOf",
                "minLength",
                "maxLength",
                "minItems",
                "maxItems",
                "minProperties",
                "maxProperties",
                "required",
            )
        )

    def child(self, key: str) -> _Node | None:
        node = self.props.get(key)
        if node is None:
            raw = self.props_raw.get(key)
            if raw is None:
                return None
            node = _Node(raw, self.ctx, self.strict_fields)
            self.props[key] = node
        return node

    # The walk -------------------------------------------------------------------------------

    def check(self, value: Any, path: _Path, out: _Collector) -> None:
        if isinstance(value, str) and value in MARKERS:
            out.unchecked += 1
            return
        if value is None:
            if not self.nullable:
                # What remains after ``stored.prune_nulls``: a null list item, or a null in a
                # patch (judged as written); the server's validation refuses it.
                out.error(path, "null is not allowed here")
            return
        if self.pattern_skipped:
            out.patterns_skipped += 1
        if self.int_or_string:
            if not (isinstance(value, str) or _is_int(value)):
                out.error(
                    path,
                    f"must be an integer or a string (x-kubernetes-int-or-string), "
                    f"got {_json_type(value)} {_show(value)}",
                )
                return
        elif self.type is not None:
            check_type = _TYPE_CHECKS.get(self.type)
            if check_type is not None and not check_type(value):
                out.error(path, f"expected {self.type}, got {_json_type(value)} {_show(value)}")
                return
        if self.enum is not None and not _in_enum(value, self.enum):
            allowed = ", ".join(_show(e) for e in self.enum)
            out.error(path, f"unsupported value {_show(value)}; supported values: {allowed}")
        if isinstance(value, str):
            self._check_string(value, path, out)
        elif _is_number(value):
            self._check_number(value, path, out)
        elif isinstance(value, list):
            self._check_array(value, path, out)
        elif isinstance(value, Mapping):
            self._check_object(value, path, out)
        for keyword, nodes in self.branches:
            self._check_branches(keyword, nodes, value, path, out)
        if self.cel is not None:
            self.check_cel(value, path, out)

    def check_cel(self, value: Any, path: _Path, out: _Collector) -> None:
        """Run this node's CEL rules on a present value (the API server's semantics)."""
        if self.cel is not None and out.partial:
            # The API server evaluates them on the object the patch merges into, not on the patch.
            out.cel_unchecked[PATCH_CEL] = out.cel_unchecked.get(PATCH_CEL, 0) + len(self.cel.rules)
            return
        if self.cel is not None:
            for result in self.cel.run(value):
                out.cel(result, path)

    def _check_string(self, value: str, path: _Path, out: _Collector) -> None:
        raw = self.raw
        if self.has_value_checks:
            if "minLength" in raw and len(value) < raw["minLength"]:
                out.error(path, f"must be at least {raw['minLength']} characters long")
            if "maxLength" in raw and len(value) > raw["maxLength"]:
                out.error(path, f"must be at most {raw['maxLength']} characters long (has {len(value)})")
        if self.pattern is not None and self.pattern.search(value) is None:
            out.error(path, f"{_show(value)} does not match pattern {raw['pattern']!r}")
        if self.format == "date-time" and not _DATE_TIME.fullmatch(value):
            out.error(path, f"{_show(value)} is not an RFC 3339 date-time")

    def _check_number(self, value: float, path: _Path, out: _Collector) -> None:
        raw = self.raw
        if self.format in ("int32", "int64") and _is_int(value):
            low, high = _INT32 if self.format == "int32" else _INT64
            if not low <= value <= high:
                out.error(path, f"{_show(value)} is out of range for {self.format}")
        if not self.has_value_checks:
            return
        if "minimum" in raw:
            low_bound = raw["minimum"]
            if value < low_bound or (raw.get("exclusiveMinimum") is True and value == low_bound):
                op = ">" if raw.get("exclusiveMinimum") is True else ">="
                out.error(path, f"must be {op} {low_bound}, got {_show(value)}")
        if "maximum" in raw:
            high_bound = raw["maximum"]
            if value > high_bound or (raw.get("exclusiveMaximum") is True and value == high_bound):
                op = "<" if raw.get("exclusiveMaximum") is True else "<="
                out.error(path, f"must be {op} {high_bound}, got {_show(value)}")
        if "multipleOf" in raw:
            quotient = value / raw["multipleOf"]
            if not math.isclose(quotient, round(quotient)):
                out.error(path, f"must be a multiple of {raw['multipleOf']}")

    def _check_array(self, value: list[Any], path: _Path, out: _Collector) -> None:
        raw = self.raw
        merged = out.partial and self.list_type in ("map", "set")  # merged item by item with the live list
        if self.has_value_checks:
            if "minItems" in raw and len(value) < raw["minItems"] and not merged:
                out.error(path, f"must have at least {raw['minItems']} items (has {len(value)})")
            if "maxItems" in raw and len(value) > raw["maxItems"]:
                out.error(path, f"must have at most {raw['maxItems']} items (has {len(value)})")
        if self.list_type == "set":
            seen: set[str] = set()
            for i, item in enumerate(value):
                if _is_marker(item):
                    continue
                key = _unique_key(item)
                if key in seen:
                    out.error(
                        (*path, i),
                        f"duplicate value {_show(item)} (x-kubernetes-list-type: set)",
                    )
                seen.add(key)
        elif self.list_type == "map" and self.list_keys:
            seen_keys: set[str] = set()
            required = set(self.items.raw.get("required") or ()) if out.partial and self.items else set()
            for i, item in enumerate(value):
                if not isinstance(item, Mapping):
                    continue
                for field_name in self.list_keys:
                    if field_name in required and item.get(field_name) is None:
                        # core.py ``_validator`` ``partial``: the keys match the item to a live one.
                        out.error((*path, i, field_name), "required field missing")
                parts = [item.get(k) for k in self.list_keys]
                if any(p is None or _is_marker(p) for p in parts):
                    continue
                key = _unique_key(parts)
                if key in seen_keys:
                    shown = ", ".join(f"{k}={_show(p)}" for k, p in zip(self.list_keys, parts, strict=True))
                    out.error((*path, i), f"duplicate entry with {shown} (list-map keys)")
                seen_keys.add(key)
        if self.items is not None:
            items = self.items
            for i, item in enumerate(value):
                items.check(item, (*path, i), out)

    def _check_object(
        self, value: Mapping[str, Any], path: _Path, out: _Collector, skip: frozenset[str] = frozenset()
    ) -> None:
        raw = self.raw
        if self.has_value_checks:
            for field_name in () if out.partial else raw.get("required") or ():
                # The API server applies schema defaults before validating, so a required
                # field with a default is never missing (KubeRay's workerGroupSpecs[].maxReplicas).
                if value.get(field_name) is None and "default" not in self.props_raw.get(field_name, {}):
                    out.error((*path, field_name), "required field missing")
            if "minProperties" in raw and len(value) < raw["minProperties"] and not out.partial:
                out.error(path, f"must have at least {raw['minProperties']} entries")
            if "maxProperties" in raw and len(value) > raw["maxProperties"]:
                out.error(path, f"must have at most {raw['maxProperties']} entries (has {len(value)})")
        for key, item in value.items():
            if key in skip:
                continue
            node = self.child(key)
            if node is not None:
                node.check(item, (*path, key), out)
                continue
            if self.embedded and key in ("apiVersion", "kind", "metadata"):
                if key == "metadata":
                    _check_object_meta(item, (*path, key), out, namespaced=None)
                elif not isinstance(item, str):
                    out.error((*path, key), f"expected string, got {_json_type(item)}")
                continue
            additional = self.additional
            if isinstance(additional, _Node):
                additional.check(item, (*path, key), out)
            elif additional is True or self.preserve_unknown or not self.strict_fields:
                continue
            else:
                out.error((*path, key), self._unknown_field_message(key, path))

    def _check_branches(
        self, keyword: str, nodes: list[_Node], value: Any, path: _Path, out: _Collector
    ) -> None:
        results: list[_Collector] = []
        for node in nodes:
            sub = _Collector()
            node.check(value, path, sub)
            results.append(sub)
        passed = sum(1 for r in results if not r.errors)
        if keyword == "allOf":
            for r in results:
                out.errors.extend(r.errors)
        elif keyword == "anyOf" and passed == 0:
            first = results[0].errors[0].message if results and results[0].errors else ""
            out.error(path, f"matches none of the anyOf alternatives ({first})")
        elif keyword == "oneOf" and passed != 1:
            out.error(path, f"must match exactly one oneOf alternative (matches {passed})")
        elif keyword == "not" and passed == 1:
            out.error(path, "matches a schema it must not match ('not')")

    def _unknown_field_message(self, key: str, path: _Path) -> str:
        message = f"field not declared in schema {self.ctx.label}"
        suggestion = _suggest(key, self.props_raw)
        if suggestion is not None:
            message += f" (did you mean {suggestion}?)"
        elif not self.props_raw:
            message += " (no fields are declared here)"
        elsewhere = [
            version for version, root in self.ctx.other_versions.items() if _declared_at(root, path, key)
        ]
        if elsewhere:
            message += f"; it is declared in {', '.join(sorted(elsewhere))}"
        return message + "; the API server would prune it"


def _declared_at(root: Mapping[str, Any], path: _Path, key: str) -> bool:
    """Whether ``key`` is a declared property at ``path`` in another version's raw schema."""
    node: Any = root
    for seg in path:
        if not isinstance(node, Mapping):
            return False
        if isinstance(seg, int):
            node = node.get("items")
        else:
            props = node.get("properties") or {}
            node = props.get(seg, node.get("additionalProperties"))
    return isinstance(node, Mapping) and key in (node.get("properties") or {})


# --------------------------------------------------------------------------------------------
# ObjectMeta: CRD schemas say only ``metadata: {type: object}`` at the root.


def _check_qualified_name(key: str) -> str | None:
    """Label/annotation key rule: ``[prefix/]name``, prefix a DNS subdomain, name <= 63."""
    prefix, _, name = key.rpartition("/")
    if "/" in key and not prefix:
        return "prefix part must be non-empty"
    if prefix and (len(prefix) > 253 or not _DNS1123_SUBDOMAIN.fullmatch(prefix)):
        return f"prefix {prefix!r} must be a DNS-1123 subdomain"
    if not name or len(name) > 63 or not _QUALIFIED_NAME_PART.fullmatch(name):
        return (
            f"name part {name!r} must be 1-63 characters of alphanumerics, '-', '_' or '.', "
            "starting and ending with an alphanumeric"
        )
    return None


def _check_string_map(value: Any, path: _Path, out: _Collector, *, label_values: bool) -> None:
    if not isinstance(value, Mapping):
        out.error(path, f"expected object of strings, got {_json_type(value)}")
        return
    total = 0
    for key, item in value.items():
        key_error = _check_qualified_name(str(key))
        if key_error is not None:
            out.error((*path, key), f"invalid key: {key_error}")
        if _is_marker(item):
            out.unchecked += 1
            continue
        if not isinstance(item, str):
            out.error(
                (*path, key),
                f"expected string, got {_json_type(item)} {_show(item)} (quote it in YAML)",
            )
            continue
        total += len(str(key)) + len(item)
        if label_values and item and (len(item) > 63 or not _QUALIFIED_NAME_PART.fullmatch(item)):
            out.error(
                (*path, key),
                f"invalid label value {_show(item)}: at most 63 characters of alphanumerics, "
                "'-', '_' or '.', starting and ending with an alphanumeric",
            )
    if not label_values and total > _MAX_ANNOTATIONS_BYTES:
        out.error(path, f"annotations total {total} bytes, more than 256 KiB")


def _check_object_meta(meta: Any, path: _Path, out: _Collector, *, namespaced: bool | None) -> None:
    """Apply the API server's ObjectMeta rules that a CRD schema leaves open at the root.

    ``namespaced`` is the kind's scope (None when unknown, e.g. embedded resources): a
    namespace on a cluster-scoped object is ignored by the API server, so it is flagged.
    """
    if _is_marker(meta):
        out.unchecked += 1
        return
    if not isinstance(meta, Mapping):
        out.error(path, f"expected object, got {_json_type(meta)}")
        return
    for key in meta:
        if key not in _OBJECT_META_FIELDS:
            hint = _suggest(str(key), _OBJECT_META_FIELDS)
            extra = f" (did you mean {hint}?)" if hint else ""
            out.error((*path, key), f"field not declared in ObjectMeta{extra}")
    _check_meta_names(meta, path, out)
    _check_meta_namespace(meta.get("namespace"), (*path, "namespace"), out, namespaced)
    if meta.get("labels") is not None:
        _check_string_map(meta["labels"], (*path, "labels"), out, label_values=True)
    if meta.get("annotations") is not None:
        _check_string_map(meta["annotations"], (*path, "annotations"), out, label_values=False)
    _check_meta_references(meta, path, out)


def _check_meta_names(meta: Mapping[str, Any], path: _Path, out: _Collector) -> None:
    """``name`` (or ``generateName``) is required, and names are DNS-1123 subdomains."""
    name = meta.get("name")
    generate_name = meta.get("generateName")
    if name is None and generate_name is None:
        out.error((*path, "name"), "required field missing (or set generateName)")
    for key, value in (("name", name), ("generateName", generate_name)):
        if value is None:
            continue
        if _is_marker(value):
            out.unchecked += 1
        elif not isinstance(value, str):
            out.error((*path, key), f"expected string, got {_json_type(value)}")
        elif key == "name" and (len(value) > 253 or not _DNS1123_SUBDOMAIN.fullmatch(value)):
            out.error(
                (*path, key),
                f"{_show(value)} is not a DNS-1123 subdomain (lower-case alphanumerics, '-' "
                "and '.', starting and ending with an alphanumeric, at most 253 characters)",
            )
        elif key == "generateName" and not _GENERATE_NAME.fullmatch(value):
            out.error((*path, key), f"{_show(value)} is not a valid DNS-1123 name prefix")


def _check_meta_namespace(namespace: Any, path: _Path, out: _Collector, namespaced: bool | None) -> None:
    """A namespace is a DNS-1123 label, and meaningless on a cluster-scoped kind."""
    if namespace is None:
        return
    if _is_marker(namespace):
        out.unchecked += 1
    elif not isinstance(namespace, str):
        out.error(path, f"expected string, got {_json_type(namespace)}")
    elif len(namespace) > 63 or not _DNS1123_LABEL.fullmatch(namespace):
        out.error(
            path,
            f"{_show(namespace)} is not a DNS-1123 label (lower-case alphanumerics and '-', "
            "at most 63 characters)",
        )
    elif namespaced is False:
        out.error(path, "set on a cluster-scoped kind; the API server ignores it")


def _check_meta_references(meta: Mapping[str, Any], path: _Path, out: _Collector) -> None:
    """``finalizers`` are qualified names; ``ownerReferences`` carry their required fields."""
    finalizers = meta.get("finalizers")
    if finalizers is not None:
        if not isinstance(finalizers, list):
            out.error((*path, "finalizers"), f"expected array, got {_json_type(finalizers)}")
        else:
            for i, item in enumerate(finalizers):
                if not isinstance(item, str) or _check_qualified_name(item) is not None:
                    out.error((*path, "finalizers", i), "must be a qualified name string")
    owners = meta.get("ownerReferences")
    if owners is None:
        return
    if not isinstance(owners, list):
        out.error((*path, "ownerReferences"), f"expected array, got {_json_type(owners)}")
        return
    for i, ref in enumerate(owners):
        ref_path = (*path, "ownerReferences", i)
        if not isinstance(ref, Mapping):
            out.error(ref_path, f"expected object, got {_json_type(ref)}")
            continue
        for key in _OWNER_REFERENCE_REQUIRED:
            if ref.get(key) is None:
                out.error((*ref_path, key), "required field missing")
        for key in ref:
            if key not in _OWNER_REFERENCE_FIELDS:
                out.error((*ref_path, key), "field not declared in OwnerReference")


# --------------------------------------------------------------------------------------------
# The catalog of CRDs in a schema directory


@dataclass(frozen=True)
class CrdVersion:
    """One entry of a CRD's ``spec.versions``."""

    name: str
    served: bool
    storage: bool
    schema: Mapping[str, Any]


@dataclass(frozen=True)
class Crd:
    """The parts of a CustomResourceDefinition validation needs."""

    group: str
    kind: str
    plural: str
    namespaced: bool
    versions: Mapping[str, CrdVersion]
    source: Path

    @property
    def served_versions(self) -> list[str]:
        return [v.name for v in self.versions.values() if v.served]


class _ObjectValidator:
    """The compiled validator for one (group, version, kind)."""

    __slots__ = ("crd", "label", "root", "version")

    def __init__(self, crd: Crd, version: str) -> None:
        self.crd = crd
        self.version = version
        self.label = f"{crd.group}/{version}"
        others = {name: v.schema for name, v in crd.versions.items() if name != version and v.served}
        self.root = _Node(crd.versions[version].schema, _Context(self.label, others))

    def check(self, obj: Mapping[str, Any], out: _Collector) -> None:
        root = self.root
        if not out.partial:
            # Judge the object as the server stores it: nulls pruned, defaults applied (.stored).
            # A patch is merged into the live object before that happens, on the cluster.
            obj = as_stored(obj, root.raw)
        # The root walk minus what every object has whether or not the schema spells it out
        # (apiextensions-apiserver structural schema: apiVersion, kind and metadata are implicit
        # at the root); ``metadata`` gets the ObjectMeta treatment instead.
        root._check_object(obj, (), out, skip=_IMPLICIT_ROOT_FIELDS)
        if root.cel is not None:
            root.check_cel(obj, (), out)
        _check_object_meta(obj.get("metadata"), ("metadata",), out, namespaced=self.crd.namespaced)


def _open_api_schema(version: Mapping[str, Any]) -> Mapping[str, Any]:
    """A version's ``schema.openAPIV3Schema`` ({} when absent or not an object)."""
    schema = version.get("schema")
    found = schema.get("openAPIV3Schema") if isinstance(schema, Mapping) else None
    return found if isinstance(found, Mapping) else {}


def _plural_guesses(kind: str) -> list[str]:
    lower = kind.lower()
    guesses = [lower + "s", lower + "es"]
    if lower.endswith("y"):
        guesses.insert(0, lower[:-1] + "ies")
    return guesses


class CrdCatalog:
    """The CRDs in one schema directory, parsed on demand and cached with their validators.

    Files are expected in controller-gen's ``<group>_<plural>.yaml`` naming, which lets a lookup
    parse only its group's files (the likely plural first); files named otherwise are parsed the
    first time a lookup misses.  Multi-document files and non-CRD documents are tolerated.
    """

    def __init__(self, schema_dir: str | os.PathLike[str] | None, *, label: str | None = None) -> None:
        """A catalog of the CRD files in ``schema_dir``; ``None``: an empty catalog to fill with
        :meth:`add_documents` (the CRDs the pinned charts ship), named ``label`` in messages."""
        self._loaded: set[Path] = set()
        self._crds: dict[tuple[str, str], Crd] = {}
        # Lookups that found nothing (core kinds, typos), so they stay cheap when repeated.
        self._absent: set[tuple[str, str]] = set()
        self._group_kinds: dict[str, list[str]] = {}
        self._validators: dict[tuple[str, str, str], _ObjectValidator] = {}
        if schema_dir is None:
            self.schema_dir = Path(label or "CRDs")
            self.label = label or "the given CRDs"
            self._files: list[Path] = []
            return
        directory = Path(schema_dir)
        if not directory.is_dir():
            raise SchemaDirError(
                f"CRD schema directory {directory} does not exist. Expected the shared/schemas "
                f"folder beside the repository, or set {SCHEMA_DIR_ENV} / pass schema_dir."
            )
        self.schema_dir = directory.resolve()
        self.label = label or str(self.schema_dir)
        self._files = sorted(
            p for p in self.schema_dir.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file()
        )

    # Loading ----------------------------------------------------------------------------------

    def _load(self, path: Path) -> None:
        if path in self._loaded:
            return
        self._loaded.add(path)
        with path.open(encoding="utf-8") as handle:
            documents = list(yaml.load_all(handle, Loader=SAFE_LOADER))
        self.add_documents(documents, path)

    def add_documents(self, documents: Iterable[Any], source: Path) -> None:
        """Add the CRDs among ``documents`` (other documents are ignored).  The first CRD of a
        (group, kind) wins, so callers add the most specific source first."""
        for doc in documents:
            if not isinstance(doc, Mapping) or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc.get("spec")
            if not isinstance(spec, Mapping):
                continue
            names, raw_versions = spec.get("names"), spec.get("versions")
            if not isinstance(names, Mapping) or not isinstance(raw_versions, list):
                continue  # not readable (a stack's CRD with values unknown until apply): ignored
            group, kind, plural = (spec.get("group"), names.get("kind"), names.get("plural"))
            if not (isinstance(group, str) and isinstance(kind, str) and isinstance(plural, str)):
                continue
            versions = {
                v["name"]: CrdVersion(
                    name=v["name"],
                    served=v.get("served") is True,
                    storage=v.get("storage") is True,
                    schema=_open_api_schema(v),
                )
                for v in raw_versions
                if isinstance(v, Mapping) and isinstance(v.get("name"), str)
            }
            crd = Crd(
                group=group,
                kind=kind,
                plural=plural,
                namespaced=spec.get("scope") == "Namespaced",
                versions=versions,
                source=source,
            )
            if self._crds.setdefault((crd.group, crd.kind), crd) is crd:
                self._absent.discard((crd.group, crd.kind))
                self._group_kinds.pop(crd.group, None)

    def _group_files(self, group: str) -> list[Path]:
        return [p for p in self._files if p.name.startswith(f"{group}_")]

    def _unconventional_files(self) -> list[Path]:
        return [p for p in self._files if not re.match(r"[a-z0-9.-]+\.[a-z]+_[a-z0-9]+\.ya?ml$", p.name)]

    def crd(self, group: str, kind: str) -> Crd | None:
        """The CRD defining ``kind`` in ``group``, or None if the directory has none."""
        key = (group, kind)
        if key in self._crds:
            return self._crds[key]
        if key in self._absent:
            return None
        files = self._group_files(group)
        guesses = {f"{group}_{plural}.yaml" for plural in _plural_guesses(kind)}
        for path in sorted(files, key=lambda p: p.name not in guesses):
            self._load(path)
            if key in self._crds:
                return self._crds[key]
        for path in self._unconventional_files():
            self._load(path)
        if key not in self._crds:
            self._absent.add(key)
        return self._crds.get(key)

    def kinds_in_group(self, group: str) -> list[str]:
        """Every kind the directory defines for ``group`` (parses that group's files)."""
        if group not in self._group_kinds:
            for path in self._group_files(group) + self._unconventional_files():
                self._load(path)
            self._group_kinds[group] = sorted(kind for g, kind in self._crds if g == group)
        return self._group_kinds[group]

    def crds(self) -> list[Crd]:
        """Every CRD in the directory (parses everything; for listings and tests)."""
        for path in self._files:
            self._load(path)
        return sorted(self._crds.values(), key=lambda c: (c.group, c.kind))

    # Validation -------------------------------------------------------------------------------

    def _validator(self, crd: Crd, version: str) -> _ObjectValidator:
        key = (crd.group, version, crd.kind)
        validator = self._validators.get(key)
        if validator is None:
            validator = _ObjectValidator(crd, version)
            self._validators[key] = validator
        return validator

    def validate(self, obj: Mapping[str, Any], patch: bool = False) -> ValidationResult:
        """Validate one object strictly; see the module docstring for what "strictly" means.

        ``patch``: ``obj`` is a server-side apply patch (pulumi-kubernetes ``<Kind>Patch``,
        ``..schema.patches``), judged as a partial object as :mod:`.core` judges built-in ones:
        types, enums, patterns, maxima and undeclared fields as for a whole object; no
        ``required``, ``minProperties`` or, on a map or set list (merged item by item with the
        live one), ``minItems``, except the list-map keys an item requires; ``metadata.name``
        still required.  CEL rules are counted unchecked (:data:`PATCH_CEL`): the API server runs
        them on the merged object, which only the cluster holds.
        """
        if not isinstance(obj, Mapping):
            return ValidationResult(
                api_version="",
                kind="",
                name="",
                namespace=None,
                outcome=Outcome.INVALID,
                violations=(Violation("<root>", f"expected object, got {_json_type(obj)}"),),
            )
        api_version = obj.get("apiVersion")
        kind = obj.get("kind")
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        name = meta.get("name") if isinstance(meta.get("name"), str) else ""
        if not name and isinstance(meta.get("generateName"), str):
            name = meta["generateName"]
        namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else None

        def result(outcome: Outcome, **extra: Any) -> ValidationResult:
            return ValidationResult(
                api_version=api_version if isinstance(api_version, str) else "",
                kind=kind if isinstance(kind, str) else "",
                name=str(name),
                namespace=namespace,
                outcome=outcome,
                **extra,
            )

        missing = [
            Violation(field_name, "required field missing (a string)")
            for field_name, value in (("apiVersion", api_version), ("kind", kind))
            if not isinstance(value, str) or not value
        ]
        if missing:
            return result(Outcome.INVALID, violations=tuple(missing))
        assert isinstance(api_version, str) and isinstance(kind, str)
        group, _, version = api_version.rpartition("/")
        if not group:
            return result(Outcome.NOT_CUSTOM_RESOURCE, note=f"{api_version} is the core API group")
        crd = self.crd(group, kind)
        if crd is None:
            known = self.kinds_in_group(group)
            if not known:
                return result(
                    Outcome.NOT_CUSTOM_RESOURCE,
                    note=f"no CRD for API group {group} in {self.label}",
                )
            hint = _suggest(kind, known)
            return result(
                Outcome.NO_SCHEMA,
                note=(
                    f"no CRD for kind {kind} in group {group} in {self.label}"
                    + (f" (did you mean {hint}?)" if hint else f" (known: {', '.join(known)})")
                ),
            )
        crd_version = crd.versions.get(version)
        if crd_version is None or not crd_version.served:
            state = "is not served" if crd_version is not None else "does not exist"
            return result(
                Outcome.INVALID,
                unserved_version=True,
                violations=(
                    Violation(
                        "apiVersion",
                        f"version {version} of {crd.kind} ({crd.plural}.{crd.group}) {state}; "
                        f"served versions: {', '.join(crd.served_versions) or 'none'} "
                        f"(CRD {crd.source.name})",
                    ),
                ),
            )
        levels = nesting_depth(obj)
        if levels > MAX_SCHEMA_DEPTH:
            return result(
                Outcome.TOO_DEEP,
                note=(
                    f"its properties are nested {levels} levels deep and schema validation reads at "
                    f"most {MAX_SCHEMA_DEPTH}; no field of it was checked against {group}/{version}"
                ),
            )
        out = _Collector(partial=patch)
        self._validator(crd, version).check(obj, out)
        return result(
            Outcome.INVALID if out.errors else Outcome.VALID,
            schema=f"{group}/{version}",
            violations=tuple(out.errors),
            cel_rules_checked=out.cel_checked,
            cel_rules_unchecked=sum(out.cel_unchecked.values()),
            cel_unchecked_reasons=out.cel_reasons(),
            unchecked_values=out.unchecked,
            patterns_skipped=out.patterns_skipped,
        )
