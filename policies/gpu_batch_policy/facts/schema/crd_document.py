"""A CustomResourceDefinition's own schema tree, typed all the way down.

Why: the OpenAPI schema of ``apiextensions.k8s.io/v1`` types ``JSONSchemaProps`` strictly, but the
two fields that may hold either a schema or something else, ``items`` (``JSONSchemaPropsOrArray``)
and ``additionalProperties`` / ``additionalItems`` (``JSONSchemaPropsOrBool``), have no type in
it, so everything below the first ``items`` of a CRD went unchecked: ``maxLength: "316"`` or
``type: {..}`` in a list's item schema passed ``builtin-object-schema``, and kube-apiserver v1.37.2
refuses the CRD outright ("cannot be handled as a CustomResourceDefinition: json: cannot unmarshal
... into Go struct field JSONSchemaProps", found by the pack-vs-server differential, issue 41).
The API server decodes them by their Go types (apiextensions-apiserver v0.37.2
``pkg/apis/apiextensions/v1/marshal.go`` ``JSONSchemaPropsOrArray.UnmarshalJSON`` -- a schema
object or a list of them -- and ``JSONSchemaPropsOrBool.UnmarshalJSON`` -- a boolean or a
schema object), so each schema found there is judged here as ``JSONSchemaProps``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from .core import definition_validator, violations_of
from .crd import Violation, format_path

JSON_SCHEMA_PROPS: Final = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"
_SCHEMA_MAPS: Final = ("properties", "patternProperties", "definitions")
_SCHEMA_LISTS: Final = ("allOf", "anyOf", "oneOf")
_OR_BOOL: Final = ("additionalProperties", "additionalItems")
Path = list[str | int]


def _untyped(root: Mapping[str, Any], base: Path) -> Iterator[tuple[Path, Any, str]]:
    """(path, value, what it must be) of every value in an untyped place of the tree: ``items``
    and the or-bool fields, at any depth."""
    stack: list[tuple[Path, Any]] = [(base, root)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, Mapping):
            continue
        for key in _SCHEMA_MAPS:
            children = node.get(key)
            if isinstance(children, Mapping):
                stack.extend(([*path, key, name], child) for name, child in children.items())
        for key in _SCHEMA_LISTS:
            children = node.get(key)
            if isinstance(children, list):
                stack.extend(([*path, key, i], child) for i, child in enumerate(children))
        if isinstance(node.get("not"), Mapping):
            stack.append(([*path, "not"], node["not"]))
        if "items" in node:
            items = node["items"]
            for i, item in enumerate(items) if isinstance(items, list) else [(None, items)]:
                where = [*path, "items"] if i is None else [*path, "items", i]
                yield where, item, "a schema object or a list of them"
                stack.append((where, item))
        for key in _OR_BOOL:
            if key in node and not isinstance(node[key], bool):
                yield [*path, key], node[key], "a boolean or a schema object"
                stack.append(([*path, key], node[key]))


def _joined(outer: str, inner: str) -> str:
    """``outer`` + a path :func:`.crd.format_path` rendered relative to it."""
    if inner == format_path([]):
        return outer
    return outer + (inner if inner.startswith("[") else f".{inner}")


def nested_schema_violations(minor: str, crd: Mapping[str, Any]) -> list[Violation]:
    """What the API server's decoding refuses in the CRD's schemas below ``items`` and the
    or-bool fields (the rest is the kind's OpenAPI schema's, :mod:`.core`)."""
    validator = definition_validator(minor, JSON_SCHEMA_PROPS)
    spec = crd.get("spec")
    if validator is None or not isinstance(spec, Mapping) or not isinstance(spec.get("versions"), list):
        return []
    out: list[Violation] = []
    for v, version in enumerate(spec["versions"]):
        schema = ((version or {}).get("schema") or {}) if isinstance(version, Mapping) else {}
        root = schema.get("openAPIV3Schema") if isinstance(schema, Mapping) else None
        if not isinstance(root, Mapping):
            continue
        base: Path = ["spec", "versions", v, "schema", "openAPIV3Schema"]
        for path, value, wanted in _untyped(root, base):
            if not isinstance(value, Mapping):
                out.append(Violation(format_path(path), f"expected {wanted}, got {type(value).__name__}"))
                continue
            for error in validator.iter_errors(value):
                for found in violations_of(error):
                    out.append(Violation(_joined(format_path(path), found.path), found.message))
    return out
