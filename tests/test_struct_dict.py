"""``gpu_batch_policy.primitives.struct_dict.struct_to_dict`` answers exactly as ``json_format.MessageToDict``.

Compared value for value, type for type and key for key (map order) on every registration of
every repo stack, and on hand-built maps holding each kind of ``Value`` -- including a ``Value``
with no kind set and the numbers JSON cannot hold, which must fail with the printer's own error.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from google.protobuf import json_format, struct_pb2
from gpu_batch_policy.primitives.struct_dict import struct_to_dict

from tests.stack_runner import ROOT, unedited_run

STACKS = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in ROOT.glob("Pulumi.*.yaml"))


def _same(ours: Any, theirs: Any, where: str = "") -> None:
    """Equal, of the same type at every node, with dict keys in the same order."""
    assert type(ours) is type(theirs), f"{where}: {type(ours).__name__} != {type(theirs).__name__}"
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs), f"{where}: key order"
        for key in theirs:
            _same(ours[key], theirs[key], f"{where}.{key}")
    elif isinstance(theirs, list):
        assert len(ours) == len(theirs), f"{where}: length"
        for index, (mine, other) in enumerate(zip(ours, theirs, strict=True)):
            _same(mine, other, f"{where}[{index}]")
    elif isinstance(theirs, float):
        assert repr(ours) == repr(theirs), where  # -0.0 and 0.0 compare equal; their reprs do not
    else:
        assert ours == theirs, where


def _struct(props: dict[str, Any]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(props)
    return struct


@pytest.mark.parametrize("stack", STACKS)
def test_every_registration_of_every_repo_stack_reads_as_message_to_dict(stack: str) -> None:
    compared = 0
    for record in unedited_run(stack).resources:
        for wire in (record.wire_inputs, record.wire_outputs):
            if not wire:
                continue
            struct = struct_pb2.Struct.FromString(wire)
            _same(struct_to_dict(struct), json_format.MessageToDict(struct), record.urn)
            compared += 1
    assert compared > 0


def test_each_kind_of_value_reads_as_message_to_dict() -> None:
    struct = _struct(
        {
            "text": "naïve ✓",
            "empty": "",
            "whole": 3,
            "fraction": -2.5,
            "negative zero": -0.0,
            "past 2**53": float(2**53 + 1),
            "tiny": 5e-324,
            "yes": True,
            "no": False,
            "nothing": None,
            "list": [1, "two", None, False, [], {}, [[{"deep": [None]}]]],
            "map": {"z": 1, "a": {"b": {"c": "d"}}, "": "empty key"},
            "empty map": {},
            "empty list": [],
        }
    )
    struct.fields["unset"]  # a map read inserts a Value with no kind set
    struct.fields["list"].list_value.values.add()  # and a list item with no kind set
    ours, theirs = struct_to_dict(struct), json_format.MessageToDict(struct)
    _same(ours, theirs)
    assert ours["unset"] is None and ours["list"][-1] is None


def test_a_struct_whose_keys_were_inserted_out_of_order_keeps_the_maps_order() -> None:
    struct = _struct({key: index for index, key in enumerate("qwertyuiopasdfghjklzxcvbnm")})
    _same(struct_to_dict(struct), json_format.MessageToDict(struct))


@pytest.mark.parametrize("number", [math.inf, -math.inf, math.nan])
def test_a_number_json_cannot_hold_fails_as_message_to_dict_fails(number: float) -> None:
    struct = _struct({"outer": {"list": [1, number]}})
    with pytest.raises(ValueError) as theirs:
        json_format.MessageToDict(struct)
    with pytest.raises(ValueError) as ours:
        struct_to_dict(struct)
    assert str(ours.value) == str(theirs.value)
