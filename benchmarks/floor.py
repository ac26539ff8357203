"""``python -m benchmarks.floor <project>``: register the floor program's resources and stop.

The same harness and SDK mocks as the offline preview (``preview.harness.run_program``), with
nothing else: the cost of the registrations themselves.
"""

from __future__ import annotations

import sys
from pathlib import Path

from preview.harness import run_program
from preview.stack_files import load_stack_files

if __name__ == "__main__":
    project = Path(sys.argv[1])
    result = run_program(project, load_stack_files(project, "floor"))
    print(f"{len(result.resources)} resources registered")
