"""A custom resource is judged as the API server stores it: nulls pruned, then defaulted (issue 42 item 3).

Tables from kubernetes/apiextensions-apiserver v0.37.2 ``pkg/apiserver/schema/defaulting/
prunenulls_test.go`` ``TestPruneNonNullableNullsWithoutDefaults`` and ``algorithm_test.go``
``TestDefault`` (structural schemas written as the OpenAPI they come from); then the whole
validator (``facts.schema.crd``) on a Kueue ClusterQueue, where an explicit ``null`` was a false
alarm before (``customresource_handler.go`` ``unstructuredSchemaCoercer.apply`` prunes it before
``customResourceStrategy.Validate``).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from gpu_batch_policy.facts.schema.stored import apply_defaults, prune_nulls

from preview.crd_validation import Outcome, validate_object
from tests.test_crd_validation import cluster_queue_v1beta2

PRUNE_ITEMS = {
    "items": {
        "properties": {
            "a": {"default": "A"},
            "b": {"nullable": True},
            "c": {"default": "C", "nullable": True},
            "d": {},
        }
    }
}


@pytest.mark.parametrize(
    ("doc", "schema", "expected"),
    [
        ("null", None, "null"),
        ("4", {"default": "foo"}, "4"),
        ("[1,null]", None, "[1,null]"),
        (
            '[{"a":null},{"b":null},{"c":null},{"d":null},{"e":null}]',
            PRUNE_ITEMS,
            '[{"a":null},{"b":null},{"c":null},{},{"e":null}]',
        ),
    ],
)
def test_prune_non_nullable_nulls_without_defaults(doc: str, schema: Any, expected: str) -> None:
    value = json.loads(doc)
    prune_nulls(value, schema)
    assert value == json.loads(expected)


ABC = {"items": {"properties": {"a": {"default": "A"}, "b": {"default": "B"}, "c": {"default": "C"}}}}
NESTED = {
    "properties": {
        "array": {"items": {"properties": {"a": {"default": "A"}, "b": {"default": "B"}}}},
        "object": {"properties": {"a": {"default": "N"}, "b": {"default": "O"}}},
        "additionalProperties": {
            "additionalProperties": {"properties": {"a": {"default": "alpha"}, "b": {"default": "beta"}}}
        },
        "foo": {"default": "bar"},
    }
}
A_ITEMS = {"items": {"properties": {"a": {"default": "A"}}}}


@pytest.mark.parametrize(
    ("doc", "schema", "expected"),
    [
        ("null", None, "null"),
        ("4", {"default": "foo"}, "4"),
        ("[1,2]", {"items": {"default": "foo"}}, "[1,2]"),
        (
            '[{"a":1},{"b":1},{"c":1}]',
            ABC,
            '[{"a":1,"b":"B","c":"C"},{"a":"A","b":1,"c":"C"},{"a":"A","b":"B","c":1}]',
        ),
        (
            '{"array":[{"a":1},{"b":2}],"object":{"a":1},"additionalProperties":{"x":{"a":1},"y":{"b":2}}}',
            NESTED,
            '{"array":[{"a":1,"b":"B"},{"a":"A","b":2}],"object":{"a":1,"b":"O"},'
            '"additionalProperties":{"x":{"a":1,"b":"beta"},"y":{"a":"alpha","b":2}},"foo":"bar"}',
        ),
        (
            '[{},{"a":1},{"a":0},{"a":0.0},{"a":""},{"a":null},{"a":[]},{"a":{}}]',
            A_ITEMS,
            '[{"a":"A"},{"a":1},{"a":0},{"a":0.0},{"a":""},{"a":"A"},{"a":[]},{"a":{}}]',
        ),
        ("[null]", {"nullable": True, **A_ITEMS}, "[null]"),
        ("[null]", {"items": {"default": "A"}}, '["A"]'),
        ('{"a": null}', {"properties": {"a": {"nullable": True, "default": "A"}}}, '{"a": null}'),
        ('{"a": null}', {"properties": {"a": {"default": "A"}}}, '{"a": "A"}'),
    ],
)
def test_default(doc: str, schema: Any, expected: str) -> None:
    value = json.loads(doc)
    apply_defaults(value, schema)
    assert value == json.loads(expected)


def _with(path: list[str | int], value: Any) -> dict[str, Any]:
    obj = copy.deepcopy(cluster_queue_v1beta2())
    node: Any = obj
    for seg in path[:-1]:
        node = node[seg]
    node[path[-1]] = value
    return obj


def test_an_explicit_null_the_server_prunes_is_no_finding() -> None:
    """A null ``admissionChecksStrategy`` or ``borrowingLimit`` is deleted before validation."""
    assert validate_object(_with(["spec", "admissionChecksStrategy"], None)).outcome is Outcome.VALID
    quota: list[str | int] = ["spec", "resourceGroups", 0, "flavors", 0, "resources", 0, "borrowingLimit"]
    assert validate_object(_with(quota, None)).outcome is Outcome.VALID


def test_rules_judge_the_pruned_object() -> None:
    """``cohortName: null`` is pruned, so the CRD's CEL rule sees no cohort and refuses the
    borrowingLimit the object still sets, as the server does."""
    result = validate_object(_with(["spec", "cohortName"], None))
    assert [v.message for v in result.violations] == [
        "Invalid value: borrowingLimit must be nil when cohort is empty"
    ]


def test_a_null_required_field_is_missing_once_pruned() -> None:
    """Pruned, a required field without a default is absent: the server says "Required value"."""
    flavor: list[str | int] = ["spec", "resourceGroups", 0, "flavors", 0, "name"]
    result = validate_object(_with(flavor, None))
    assert result.outcome is Outcome.INVALID
    assert [v.message for v in result.violations if v.path.endswith("flavors[0].name")] == [
        "required field missing"
    ]


def test_a_null_list_item_is_still_refused() -> None:
    result = validate_object(_with(["spec", "resourceGroups", 0, "coveredResources", 0], None))
    assert result.outcome is Outcome.INVALID
    assert any("null is not allowed" in v.message for v in result.violations)


def test_defaults_are_applied_before_validation() -> None:
    """A null with a default takes the default (``queueingStrategy`` defaults to BestEffortFIFO),
    so the enum check passes; the object written is not changed."""
    obj = _with(["spec", "queueingStrategy"], None)
    assert validate_object(obj).outcome is Outcome.VALID
    assert obj["spec"]["queueingStrategy"] is None
