"""The harness's echo answers exactly as the SDK's mock monitor would (``preview/harness.py``).

``RecordingMonitor._echo`` skips pulumi's decode/encode round trip for plain property maps of
echoed kinds, and ``RecordingMonitor._unechoed`` for the kinds left unknown (CRDs).  These tests
hold both to the SDK's own answer: on every stack file, each record (inputs, outputs, wire
outputs, the monitor's registration) is the same with them as through
``MockMonitor.RegisterResource``; and for hand-built property maps, ``plain_wire`` only lets
through maps the SDK's round trip gives back unchanged, and refuses each kind of special value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google.protobuf import struct_pb2
from pulumi.output import Unknown
from pulumi.runtime import rpc
from pulumi.runtime.sync_await import _sync_await

import preview.harness
from preview.harness import RecordingMonitor, plain_wire, run_program
from preview.mocks import UNECHOED_TYPES
from preview.records import RecordedResource
from preview.stack_files import load_stack_files
from tests.stack_runner import ROOT

STACKS = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in ROOT.glob("Pulumi.*.yaml"))


def _struct(props: dict[str, Any]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(props)
    return struct


def _sdk_round_trip(struct: struct_pb2.Struct) -> struct_pb2.Struct:
    """What ``MockMonitor.RegisterResource`` answers for a mock that echoes its inputs."""
    return _sync_await(rpc.serialize_properties(rpc.deserialize_properties(struct), {}))


def _by_urn(records: list[RecordedResource]) -> dict[str, tuple[Any, ...]]:
    def view(record: RecordedResource) -> tuple[Any, ...]:
        wire_outputs = struct_pb2.Struct.FromString(record.wire_outputs)
        return (record.type, record.inputs, record.outputs, wire_outputs, record.wire_inputs)

    return {record.urn: view(record) for record in records}


def _comparable(value: Any) -> Any:
    """``value`` with each ``pulumi.output.Unknown`` (which compares by identity) as one marker."""
    if isinstance(value, Unknown):
        return "<unknown>"
    if isinstance(value, dict):
        return {key: _comparable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_comparable(item) for item in value]
    return value


def _registrations(monitor: RecordingMonitor) -> dict[str, tuple[str, Any]]:
    return {urn: (reg.id or "", _comparable(reg.state)) for urn, reg in monitor.resources.items()}


class _AnsweringMonitor(RecordingMonitor):
    """A :class:`RecordingMonitor` that also keeps each answer the program received."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.answers: dict[str, bytes] = {}

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)
        self.answers[response.urn] = response.SerializeToString(deterministic=True)
        return response


class _Monitors:
    """Keeps every monitor the runs create, to compare what each registered and answered."""

    def __init__(self) -> None:
        self.made: list[_AnsweringMonitor] = []

    def __call__(self, *args: Any, **kwargs: Any) -> RecordingMonitor:
        monitor = _AnsweringMonitor(*args, **kwargs)
        self.made.append(monitor)
        return monitor


@pytest.mark.parametrize("stack", STACKS)
def test_every_stack_records_the_same_with_and_without_the_echo(
    stack: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monitors = _Monitors()
    monkeypatch.setattr(preview.harness, "RecordingMonitor", monitors)
    echoed = run_program(ROOT, load_stack_files(ROOT, stack)).resources
    with monkeypatch.context() as sdk_only:
        sdk_only.setattr(preview.harness, "plain_wire", lambda wire: False)
        sdk_only.setattr(preview.harness, "UNECHOED_TYPES", ())
        through_sdk = run_program(ROOT, load_stack_files(ROOT, stack)).resources
    assert _by_urn(echoed) == _by_urn(through_sdk)
    with_echo, without = monitors.made
    assert _registrations(with_echo) == _registrations(without)
    assert with_echo.answers == without.answers
    # Not vacuous: most of a stack's resources take the echo, and every stack has CRDs.
    assert sum(plain_wire(r.wire_inputs) for r in echoed) > len(echoed) // 2
    assert any(r.type in UNECHOED_TYPES for r in echoed)


PLAIN: dict[str, dict[str, Any]] = {
    "scalars": {"name": "a", "count": 3, "ratio": 0.5, "on": True, "off": False, "zero": 0},
    "nested": {"spec": {"containers": [{"name": "c", "args": ["--x", "1"], "ports": [{"port": 80}]}]}},
    "empty containers": {"labels": {}, "items": [], "deep": {"a": {"b": {}}}},
    "null inside a list": {"values": [1, None, "x"]},
    "empty string and unicode": {"s": "", "u": "équipe ✓"},
}

SPECIAL: dict[str, dict[str, Any]] = {
    "null map value": {"a": 1, "b": None},
    "nested null map value": {"spec": {"template": {"x": None}}},
    "null map value in a list's map": {"items": [{"k": None}]},
    "unknown": {"endpoint": rpc.UNKNOWN},
    "secret": {"password": {rpc._special_sig_key: rpc._special_secret_sig, "value": "hunter2"}},
    "resource reference": {
        "ref": {rpc._special_sig_key: rpc._special_resource_sig, "urn": "urn:pulumi:s::p::t::n", "id": "x"}
    },
    "asset": {"code": {rpc._special_sig_key: rpc._special_asset_sig, "text": "print(1)"}},
}


@pytest.mark.parametrize("name", sorted(PLAIN))
def test_plain_maps_take_the_echo_and_the_sdk_gives_them_back_unchanged(name: str) -> None:
    struct = _struct(PLAIN[name])
    assert plain_wire(struct.SerializeToString())
    assert _sdk_round_trip(struct) == struct


@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_each_special_value_is_left_to_the_sdk(name: str) -> None:
    assert not plain_wire(_struct(SPECIAL[name]).SerializeToString())


def test_the_sdk_round_trip_changes_a_map_with_a_null_value() -> None:
    """Why nulls are special: ``deserialize_properties`` drops keys whose value is null."""
    struct = _struct(SPECIAL["nested null map value"])
    assert _sdk_round_trip(struct) != struct


def test_crds_and_the_stack_are_never_echoed() -> None:
    from preview.mocks import echoes
    from preview.replacements import CRD

    assert not echoes(CRD)
    assert not echoes("pulumi:pulumi:Stack")
    assert echoes("kubernetes:core/v1:Namespace")


def test_the_echo_path_is_the_harness_default(tmp_path: Path) -> None:
    """A resource registered by a program takes the echo: its outputs are its own inputs object."""
    (tmp_path / "Pulumi.yaml").write_text("name: echo\nruntime: python\n")
    (tmp_path / "Pulumi.echo.yaml").write_text("config: {}\n")
    (tmp_path / "__main__.py").write_text(
        "import pulumi\npulumi.CustomResource('t:index:R', 'r', {'a': 1, 'b': {'c': [1, 2]}})\n"
    )
    records = run_program(tmp_path, load_stack_files(tmp_path, "echo")).resources
    (record,) = [r for r in records if r.type == "t:index:R"]
    assert record.outputs is record.inputs
    assert record.outputs == {"a": 1, "b": {"c": [1, 2]}}
