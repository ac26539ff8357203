"""Make the pack's rule package importable the way the analyzer host does (cwd=policies)."""

from __future__ import annotations

import sys
from pathlib import Path

POLICIES_DIR = Path(__file__).resolve().parents[2] / "policies"
if str(POLICIES_DIR) not in sys.path:
    sys.path.insert(0, str(POLICIES_DIR))
