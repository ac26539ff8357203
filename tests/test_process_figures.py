"""The per-process figures ``--timings`` prints: read from ``/proc`` for another process, from
``getrusage`` for this one, and None (never an exception) once the process is gone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from preview.process_figures import own_cpu_s, process_cpu_s, process_status_kib

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="no /proc here")


def test_another_process_s_cpu_is_read_while_it_runs_and_none_once_it_is_gone() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys\nx = sum(range(30_000_000))\nsys.stdin.read()"],
        stdin=subprocess.PIPE,
    )
    try:
        cpu: float | None = 0.0
        while cpu is not None and cpu < 0.2 and child.poll() is None:
            cpu = process_cpu_s(child.pid)
        assert cpu is not None and cpu >= 0.2  # the busy loop is counted, in seconds not ticks
        assert (process_status_kib(child.pid, "VmHWM:") or 0) > 1024  # an interpreter is > 1 MiB
        assert process_status_kib(child.pid, "NoSuchField:") is None
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait()
    assert process_cpu_s(child.pid) is None
    assert process_status_kib(child.pid, "VmHWM:") is None


def test_this_process_s_cpu_grows_with_its_own_work() -> None:
    before = own_cpu_s()
    sum(range(5_000_000))
    assert own_cpu_s() > before
    mine = process_cpu_s(os.getpid())
    assert mine is not None and abs(mine - own_cpu_s()) < 1.0
