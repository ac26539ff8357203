"""``python -m benchmarks.floor <project> [--as-preview]``: register the floor program's resources and stop.

The same harness and SDK mocks as the offline preview (``preview.harness.run_program``), with
nothing else: the cost of the registrations themselves.

Plain, this is ``floor_ratio``'s floor as ``make bench`` has always defined it (issue 6), which
the issue-13 targets are stated against: the harness's defaults, and a normal interpreter exit.
That floor also pays two costs ``python -m preview`` does not: the one deferred collection when
GC is turned back on, and the teardown of the heap at exit.  ``--as-preview`` runs it the way
the preview runs its program (heap frozen before GC is re-enabled, ``os._exit`` once the output
is flushed), for the stricter ``floor_ratio_matched``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from preview.harness import run_program
from preview.stack_files import load_stack_files

if __name__ == "__main__":
    project = Path(sys.argv[1])
    as_preview = "--as-preview" in sys.argv[2:]
    result = run_program(project, load_stack_files(project, "floor"), freeze_heap=as_preview)
    print(f"{len(result.resources)} resources registered", flush=True)
    if as_preview:
        os._exit(0)
