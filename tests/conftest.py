"""Make the project root and the policy pack importable the way each runs for real.

The program runs with the project root on sys.path (``import stacks``); the pack runs with
``policies/`` as its working directory (``import gpu_batch_policy``).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "policies"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
