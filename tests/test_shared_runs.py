"""``unedited_run`` (tests/stack_runner.py): the same run as a fresh one, and private to each caller.

The skypilot stack file is the cheapest of the repo's to run (~1 s); what is shared is the same
for every stack file.
"""

from __future__ import annotations

from dataclasses import replace

from google.protobuf import struct_pb2

from preview.harness import RunResult
from preview.records import RecordedResource
from tests.stack_runner import config_value, run_stack, shared_unless_edited, unedited_run

STACK = "skypilot"


def _by_urn(run: RunResult) -> dict[str, tuple[RecordedResource, struct_pb2.Struct, struct_pb2.Struct]]:
    """Records by URN with their wire Structs, dependencies sorted: the program registers
    concurrently, so two runs' orders of records and of a record's dependencies may differ."""
    return {
        r.urn: (
            replace(
                r,
                dependencies=sorted(r.dependencies),
                property_dependencies={k: sorted(v) for k, v in r.property_dependencies.items()},
            ),
            struct_pb2.Struct.FromString(r.wire_inputs),
            struct_pb2.Struct.FromString(r.wire_outputs),
        )
        for r in run.resources
    }


def test_a_handout_is_what_a_fresh_run_of_the_stack_file_records() -> None:
    fresh = run_stack(STACK)
    for shared in (unedited_run(STACK), shared_unless_edited(STACK)):
        assert len(shared.resources) == len(fresh.resources)
        # every record (inputs, outputs, options) and the wire Structs the pack is sent
        assert _by_urn(shared) == _by_urn(fresh)
        assert shared.outputs == fresh.outputs


def test_what_one_caller_changes_reaches_no_other_caller() -> None:
    pristine = unedited_run(STACK)
    changed = unedited_run(STACK)
    assert changed == pristine and changed.resources[0] is not pristine.resources[0]
    first = changed.resources[0]
    first.inputs["changed-by-a-test"] = True
    first.outputs.clear()
    first.dependencies.append("urn:changed")
    first.property_dependencies["changed"] = ["urn:changed"]
    nested = next(r for r in changed.resources if any(isinstance(v, dict) for v in r.inputs.values()))
    next(v for v in nested.inputs.values() if isinstance(v, dict))["changed-by-a-test"] = True
    changed.outputs["changed-by-a-test"] = True
    del changed.resources[1:]
    assert changed != pristine  # the edits took effect in the caller's copy ...
    later = unedited_run(STACK)
    assert later == pristine  # ... and in no copy handed out after them
    assert len(later.resources) == len(pristine.resources) > 1


def test_an_edited_run_is_never_the_shared_one() -> None:
    teams = list(reversed(config_value(STACK, "gpu-batch:teams")))
    assert len(teams) > 1
    edited = shared_unless_edited(STACK, {"gpu-batch:teams": teams})
    assert [r.urn for r in edited.resources] != [r.urn for r in unedited_run(STACK).resources]
