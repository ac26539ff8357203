"""Benchmarks that print figures (``python -m benchmarks.<name>``; ``make bench`` and friends).

Several read the pack's own code (its cache root, its policies), so the pack's package is made
importable here, once, as ``gpu_batch_policy`` -- as ``preview`` does for the preview.
"""

import sys
from pathlib import Path

POLICIES_DIR = Path(__file__).resolve().parent.parent / "policies"
if str(POLICIES_DIR) not in sys.path:
    sys.path.insert(0, str(POLICIES_DIR))
