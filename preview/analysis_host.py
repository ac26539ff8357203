"""``python -m preview.analysis_host``: the engine's side of the analyzer protocol, in its own process.

Under ``pulumi preview --policy-pack`` the program, the engine and the pack are three processes:
the program registers resources with the engine, and the engine (Go) sends ``Remediate`` /
``Analyze`` to the pack for each one, then ``AnalyzeStack``.  The offline preview runs the
program in its own process under the SDK mocks; this host plays the engine's part towards the
pack, so that the gRPC client -- request building, the calls, their answers -- never competes
with the program for the preview's interpreter lock.  Run as a thread inside the preview, that
client made the program stage of a 1,000-team preview ~5 s slower (9.4-11.3 s alone, 14.3-15.9 s
streaming, paired runs on a 2-core VM); in a process of its own the program runs at its own speed
while the pack works on the other core.  Its gRPC client runs on grpc-core's cheaper client
endpoints (:mod:`preview.engine_grpc`); the pack's environment stays the user's.

The host drives :class:`preview.analyzer.AnalysisSession` -- the same calls, in the engine's
order, with the same answers -- and talks to the preview over stdin/stdout in
:mod:`preview.frames`:

* in: one :class:`HostRequest`, then ``("record", RecordedResource)`` per registration, in
  registration order, then ``("stack", None)`` (AnalyzeStack over the records streamed) or
  ``("stack", resources)``; the end of stdin before that means the preview gave up (the
  program failed): the pack is stopped and nothing is answered;
* out: one ``("result", AnalysisResult, ProcessFigures)`` or ``("error", message)``.
"""

from __future__ import annotations

import contextlib
import gc
import signal
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

from preview.analyzer import AnalysisResult, AnalysisSession, AnalyzerError, PolicyPackProcess
from preview.frames import read_frame, write_frame
from preview.process_figures import ProcessFigures, own_cpu_s
from preview.records import RecordedResource


@dataclass(frozen=True)
class HostRequest:
    """What the host needs to start and configure the pack, as ``start_session`` was given it."""

    pack_dir: Path
    stack: str
    project: str
    stack_config: Mapping[str, str] = field(default_factory=dict)
    file_config: Mapping[str, Any] | None = None


RecordMessage = tuple[Literal["record"], RecordedResource]
StackMessage = tuple[Literal["stack"], Sequence[RecordedResource] | None]


ResultMessage = tuple[Literal["result"], AnalysisResult, ProcessFigures]
ErrorMessage = tuple[Literal["error"], str]


def serve(inp: IO[bytes], out: IO[bytes]) -> int:
    """Run one session from ``inp`` to ``out``; the exit code of the host process."""
    has_request, request = read_frame(inp)
    if not has_request:
        return 0  # the preview stopped before it sent anything
    if not isinstance(request, HostRequest):
        write_frame(
            out, ("error", f"analysis host: expected a HostRequest first, got {type(request).__name__}")
        )
        return 2
    pack = PolicyPackProcess(
        request.pack_dir, stack=request.stack, project=request.project, stack_config=request.stack_config
    )
    session = AnalysisSession(pack, request.file_config).start()
    try:
        if not _stream(inp, session):
            return 0  # cancelled: close() below skips what is queued and stops the pack
        try:
            result = session.result()
        except AnalyzerError as error:
            write_frame(out, ("error", str(error)))
            return 0
        # The pack's own figures are read before close() stops it.
        backlog_s, stack_s = session.stack_seconds() or (None, None)
        figures = ProcessFigures(
            session.pack_peak_kib(), session.pack_cpu_s(), own_cpu_s(), backlog_s, stack_s
        )
        write_frame(out, ("result", result, figures))
        return 0
    finally:
        session.close()


def _stream(inp: IO[bytes], session: AnalysisSession) -> bool:
    """Hand every registration to the session as it arrives; True once AnalyzeStack is queued."""
    streamed: list[RecordedResource] = []
    while True:
        has_message, message = read_frame(inp)
        if not has_message:
            return False
        kind, payload = message
        if kind == "record":
            streamed.append(payload)
            session.analyze(payload)
        elif kind == "stack":
            session.analyze_stack(streamed if payload is None else payload)
            return True
        else:
            raise AnalyzerError(f"analysis host: unknown message {kind!r}")


def main() -> int:
    # Like the pack (policies/__main__.py): the host keeps every record alive until AnalyzeStack,
    # so collecting young objects less often saves re-scanning that growing heap.
    gc.collect()
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    # SIGTERM (the preview's last resort) unwinds through serve(), whose finally stops the pack.
    signal.signal(signal.SIGTERM, lambda _signum, _frame: sys.exit(128 + signal.SIGTERM))
    try:
        return serve(sys.stdin.buffer, sys.stdout.buffer)
    except BrokenPipeError:
        return 0  # the preview has gone: nobody is left to answer
    except Exception as error:  # reported to the preview as one line; the traceback stays in stderr
        with contextlib.suppress(OSError):
            write_frame(
                sys.stdout.buffer, ("error", f"analysis host failed: {type(error).__name__}: {error}")
            )
        raise


if __name__ == "__main__":
    # Run main() from the module under its real name: the preview pickles HostRequest as
    # ``preview.analysis_host.HostRequest``, which is not this ``__main__`` copy's class.
    from preview.analysis_host import main as host_main

    sys.exit(host_main())
