"""The project's cache root on this machine: ``$XDG_CACHE_HOME/gpu-batch``, else ``~/.cache/gpu-batch``.

Why one function: every cache the project keeps outside the checkout (so that worktrees and CI
share it) sits in a sub-folder of this root, each with its own override variable: the pack's
rendered charts (``facts/charts/render_cache.py``), the what-if's mypyc build
(``whatif/compiled.py``), the live tier's binaries (``tests/live/toolchain.py``), the Kueue
oracle's test binaries (``benchmarks/kueue_oracle.py``) and ``make test``'s durations
(``benchmarks/suite_time.py``).  Where the root is, and that an empty
``XDG_CACHE_HOME`` counts as unset (the XDG Base Directory rule for its variables), is decided
here once.  Only the standard library: the pack imports it as its own process, and ``python -m
whatif`` before any of the simulator's modules.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_home() -> Path:
    """``$XDG_CACHE_HOME/gpu-batch``; ``~/.cache/gpu-batch`` when XDG_CACHE_HOME is unset or empty."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gpu-batch"
