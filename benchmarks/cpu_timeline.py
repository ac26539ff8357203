"""``python -m benchmarks.cpu_timeline [--every S] -- <preview arguments>``: who uses the CPU, when.

Why (issue 44): ``--timings`` gives each stage's wall seconds and each process's CPU in total,
not *when* each process worked, so it cannot show where a core sat idle.  This runs one
``python -m preview`` and samples, every ``--every`` seconds, the CPU seconds of the preview, the
analysis host and the pack (``/proc/<pid>/stat``, :func:`preview.process_figures.process_cpu_s`),
printing one line per sample and, at the end, each role's total and the **idle core-seconds**:
for every sample, the machine's cores minus what the three used.  On a 1,000-team stack it showed
the shape the README's "Round 12" describes: one core idle while the program builds its
components (the SDK sends almost no registration before the program's body returns), both busy while
registrations stream, and one idle again while the pack finishes ``AnalyzeStack`` alone.

Linux only (``/proc``).  The samples add a little CPU of their own, in this process.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from preview.process_figures import process_cpu_s, process_parent

ROLES = ("preview", "host", "pack", "other")


def role(cmdline: str) -> str:
    """Which of the preview's processes a command line is (the root is always ``preview``)."""
    if "preview.analysis_host" in cmdline:
        return "host"
    if "pulumi.policy" in cmdline:
        return "pack"
    return "other"


def descendants(root: int, parents: Mapping[int, int]) -> list[int]:
    """``root`` and every process below it, from a pid -> parent pid table."""
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return sorted(found)


def idle_core_seconds(samples: Iterable[tuple[float, Mapping[str, float]]], cores: int) -> float:
    """Σ over samples of (cores × the sample's seconds − the CPU seconds its processes used)."""
    return sum(max(0.0, cores * seconds - sum(used.values())) for seconds, used in samples)


def _parents() -> dict[int, int]:
    table: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (parent := process_parent(int(entry.name))) is not None:
            table[int(entry.name)] = parent
    return table


def _cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@dataclass
class _Tracker:
    root: int
    seen: dict[int, float]
    roles: dict[int, str]

    def sample(self) -> dict[str, float]:
        """CPU seconds each role used since the last sample (a process gone since is not counted)."""
        used = dict.fromkeys(ROLES, 0.0)
        for pid in descendants(self.root, _parents()):
            cpu = process_cpu_s(pid)
            if cpu is None:
                continue
            name = self.roles.setdefault(pid, "preview" if pid == self.root else role(_cmdline(pid)))
            used[name] += cpu - self.seen.get(pid, 0.0)
            self.seen[pid] = cpu
        return used


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cpu_timeline", description=__doc__)
    parser.add_argument("--every", type=float, default=1.0, help="seconds between samples (default 1)")
    parser.add_argument(
        "preview_args", nargs=argparse.REMAINDER, help="after --: python -m preview's arguments"
    )
    args = parser.parse_args(argv)
    forwarded = [a for a in args.preview_args if a != "--"]
    cores = os.cpu_count() or 1
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "preview", *forwarded], stdout=subprocess.DEVNULL)
    tracker = _Tracker(proc.pid, {}, {})
    samples: list[tuple[float, dict[str, float]]] = []
    last = start
    while proc.poll() is None:
        time.sleep(args.every)
        now = time.perf_counter()
        used = tracker.sample()
        samples.append((now - last, used))
        last = now
        print(
            f"t={now - start:6.1f} "
            + " ".join(f"{r}={used[r]:.2f}" for r in ROLES if used[r] or r != "other")
        )
    totals = {r: sum(used[r] for _, used in samples) for r in ROLES}
    print(
        f"exit={proc.returncode} wall_s={time.perf_counter() - start:.1f} cores={cores} "
        + " ".join(f"{r}_cpu_s={totals[r]:.1f}" for r in ROLES)
        + f" idle_core_s={idle_core_seconds(samples, cores):.1f}"
    )
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
