"""The streaming policy session keeps the engine's calls and answers while it overlaps the program.

``AnalysisSession`` sends Remediate + Analyze per registration as the program records it and
AnalyzeStack at the end, from a client thread; these tests hold it to the batch driver
(``PolicyPackProcess.run``) that the end-to-end tests check, and to the engine's call order.
"""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from preview.analyzer import (
    AnalysisSession,
    AnalyzerError,
    PolicyPackProcess,
    _struct,
    _wire_struct,
    run_policy_pack,
)
from preview.records import RecordedResource
from preview.stack_files import stack_names
from tests.stack_runner import ROOT, program_records

POLICIES = ROOT / "policies"
FOREIGN = ROOT / "tests" / "fixtures" / "foreign_program"


def _streamed(resources: list[RecordedResource], pack: PolicyPackProcess) -> Any:
    with closing(AnalysisSession(pack).start()) as session:
        for record in resources:
            session.analyze(record)
        session.analyze_stack(resources)
        return session.result()


@pytest.mark.parametrize(("project", "stack"), [(ROOT, "prod"), (FOREIGN, "broken")], ids=["prod", "broken"])
def test_streamed_findings_equal_the_batch_run(project: Path, stack: str) -> None:
    resources = program_records(project, stack)
    batch = run_policy_pack(resources, stack=stack)
    streamed = _streamed(resources, PolicyPackProcess(POLICIES, stack=stack))
    assert streamed.diagnostics == batch.diagnostics
    assert streamed.config == batch.config and streamed.policies == batch.policies
    if stack == "broken":
        assert streamed.mandatory  # the comparison covers real findings, not two empty lists


def test_calls_go_out_in_the_engines_order() -> None:
    """Configure, then Remediate + Analyze per registration in registration order, AnalyzeStack last."""
    resources = program_records(ROOT, "dev")
    pack = PolicyPackProcess(POLICIES, stack="dev")
    sent: list[tuple[str, str]] = []
    real_call = pack.call

    def logging_call(method: str, request: Any, *, resources: int = 1) -> Any:
        sent.append((method, getattr(request, "urn", "")))
        return real_call(method, request, resources=resources)

    pack.call = logging_call  # type: ignore[method-assign]
    _streamed(resources, pack)
    expected = [("Configure", "")]
    for record in resources:
        expected += [("Remediate", record.urn), ("Analyze", record.urn)]
    assert sent == [*expected, ("AnalyzeStack", "")]


@pytest.mark.parametrize("stack", stack_names(ROOT))
def test_recorded_wire_structs_equal_the_converted_values(stack: str) -> None:
    """What the session sends as recorded is what converting the recorded values would send."""
    for record in program_records(ROOT, stack):
        assert _wire_struct(record.wire_inputs, {}) == _struct(record.inputs), record.urn
        if record.wire_outputs:
            assert _wire_struct(record.wire_outputs, {}) == _struct(record.outputs), record.urn


def test_a_pack_that_cannot_start_fails_result_with_its_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken-pack"
    broken.mkdir()
    (broken / "PulumiPolicy.yaml").write_text("runtime: python\n")
    (broken / "__main__.py").write_text("raise SystemExit('no pack here')\n")
    session = AnalysisSession(PolicyPackProcess(broken)).start()
    session.analyze_stack([])
    with pytest.raises(AnalyzerError, match="did not print its port"):
        session.result()
    session.close()


def test_closing_an_unfinished_session_stops_the_pack() -> None:
    """A program that fails half-way: close() returns and the pack process is gone."""
    pack = PolicyPackProcess(POLICIES, stack="dev")
    session = AnalysisSession(pack).start()
    for record in program_records(ROOT, "dev")[:5]:
        session.analyze(record)
    session.close()
    assert pack.peak_kib() is None  # no process left to read
