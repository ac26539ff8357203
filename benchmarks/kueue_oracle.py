"""Kueue v0.19.2's own scheduler as the what-if's oracle: the Go tests of ``whatif/oracle``.

``whatif/oracle`` is a Go module of ours that imports ``sigs.k8s.io/kueue v0.19.2`` from the Go
module proxy (go.mod / go.sum; nothing of Kueue's is copied) and replays a scenario file through
Kueue's scheduler, queue manager, cache and workload-controller event handlers in simulated
time (its ``TestOracle``).  The test binary is built once per machine with ``go test -c`` into
``oracle/<key>/`` in the project's cache root (the pack's ``primitives/cache_home.py``:
``$XDG_CACHE_HOME/gpu-batch``, else ``~/.cache/gpu-batch``; ``GPU_BATCH_ORACLE_CACHE`` moves the
folder, as each cache's own variable does), the key being the Go version and the module's
sources, so a run of the pytest sample does not rebuild it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from gpu_batch_policy.primitives.cache_home import cache_home

ROOT = Path(__file__).resolve().parent.parent

ORACLE_CACHE_ENV = "GPU_BATCH_ORACLE_CACHE"
ORACLE_DIR = ROOT / "whatif" / "oracle"


class OracleUnavailableError(RuntimeError):
    """No Go toolchain, or the module could not be built (the message says which)."""


def _go() -> str:
    go = shutil.which("go")
    if go is None:
        raise OracleUnavailableError("no Go toolchain on PATH (the oracle is a Go test of whatif/oracle)")
    return go


def cache_root() -> Path:
    """Where the oracle's test binaries are built: ``$GPU_BATCH_ORACLE_CACHE``, else ``oracle/``
    in the project's cache root."""
    explicit = os.environ.get(ORACLE_CACHE_ENV)
    return Path(explicit) if explicit else cache_home() / "oracle"


def _key(go: str) -> str:
    version = subprocess.run([go, "version"], capture_output=True, text=True, check=True).stdout.strip()
    h = hashlib.sha256(version.encode())
    for path in sorted(ORACLE_DIR.iterdir()):
        if path.suffix in (".go", ".mod", ".sum"):
            h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def binary() -> Path:
    """The oracle's test binary, built now if this machine has none for these sources."""
    go = _go()
    target = cache_root() / f"kueue-v0.19.2-{_key(go)}" / "oracle.test"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.tmp")
    done = subprocess.run(
        [go, "test", "-mod=readonly", "-c", "-o", str(partial), "."],
        cwd=ORACLE_DIR,
        check=False,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise OracleUnavailableError(f"go test -c in whatif/oracle failed: {done.stderr.strip()[-2000:]}")
    partial.replace(target)
    return target


def start(scenarios: Path, out: Path, variants: tuple[str, ...] = ()) -> subprocess.Popen[str]:
    """Start the oracle over a JSONL scenario file; results go to ``out`` (JSONL)."""
    env = {**os.environ, "ORACLE_SCENARIOS": str(scenarios), "ORACLE_OUT": str(out)}
    if variants:
        env["ORACLE_VARIANTS"] = ",".join(variants)
    return subprocess.Popen(
        [str(binary()), "-test.run", "^TestOracle$", "-test.count", "1"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def finish(proc: subprocess.Popen[str], out: Path) -> dict[str, dict[str, Any]]:
    """Wait for the oracle; per scenario id, per variant name, its result."""
    output, _ = proc.communicate()
    if proc.returncode != 0:
        raise OracleUnavailableError(f"the oracle failed (exit {proc.returncode}): {output.strip()[-2000:]}")
    results: dict[str, dict[str, Any]] = {}
    for line in out.read_text().splitlines():
        r = json.loads(line)
        results.setdefault(r["id"], {})[r["variant"]] = r
    return results
