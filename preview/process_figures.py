"""Each process's own CPU seconds and memory, for ``--timings`` and ``make bench``.

On a machine shared with other work, wall time says little; each process's own CPU seconds say
which of the three (the preview, the analysis host, the pack) did the work.  The preview and the
host read their own figures with :func:`own_cpu_s`; the host reads the pack's from ``/proc``
(:func:`process_cpu_s`, :func:`process_status_kib`) before it stops the pack.
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ProcessFigures:
    """The pack's and the host's own figures, as the host sends them with its result."""

    pack_peak_kib: int | None
    pack_cpu_s: float | None
    host_cpu_s: float
    # Seconds from the program's end until AnalyzeStack went out (the Analyze calls still queued
    # then), and AnalyzeStack's own (``AnalysisSession.stack_seconds``); None when not measured.
    analyze_backlog_s: float | None = None
    analyze_stack_s: float | None = None


def own_cpu_s() -> float:
    """This process's own CPU seconds (user + system), its threads included."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _stat_fields(pid: int) -> list[str] | None:
    """``/proc/<pid>/stat`` from field 3 (state) on; None where ``/proc`` is not available or the
    process is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces: count from the ")" that closes it.
    return stat[stat.rindex(")") + 2 :].split()


def process_cpu_s(pid: int) -> float | None:
    """Process ``pid``'s CPU seconds so far (user + system, ``/proc/<pid>/stat`` fields 14 and 15,
    in clock ticks); None where ``/proc`` is not available or the process is gone."""
    fields = _stat_fields(pid)
    if fields is None:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_parent(pid: int) -> int | None:
    """Process ``pid``'s parent pid (``/proc/<pid>/stat`` field 4); None as :func:`process_cpu_s`."""
    fields = _stat_fields(pid)
    return None if fields is None else int(fields[1])


def process_status_kib(pid: int, field: str) -> int | None:
    """A KiB figure of ``/proc/<pid>/status`` (``"VmHWM:"``, ``"VmRSS:"``); None where ``/proc``
    is not available, the process is gone or the field is absent."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith(field):
            return int(line.split()[1])
    return None
