"""The analysis host plays the engine's side of the protocol in its own process, with the same answers.

``preview/hosted_session.py`` streams each registration to ``python -m preview.analysis_host``,
which drives the in-process ``AnalysisSession`` (whose call order ``test_streaming_session``
holds to the engine's).  These tests hold the hosted run to the batch driver that the
end-to-end tests check, and check every way it can end: an answer, the pack's error, a host that
dies, and a preview that gives up half-way.
"""

from __future__ import annotations

import io
import time
from contextlib import closing
from pathlib import Path

import pytest

from preview.analysis_host import HostRequest, serve
from preview.analyzer import AnalyzerError, run_policy_pack
from preview.frames import TruncatedFrameError, encode, read_frame, write_frame
from preview.hosted_session import HostedSession, start_session
from tests.stack_runner import ROOT, program_records

POLICIES = ROOT / "policies"
FOREIGN = ROOT / "tests" / "fixtures" / "foreign_program"


def _request(stack: str, pack_dir: Path = POLICIES) -> HostRequest:
    return HostRequest(pack_dir=pack_dir, stack=stack, project="gpu-batch")


@pytest.mark.parametrize(("project", "stack"), [(ROOT, "prod"), (FOREIGN, "broken")], ids=["prod", "broken"])
def test_hosted_findings_equal_the_batch_run(project: Path, stack: str) -> None:
    resources = program_records(project, stack)
    batch = run_policy_pack(resources, stack=stack)
    with closing(HostedSession(_request(stack)).start()) as session:
        for record in resources:
            session.analyze(record)
        session.analyze_stack(resources)
        hosted = session.result()
        peak = session.pack_peak_kib()
        figures = session.figures()
    assert hosted.diagnostics == batch.diagnostics
    assert hosted.config == batch.config and hosted.policies == batch.policies
    assert peak is not None and peak > 10_000  # the pack's own VmHWM in KiB, read by the host
    # Each process's own CPU: the pack's read from /proc by the host, the host's from getrusage.
    assert figures is not None and figures.pack_peak_kib == peak
    assert figures.pack_cpu_s is not None and figures.pack_cpu_s > 0.5  # it imported and judged the stack
    assert figures.host_cpu_s > 0.05
    # The run's end: what was still queued when the program finished (every record was queued
    # before analyze_stack here, so usually some), then AnalyzeStack itself.
    assert figures.analyze_backlog_s is not None and figures.analyze_backlog_s >= 0
    assert figures.analyze_stack_s is not None and figures.analyze_stack_s > 0
    if stack == "broken":
        assert hosted.mandatory  # real findings compared, not two empty lists


def test_a_stack_other_than_the_streamed_records_is_sent_whole() -> None:
    """AnalyzeStack over what the caller passes, even when it is not what was streamed."""
    resources = program_records(FOREIGN, "broken")
    batch = run_policy_pack(resources, stack="broken")
    with closing(HostedSession(_request("broken")).start()) as session:
        for record in resources:
            session.analyze(record)
        session.analyze_stack([*resources])  # equal, but a different list: sent, not assumed
        assert session.result().diagnostics == batch.diagnostics
    with closing(HostedSession(_request("broken")).start()) as session:
        session.analyze_stack(resources[:0])  # nothing streamed, an empty stack
        assert not session.result().mandatory


def test_a_pack_that_cannot_start_is_the_sessions_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken-pack"
    broken.mkdir()
    (broken / "PulumiPolicy.yaml").write_text("runtime: python\n")
    (broken / "__main__.py").write_text("raise SystemExit('no pack here')\n")
    with closing(start_session(pack_dir=broken, stack="dev")) as session:
        session.analyze_stack([])
        with pytest.raises(AnalyzerError, match="did not print its port"):
            session.result()


def test_a_host_that_dies_is_one_error_with_its_stderr(tmp_path: Path) -> None:
    """No answer from the host (here: a Python that exits at once) is an AnalyzerError, not a hang."""
    fake_python = tmp_path / "python"
    fake_python.write_text("#!/bin/sh\necho 'host exploded' >&2\nexit 3\n")
    fake_python.chmod(0o755)
    with closing(HostedSession(_request("dev"), python=str(fake_python)).start()) as session:
        for record in program_records(ROOT, "dev"):
            session.analyze(record)  # writes to a dead host are dropped, never raised
        session.analyze_stack([])
        with pytest.raises(AnalyzerError, match=r"exit code 3(.|\n)*host exploded"):
            session.result()


def _children(pid: int) -> list[int]:
    children: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        children += [int(c) for c in (task / "children").read_text().split()]
    return children


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads process children from /proc")
def test_closing_an_unfinished_session_stops_the_host_and_its_pack() -> None:
    """A program that fails half-way: close() returns, and neither the host nor the pack is left."""
    resources = program_records(ROOT, "dev")
    session = HostedSession(_request("dev")).start()
    for record in resources[:5]:
        session.analyze(record)
    host = session.host_pid()
    assert host is not None
    packs: list[int] = []
    for _ in range(600):  # the host starts the pack in the background: wait for it (60 s at most)
        packs = _children(host)
        if packs:
            break
        time.sleep(0.1)
    assert packs, "the host never started its pack"
    session.close()
    for pid in [host, *packs]:
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()


def test_serve_answers_nothing_when_the_preview_gives_up() -> None:
    """End of input before AnalyzeStack: the host stops its pack and exits quietly."""
    records = program_records(ROOT, "dev")[:3]
    inp = io.BytesIO(encode(_request("dev")) + b"".join(encode(("record", r)) for r in records))
    out = io.BytesIO()
    assert serve(inp, out) == 0
    assert out.getvalue() == b""


def test_serve_refuses_a_stream_that_does_not_start_with_a_request() -> None:
    out = io.BytesIO()
    assert serve(io.BytesIO(encode(("record", None))), out) == 2
    out.seek(0)
    assert read_frame(out)[1][0] == "error"


def test_frames_round_trip_and_a_cut_frame_is_an_error() -> None:
    stream = io.BytesIO()
    write_frame(stream, ("record", {"a": [1, 2]}))
    write_frame(stream, ("stack", None))
    data = stream.getvalue()
    stream = io.BytesIO(data)
    assert read_frame(stream) == (True, ("record", {"a": [1, 2]}))
    assert read_frame(stream) == (True, ("stack", None))
    assert read_frame(stream) == (False, None)
    for cut in (3, len(data) - 2):
        with pytest.raises(TruncatedFrameError):
            cut_stream = io.BytesIO(data[:cut])
            while read_frame(cut_stream)[0]:
                pass
