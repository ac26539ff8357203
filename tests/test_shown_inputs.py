"""``shown_inputs``: one display form per record, shared by ``plan.json`` and ``manifests.yaml``."""

from __future__ import annotations

import dataclasses

from preview.records import UNKNOWN_SENTINEL, RecordedResource, for_display, shown_inputs, sorted_maps


def _record(inputs: dict[str, object]) -> RecordedResource:
    return RecordedResource("urn:a", "kubernetes:core/v1:ConfigMap", "a", "", "", True, inputs, {})


def test_the_display_form_sorted_once_per_record() -> None:
    record = _record({"z": 1.0, "a": UNKNOWN_SENTINEL, "m": {"y": [2.0], "b": "x"}})
    shown = shown_inputs(record)
    assert shown == sorted_maps(for_display(record.inputs))
    assert list(shown) == ["a", "m", "z"] and shown["z"] == 1 and isinstance(shown["z"], int)
    assert shown_inputs(record) is shown


def test_another_record_with_other_inputs_is_shown_afresh() -> None:
    record = _record({"a": 1})
    first = shown_inputs(record)
    other = dataclasses.replace(record, inputs={"a": 2})
    assert shown_inputs(other) == {"a": 2}
    assert shown_inputs(record) is first
