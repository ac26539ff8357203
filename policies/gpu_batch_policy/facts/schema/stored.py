"""A custom resource as the API server holds it when it validates: nulls pruned, defaults applied.

Why: the pack judged the object as written, so an explicit ``null`` the server drops was a
finding, and a field the server defaults was judged absent (issue 42 item 3).  The server's order
(kubernetes/apiextensions-apiserver v0.37.2, ``k8s.io/apiextensions-apiserver@v0.37.2`` from the
Go module proxy):

1. decode, then ``pkg/apiserver/customresource_handler.go`` ``unstructuredSchemaCoercer.apply``:
   ``structuralpruning.PruneWithOptions`` (unknown fields: the pack reports those itself, as
   strict field validation refuses them) and then
   ``structuraldefaulting.PruneNonNullableNullsWithoutDefaults``
   (``pkg/apiserver/schema/defaulting/prunenulls.go``): a ``null`` under a property (or an
   ``additionalProperties`` key) whose schema is neither ``nullable`` nor has a ``default`` is
   deleted; list items are never deleted;
2. ``unstructuredDefaulter.Default`` -> ``structuraldefaulting.Default``
   (``pkg/apiserver/schema/defaulting/algorithm.go``): every property with a ``default`` that is
   absent, or a non-nullable ``null``, gets a deep copy of the default; a non-nullable ``null``
   list item or ``additionalProperties`` value with a default gets it too; then recursively;
3. only then ``pkg/registry/customresource/strategy.go`` ``customResourceStrategy.Validate``
   (the OpenAPI schema, ObjectMeta, list types, CEL rules) judges the result.

Tests: ``prunenulls_test.go`` ``TestPruneNonNullableNullsWithoutDefaults``, ``algorithm_test.go``
``TestDefault`` (``tests/policies/test_stored_object.py``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any


def _schema(value: Any) -> Mapping[str, Any] | None:
    return value if isinstance(value, Mapping) else None


def _field_schema(key: str, schema: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """``getSchemaForField``: the property's schema, else ``additionalProperties``'."""
    if schema is None:
        return None
    props = _schema(schema.get("properties"))
    if props is not None and key in props:
        return _schema(props[key])
    return _schema(schema.get("additionalProperties"))


def _nullable(schema: Mapping[str, Any]) -> bool:
    return schema.get("nullable") is True


def prune_nulls(value: Any, schema: Mapping[str, Any] | None) -> None:
    """``PruneNonNullableNullsWithoutDefaults``, in place."""
    if isinstance(value, dict):
        for key in list(value):
            sub = _field_schema(key, schema)
            if value[key] is None and sub is not None and not _nullable(sub) and "default" not in sub:
                del value[key]
            else:
                prune_nulls(value[key], sub)
    elif isinstance(value, list):
        items = _schema(schema.get("items")) if schema is not None else None
        for item in value:
            prune_nulls(item, items)


def apply_defaults(value: Any, schema: Mapping[str, Any] | None) -> None:
    """``structuraldefaulting.Default``, in place."""
    if schema is None:
        return
    if isinstance(value, dict):
        props = _schema(schema.get("properties")) or {}
        for key, raw_prop in props.items():
            prop = _schema(raw_prop)
            if prop is None or "default" not in prop:
                continue
            if key not in value or (value[key] is None and not _nullable(prop)):
                value[key] = copy.deepcopy(prop["default"])
        additional = _schema(schema.get("additionalProperties"))
        for key in list(value):
            if key in props:
                apply_defaults(value[key], _schema(props[key]))
            elif additional is not None:
                if value[key] is None and not _nullable(additional) and "default" in additional:
                    value[key] = copy.deepcopy(additional["default"])
                apply_defaults(value[key], additional)
    elif isinstance(value, list):
        items = _schema(schema.get("items"))
        for index, item in enumerate(value):
            if item is None and items is not None and not _nullable(items) and "default" in items:
                value[index] = copy.deepcopy(items["default"])
            apply_defaults(value[index], items)


def as_stored(obj: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``obj`` after the server's null pruning and defaulting, ready to validate."""
    out = copy.deepcopy(dict(obj))
    prune_nulls(out, schema)
    apply_defaults(out, schema)
    return out
