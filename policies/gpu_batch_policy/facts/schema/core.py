"""Strict validation of built-in Kubernetes objects against the OpenAPI schema of the cluster's minor.

Why: ``crd_validation`` covers custom resources only, yet most of what a stack installs is
built-in -- Namespaces, RBAC, Secrets, Services, Deployments, webhook configurations, and every
object a Helm chart renders.  A misspelt field there is dropped (or, with strict field
validation, rejected) by the API server, and a wrong type fails ``kubectl apply``.  Here both are
errors before deploy.

The schemas are the JSON-schema form of the Kubernetes OpenAPI document that
``kubernetes-validate`` (PyPI, pinned 1.37.0; github.com/willthames/kubernetes-validate) ships
per minor version, in its ``-strict`` flavour where every object sets
``additionalProperties: false``: an unknown field is an error.

Which minor: the GKE cluster's ``minMasterVersion`` (``1.33`` or ``1.33.5-gke.1080000``) when
the stack sets it, else :data:`GKE_NEWEST_MINOR`, the newest minor GKE serves (Rapid channel)
that kubernetes-validate ships.  :func:`kubernetes_minor` says which, and why.

One validator for both entry points: the pack's ``builtin-object-schema`` rule
(``rules.builtin_objects``) and the offline preview (``preview.manifests``) import this module, so
``pulumi preview --policy-pack`` and ``make preview`` report the same invalid built-in objects.

As in ``crd_validation``: the display markers ``"(unknown)"`` / ``"[secret]"`` are accepted for
any type and counted in ``unchecked_values``; results are :class:`ValidationResult` values.
What the schema cannot say (name syntax, port ranges, cross-field rules the API server's Go
validation enforces) is not checked here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from importlib import resources
from typing import Any, Final

import jsonschema  # type: ignore[import-untyped]  # no stubs pinned
import referencing
from jsonschema.exceptions import ValidationError as SchemaError  # type: ignore[import-untyped]

from .crd import (
    Outcome,
    ValidationResult,
    Violation,
    _is_marker,
    _json_type,
    _show,
    format_path,
)
from .markers import MARKERS

GKE_NEWEST_MINOR: Final = "1.37"
"""Newest Kubernetes minor GKE serves, as of the GKE release notes' "Current versions" table
(Rapid channel "Available minor versions 1.34 to 1.37";
https://cloud.google.com/kubernetes-engine/docs/release-notes), and the newest
kubernetes-validate 1.37.0 ships.  Used when the stack does not pin ``minMasterVersion``."""

_SCHEMA_ROOT: Final = "kubernetes-json-schema"
# Compiled validators kept: every built-in kind of one minor (about 100) several times over; an
# (apiVersion, kind) a hostile program makes up costs a slot, never unbounded memory.
_VALIDATORS: Final = 512
_MINOR = re.compile(r"^v?(\d+)\.(\d+)")
# kubernetes-validate names files by the group's first label: rbac.authorization.k8s.io/v1 -> rbac-v1.
_GROUP_SUFFIX = re.compile(r"^([^./]*)(?:\.[^/]*)?/")
# What an apiVersion and a kind may look like; anything else never names a schema file.
_API_VERSION = re.compile(r"([a-z0-9][a-z0-9.-]*/)?v[0-9]+[a-z0-9]*")
_KIND = re.compile(r"[A-Za-z][A-Za-z0-9]*")


@dataclass(frozen=True)
class KubernetesMinor:
    """The minor version objects are validated against, and where it came from (for output)."""

    minor: str
    source: str

    def __str__(self) -> str:
        return f"Kubernetes {self.minor} ({self.source})"


@cache
def shipped_minors() -> tuple[str, ...]:
    """Minor versions kubernetes-validate ships strict schemas for, oldest first."""
    root = resources.files("kubernetes_validate").joinpath(_SCHEMA_ROOT)
    found = {
        m.group(0).lstrip("v")
        for p in root.iterdir()
        if p.name.endswith("-local-strict") and (m := _MINOR.match(p.name))
    }
    return tuple(sorted(found, key=lambda v: tuple(int(x) for x in v.split("."))))


def _as_tuple(minor: str) -> tuple[int, int]:
    major, _, rest = minor.partition(".")
    return int(major), int(rest)


def kubernetes_minor(min_master_version: str | None) -> KubernetesMinor:
    """The minor to validate against for a cluster pinned to ``min_master_version`` (or not)."""
    shipped = shipped_minors()
    text = (min_master_version or "").strip()
    match = _MINOR.match(text)
    if match is None:
        if text in MARKERS:
            why = "minMasterVersion unknown until deploy"
        else:
            why = f"minMasterVersion {text!r} names no minor" if text else "no minMasterVersion"
        return KubernetesMinor(GKE_NEWEST_MINOR, f"{why}: the newest minor GKE serves")
    wanted = f"{match.group(1)}.{match.group(2)}"
    if wanted in shipped:
        return KubernetesMinor(wanted, f"the cluster's minMasterVersion {text}")
    older = [m for m in shipped if _as_tuple(m) <= _as_tuple(wanted)]
    chosen = older[-1] if older else shipped[0]
    return KubernetesMinor(
        chosen, f"the cluster's minMasterVersion {text}; kubernetes-validate ships no {wanted} schema"
    )


def _schema_name(api_version: str, kind: str) -> str:
    """kubernetes-validate's file name: ``rbac.authorization.k8s.io/v1`` Role -> ``role-rbac-v1.json``."""
    group_version = _GROUP_SUFFIX.sub(r"\1-", api_version)
    return f"{kind.lower()}-{group_version}.json"


_DEFINITIONS_ID: Final = "https://kubernetes.io/api/_definitions.json"  # its own $id


@cache
def _definitions_document(minor: str) -> Mapping[str, Any]:
    directory = resources.files("kubernetes_validate").joinpath(_SCHEMA_ROOT, f"v{minor}.0-local-strict")
    document: Mapping[str, Any] = json.loads(
        directory.joinpath("_definitions.json").read_text(encoding="utf-8")
    )
    return document


@cache
def _registry(minor: str) -> referencing.Registry[Any]:
    return referencing.Resource.from_contents(_definitions_document(minor)) @ referencing.Registry()


def _definitions(minor: str) -> Mapping[str, Any]:
    """The minor's shared ``$defs`` (what every kind's ``$ref`` points into), by definition name."""
    defs = _definitions_document(minor).get("$defs")
    return defs if isinstance(defs, Mapping) else {}


@cache
def _partial_class(minor: str) -> Any:
    """Draft 2020-12 as the API server judges a server-side apply patch (see :func:`_validator`)."""

    def no_required(_v: Any, _required: Any, _instance: Any, _schema: Any) -> Iterator[SchemaError]:
        return iter(())

    def list_map_keys(_v: Any, keys: Any, instance: Any, schema: Any) -> Iterator[SchemaError]:
        if schema.get("x-kubernetes-list-type") != "map" or not isinstance(instance, list):
            return
        item = _resolve(minor, schema.get("items"))
        needed = [k for k in keys if isinstance(k, str) and k in (item.get("required") or ())]
        for index, element in enumerate(instance):
            if not isinstance(element, Mapping):
                continue  # the items schema's own type check reports it
            missing = [k for k in needed if k not in element]
            if missing:
                yield SchemaError(
                    "associative list key missing",
                    validator="required",
                    validator_value=missing,
                    instance=element,
                    path=[index],
                )

    return jsonschema.validators.extend(
        jsonschema.Draft202012Validator,
        {"required": no_required, "x-kubernetes-list-map-keys": list_map_keys},
    )


def _resolve(minor: str, schema: Any) -> Mapping[str, Any]:
    """An ``items`` schema with its ``$ref`` into ``_definitions.json`` followed (one level)."""
    if not isinstance(schema, Mapping):
        return {}
    ref = schema.get("$ref")
    if isinstance(ref, str) and "#/$defs/" in ref:
        found = _definitions(minor).get(ref.rsplit("/", 1)[-1])
        return found if isinstance(found, Mapping) else {}
    return schema


@lru_cache(maxsize=_VALIDATORS)
def _validator(
    minor: str, api_version: str, kind: str, partial: bool = False
) -> jsonschema.protocols.Validator | None:
    """One compiled validator per (minor, apiVersion, kind, partial), or None when no schema exists.

    ``partial`` judges a server-side apply patch (pulumi-kubernetes' ``<Kind>Patch`` resources,
    :meth:`CoreValidator.validate`): a partial object, so ``required`` is dropped at every level,
    while types, enums, formats and undeclared fields are still checked (the API server decodes the
    patch by the kind's schema: structured-merge-diff ``typed.AsTyped`` refuses a wrong type or an
    undeclared field before merging).  One exception: an item of an associative list
    (``x-kubernetes-list-type: map``) must carry the list-map keys its item schema requires.  The
    keys are what matches it to an existing item (kubernetes-sigs/structured-merge-diff
    ``typed/helpers.go`` ``keyedAssociativeListItemToPathElement``, v4.7.0 through v6.4.2), and
    every existing item has a required key, so an item without one can only be added as a new item,
    which then lacks a required field and the API server refuses the merged object (before v6.3.0,
    structured-merge-diff refuses it outright: "omits key field").  Keys the item schema does not
    require (``protocol`` of a container port, defaulted by the server) are not demanded.
    """
    if not (_API_VERSION.fullmatch(api_version) and _KIND.fullmatch(kind)):
        return None
    path = resources.files("kubernetes_validate").joinpath(
        _SCHEMA_ROOT, f"v{minor}.0-local-strict", _schema_name(api_version, kind)
    )
    if not path.is_file():
        return None
    schema = json.loads(path.read_text(encoding="utf-8"))
    if schema.get("x-kubernetes-group-version-kind") is None and "apiVersion" not in (
        schema.get("properties") or {}
    ):
        return None  # a fragment such as affinity-v1.json, not a top-level kind
    registry = referencing.Resource.from_contents(schema) @ _registry(minor)
    cls = _partial_class(minor) if partial else jsonschema.Draft202012Validator
    validator: jsonschema.protocols.Validator = cls(schema, registry=registry)
    return validator


@lru_cache(maxsize=_VALIDATORS)
def definition_validator(minor: str, definition: str) -> jsonschema.protocols.Validator | None:
    """A validator for one shared definition of the minor's schema (``io.k8s...JSONSchemaProps``),
    for a value the kind's schema leaves untyped; None when the minor has no such definition."""
    if definition not in _definitions(minor):
        return None
    schema = {"$ref": f"{_DEFINITIONS_ID}#/$defs/{definition}"}
    validator: jsonschema.protocols.Validator = jsonschema.Draft202012Validator(
        schema, registry=_registry(minor)
    )
    return validator


def violations_of(error: SchemaError) -> list[Violation]:
    """:func:`_violations` of one error of a :func:`definition_validator` (values shown)."""
    return list(_violations(error, reveal=True))


def has_schema(api_version: str, kind: str, minor: str = GKE_NEWEST_MINOR) -> bool:
    """Whether the minor's OpenAPI schema defines this built-in kind."""
    return _validator(minor, api_version, kind) is not None


def _count_markers(value: Any) -> int:
    if isinstance(value, str):
        return int(value in MARKERS)
    if isinstance(value, Mapping):
        return sum(_count_markers(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count_markers(v) for v in value)
    return 0


def _hidden(_value: Any) -> str:
    return "(value hidden: Secret)"


def _violations(error: SchemaError, reveal: bool) -> Iterable[Violation]:
    """Readable violations for one jsonschema error (markers already excluded).

    ``reveal`` False (a Secret) keeps values out of the message: secrets never reach output.
    """
    show = _show if reveal else _hidden
    path = list(error.absolute_path)
    keyword = error.validator
    if keyword == "additionalProperties" and isinstance(error.instance, Mapping):
        declared = set((error.schema.get("properties") or {}) if isinstance(error.schema, Mapping) else ())
        for key in error.instance:
            if key not in declared:
                yield Violation(format_path([*path, key]), "field not declared in the Kubernetes schema")
        return
    if (
        keyword == "required"
        and isinstance(error.validator_value, list)
        and isinstance(error.instance, Mapping)
    ):
        for key in error.validator_value:
            if key not in error.instance:
                yield Violation(format_path([*path, key]), "required field missing")
        return
    if keyword == "type":
        wanted = error.validator_value
        wanted_text = "/".join(t for t in wanted if t != "null") if isinstance(wanted, list) else str(wanted)
        yield Violation(
            format_path(path),
            f"expected {wanted_text}, got {_json_type(error.instance)} {show(error.instance)}",
        )
        return
    if keyword == "enum":
        allowed = ", ".join(_show(e) for e in error.validator_value if e is not None)
        yield Violation(
            format_path(path), f"unsupported value {show(error.instance)}; supported values: {allowed}"
        )
        return
    if keyword == "oneOf" and error.context:
        # int-or-string and friends: name the alternatives rather than dump the instance.
        kinds = sorted({str(sub.validator_value) for sub in error.context if sub.validator == "type"})
        if kinds:
            yield Violation(
                format_path(path),
                f"got {_json_type(error.instance)} {show(error.instance)}, expected one of {', '.join(kinds)}",
            )
            return
    message = error.message if reveal else f"fails the schema's {keyword} rule (value hidden: Secret)"
    message = message if len(message) <= 160 else message[:157] + "..."
    yield Violation(format_path(path), message)


class CoreValidator:
    """Validates built-in objects against one Kubernetes minor's strict OpenAPI schema."""

    def __init__(self, minor: KubernetesMinor | str = GKE_NEWEST_MINOR) -> None:
        self.minor = minor if isinstance(minor, KubernetesMinor) else KubernetesMinor(minor, "given")
        if self.minor.minor not in shipped_minors():
            raise ValueError(f"kubernetes-validate ships no schema for Kubernetes {self.minor.minor}")

    def validate(self, obj: Mapping[str, Any], patch: bool = False) -> ValidationResult:
        """Validate one object; ``NO_SCHEMA`` when the minor's OpenAPI document lacks the kind.

        ``patch``: ``obj`` is a server-side apply patch of an object of its kind (pulumi-kubernetes'
        ``<Kind>Patch`` resources; pulumi/pulumi-kubernetes ``provider/pkg/kinds/util.go``
        ``IsPatchResource``, v4.32.0).  Its docs: "The name of the resource must be specified, but
        all other properties are optional", and the provider's ``Check`` refuses a patch without
        ``.metadata.name`` (``provider/pkg/provider/provider.go``): so nothing is required but
        the name, and the rest is judged as :func:`_validator` ``partial`` says.
        """
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
        assert isinstance(meta, Mapping)
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        name = meta.get("name") if isinstance(meta.get("name"), str) else ""
        namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else None
        base = ValidationResult(
            api_version=api_version if isinstance(api_version, str) else "",
            kind=kind if isinstance(kind, str) else "",
            name=str(name),
            namespace=namespace,
            outcome=Outcome.VALID,
        )
        if not (isinstance(api_version, str) and api_version and isinstance(kind, str) and kind):
            missing = tuple(
                Violation(key, "required field missing (a string)")
                for key, value in (("apiVersion", api_version), ("kind", kind))
                if not (isinstance(value, str) and value)
            )
            return replace(base, outcome=Outcome.INVALID, violations=missing)
        validator = _validator(self.minor.minor, api_version, kind, patch)
        if validator is None:
            return replace(
                base,
                outcome=Outcome.NO_SCHEMA,
                note=f"no {api_version} {kind} in the Kubernetes {self.minor.minor} OpenAPI schema",
            )
        memo = _memo(self.minor.minor)
        prefix = "patch:" if patch else ""
        # The identity key first: cheap, and it already joins a thousand teams' Roles; the
        # schema's key (a walk of the whole object) only when it misses.
        quick = prefix + _identity_key(obj, meta)
        found = memo.get(quick)
        if found is None:
            key = prefix + "shape:" + _memo_key(self.minor.minor, validator.schema, obj)
            found = memo.get(key)
            if found is None:
                found = _check(validator, obj)
            if len(memo) >= _MEMO_LIMIT:
                memo.clear()
            memo[key] = memo[quick] = found
        violations, unchecked = found
        if patch and not (isinstance(meta.get("name"), str) and meta.get("name")):
            # Outside the memo: its key stands in for every name string, the empty one included.
            unnamed = Violation(
                "metadata.name", "required field missing: a patch names the object it patches"
            )
            violations = tuple(sorted((*violations, unnamed), key=lambda v: v.path))
        return replace(
            base,
            outcome=Outcome.INVALID if violations else Outcome.VALID,
            schema=f"kubernetes {self.minor.minor} {api_version}",
            violations=violations,
            unchecked_values=unchecked,
        )


_MEMO_LIMIT: Final = 8192
_STAND_IN: Final = "name"
# Schema keywords the validator does not act on for a value's contents: jsonschema ignores the
# ``x-kubernetes-*`` extensions (the partial class's list-map-keys rule reads only which keys an
# item has), ``format`` is an annotation when no format checker is given (Draft 2020-12), and a
# kind's ``$schema`` and ``$id`` only name the dialect and the document.
_INERT: Final = frozenset({"description", "format", "$schema", "$id"})
_OBJECT_KEYWORDS: Final = frozenset({"type", "properties", "additionalProperties", "required"})
_ARRAY_KEYWORDS: Final = frozenset({"type", "items"})


@cache
def _memo(minor: str) -> dict[str, tuple[tuple[Violation, ...], int]]:
    """Verdicts per object shape, per minor: a thousand teams' identical Roles cost one check."""
    return {}


def _identity_key(obj: Mapping[str, Any], meta: Mapping[str, Any]) -> str:
    """The object as JSON with its identity strings replaced by the stand-in: a special case of
    :func:`_memo_key` (ObjectMeta's ``name``, ``namespace``, ``generateName`` and label and
    annotation values are plain strings in every kind's schema), without the walk."""
    if not isinstance(obj.get("metadata"), Mapping):
        return json.dumps(obj, sort_keys=True, default=repr)
    shown = {key: _identity(meta[key]) for key in ("name", "namespace", "generateName") if key in meta}
    for key in ("labels", "annotations"):
        if isinstance(meta.get(key), Mapping):
            shown[key] = {k: _identity(v) for k, v in meta[key].items()}
    return json.dumps({**obj, "metadata": {**meta, **shown}}, sort_keys=True, default=repr)


def _identity(value: Any) -> Any:
    return _STAND_IN if isinstance(value, str) and value not in MARKERS else value


def _memo_key(minor: str, schema: Mapping[str, Any], obj: Mapping[str, Any]) -> str:
    """The object as JSON, with every string its schema cannot refuse replaced by a stand-in.

    A string is stood in for where the kind's schema (``$ref`` followed) says only "a string":
    ``type`` string and nothing but :data:`_INERT` keywords beside it -- no ``enum``, no
    ``oneOf``.  Then any two strings there get the same verdict from the validator: ObjectMeta's
    names and label values, a ValidatingAdmissionPolicy's CEL expressions, a binding's policy
    name (a thousand teams' objects differ only there).  The walk goes down only through objects
    and arrays whose schema holds nothing else that reads values (:data:`_OBJECT_KEYWORDS`,
    :data:`_ARRAY_KEYWORDS`) and where the value has the type the schema asks for; anywhere else
    the value is kept as it is, as are keys, markers and non-strings, since they change the verdict.
    So the shared verdict's messages are the object's own too: where the walk went, the only
    errors possible are missing and undeclared fields (:func:`_violations` names their keys,
    never a value), and elsewhere the key holds the object's own strings.
    """
    return json.dumps(_shape(minor, schema, obj), sort_keys=True, default=repr)


@dataclass(frozen=True, slots=True)
class _Node:
    """What the key's walk does at one schema node (see :func:`_memo_key`)."""

    stands_in_strings: bool
    descends_objects: bool
    descends_arrays: bool
    properties: Mapping[str, Any]
    extra: Any  # additionalProperties
    items: Any


_NODES_LIMIT: Final = 100_000


@cache
def _nodes(minor: str) -> dict[int, tuple[Any, _Node | None]]:
    """_Node per schema node of one minor, by the node's identity (each entry keeps its node alive,
    so an id is never reused while cached); cleared at :data:`_NODES_LIMIT` entries, since a kind's
    schema is loaded again when its validator has left ``_validator``'s cache."""
    return {}


def _keywords(node: Mapping[str, Any]) -> set[str]:
    return {k for k in node if k not in _INERT and not k.startswith("x-kubernetes-")}


def _followed(minor: str, schema: Any) -> Mapping[str, Any] | None:
    """``schema`` with a bare ``$ref`` into the minor's definitions followed; None when it is
    anything the walk does not read (a ``$ref`` beside other keywords, a reference elsewhere)."""
    for _ in range(8):
        if not isinstance(schema, Mapping):
            return None
        if "$ref" not in schema:
            return schema
        ref = schema["$ref"]
        if _keywords(schema) != {"$ref"} or not (isinstance(ref, str) and "#/$defs/" in ref):
            return None
        schema = _resolve(minor, schema) or None  # {}: no such definition
    return None


def _admits(node: Mapping[str, Any], kind: str) -> bool:
    """Whether the node's ``type`` (when it has one) allows a JSON ``kind``: the walk descends only
    where the value's own type is what the schema asks for, so no type error lies below it."""
    declared = node.get("type")
    if declared is None:
        return True
    if isinstance(declared, str):
        return declared == kind
    return isinstance(declared, list) and kind in declared


def _node(minor: str, schema: Any) -> _Node | None:
    nodes = _nodes(minor)
    hit = nodes.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    found = _followed(minor, schema)
    node = None
    if found is not None:
        keywords = _keywords(found)
        properties = found.get("properties")
        node = _Node(
            stands_in_strings=keywords == {"type"} and _admits(found, "string"),
            descends_objects=keywords <= _OBJECT_KEYWORDS and _admits(found, "object"),
            descends_arrays=keywords <= _ARRAY_KEYWORDS and _admits(found, "array"),
            properties=properties if isinstance(properties, Mapping) else {},
            extra=found.get("additionalProperties"),
            items=found.get("items"),
        )
    if len(nodes) >= _NODES_LIMIT:
        nodes.clear()
    nodes[id(schema)] = (schema, node)
    return node


def _shape(minor: str, schema: Any, value: Any) -> Any:
    node = _node(minor, schema)
    if node is None:
        return value
    if isinstance(value, str):
        return _STAND_IN if node.stands_in_strings and value not in MARKERS else value
    if isinstance(value, Mapping):
        if not node.descends_objects:
            return value
        properties, extra = node.properties, node.extra
        return {
            key: _shape(minor, properties.get(key, extra), item) if isinstance(item, _WALKED) else item
            for key, item in value.items()
        }
    if isinstance(value, list):
        if not node.descends_arrays:
            return value
        items = node.items
        return [_shape(minor, items, item) if isinstance(item, _WALKED) else item for item in value]
    return value


# What the walk can change: numbers, booleans and nulls are kept as they are.
_WALKED: Final = (str, Mapping, list)


def _check(validator: Any, obj: Mapping[str, Any]) -> tuple[tuple[Violation, ...], int]:
    violations: list[Violation] = []
    for error in validator.iter_errors(obj):
        if _is_marker(error.instance):
            continue
        violations.extend(_violations(error, reveal=obj.get("kind") != "Secret"))
    violations.sort(key=lambda v: v.path)
    return tuple(violations), _count_markers(obj)
