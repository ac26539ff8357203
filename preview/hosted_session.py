"""The preview's handle on its analysis host: the pack on the engine's timeline, out of process.

``pulumi preview --policy-pack`` starts the analyzers before the program runs, analyses each
registration as it arrives and runs ``AnalyzeStack`` once the program has finished.
:class:`HostedSession` keeps that timeline while the engine's side of the protocol runs in
``python -m preview.analysis_host`` (see that module for why a process of its own): each
registration costs the program one pickle and one pipe write, and the host, the pack and the
program use both cores.

Use: ``start_session(...)`` -> ``analyze(record)`` per registration -> ``analyze_stack(resources)``
-> ``result()`` -> ``pack_peak_kib()`` -> ``close()`` (also after an error: it stops the host
and, through it, the pack).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Self

from preview.analysis_host import HostRequest
from preview.analyzer import (
    DEFAULT_PACK_DIR,
    STOP_TIMEOUT_S,
    AnalysisResult,
    AnalyzerError,
    load_policy_config_file,
    stop_process,
)
from preview.engine_grpc import host_environment
from preview.findings.levels import pack_part
from preview.frames import TruncatedFrameError, encode, grow_pipe, read_frame
from preview.process_figures import ProcessFigures
from preview.project import PROJECT_DIR
from preview.records import RecordedResource

# Where ``python -m preview.analysis_host`` imports ``preview`` from.
_SOURCE_ROOT = PROJECT_DIR


class HostedSession:
    """One pack run through an analysis host process."""

    def __init__(self, request: HostRequest, python: str = sys.executable) -> None:
        self._request = request
        self._python = python
        self._proc: subprocess.Popen[bytes] | None = None
        # A file, not a pipe, so the host never blocks on what it prints (like the pack's stderr).
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self._streamed: list[RecordedResource] = []
        # The SDK registers from its executor threads; one lock keeps frames whole and in order.
        self._lock = threading.Lock()
        self._host_gone = False
        self._result: AnalysisResult | None = None
        self._figures: ProcessFigures | None = None

    def start(self) -> Self:
        """Launch the host (which launches and configures the pack); returns at once."""
        try:
            self._proc = subprocess.Popen(
                [self._python, "-m", "preview.analysis_host"],
                cwd=_SOURCE_ROOT,
                env=host_environment(os.environ),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
            )
        except OSError as exc:
            raise AnalyzerError(f"cannot start the analysis host: {exc}") from exc
        assert self._proc.stdin is not None
        grow_pipe(self._proc.stdin)
        self._send(self._request)
        return self

    def analyze(self, record: RecordedResource) -> None:
        """Send one registration for ``Remediate`` + ``Analyze`` (never waits for the pack)."""
        self._streamed.append(record)
        self._send(("record", record))

    def analyze_stack(self, resources: Sequence[RecordedResource]) -> None:
        """Queue the one ``AnalyzeStack``; the caller may write its outputs while it runs."""
        streamed = len(resources) == len(self._streamed) and all(
            a is b for a, b in zip(resources, self._streamed, strict=True)
        )
        # The usual case -- exactly what was streamed -- is not sent a second time.
        self._send(("stack", None if streamed else tuple(resources)))

    def result(self) -> AnalysisResult:
        """Wait for the host's answer; raise the pack's (or the host's) error if there is one."""
        if self._result is not None:
            return self._result
        if self._proc is None or self._proc.stdout is None:
            raise AnalyzerError("the analysis host is not running")
        try:
            has_answer, answer = read_frame(self._proc.stdout)
        except TruncatedFrameError:
            has_answer, answer = False, None
        if not has_answer:
            raise self._stopped()
        if answer[0] == "error":
            raise AnalyzerError(answer[1])
        _, self._result, self._figures = answer
        assert self._result is not None
        return self._result

    def pack_peak_kib(self) -> int | None:
        """The pack process's own peak resident set (KiB), as the host read it before stopping it."""
        return self._figures.pack_peak_kib if self._figures is not None else None

    def figures(self) -> ProcessFigures | None:
        """The pack's and the host's own figures, once :meth:`result` has answered."""
        return self._figures

    def close(self) -> None:
        """Stop the host: its stdin ends, so an unfinished run is cancelled and the pack stopped."""
        proc, self._proc = self._proc, None
        if proc is not None:
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):  # a broken pipe to a host that has gone
                        stream.close()
            stop_process(proc, ends_by_itself=True)  # it stops its pack on end of input or SIGTERM
        self._stderr.close()

    def host_pid(self) -> int | None:
        """The host process's id while it runs (tests look for its pack among its children)."""
        return self._proc.pid if self._proc is not None else None

    def _send(self, message: Any) -> None:
        frame = encode(message)
        with self._lock:
            if self._host_gone or self._proc is None:
                return  # result() reports why
            stdin: IO[bytes] | None = self._proc.stdin
            assert stdin is not None
            try:
                stdin.write(frame)
                stdin.flush()
            except (BrokenPipeError, ValueError):
                self._host_gone = True  # the host died; result() reads its stderr

    def _stopped(self) -> AnalyzerError:
        assert self._proc is not None
        code = self._proc.wait(timeout=STOP_TIMEOUT_S)
        self._stderr.seek(0)
        stderr = self._stderr.read().decode(errors="replace").strip()
        what = f"the analysis host stopped without an answer (exit code {code})"
        return AnalyzerError(f"{what}\n--- analysis host stderr ---\n{stderr}" if stderr else what)


def start_session(
    *,
    pack_dir: Path = DEFAULT_PACK_DIR,
    config_file: Path | None = None,
    stack: str = "dev",
    project: str = "gpu-batch",
    stack_config: Mapping[str, str] | None = None,
) -> HostedSession:
    """A started session for ``pulumi preview --policy-pack <dir> --policy-pack-config <file>``."""
    # The preview's own findings' entries (their levels) are not the pack's to reconcile.
    file_config = pack_part(load_policy_config_file(config_file)) if config_file else None
    request = HostRequest(
        pack_dir=Path(pack_dir).resolve(),
        stack=stack,
        project=project,
        stack_config=dict(stack_config or {}),
        file_config=file_config,
    )
    return HostedSession(request).start()
