"""The offline preview: run a stack's real program under the Pulumi SDK mocks, record every
registration in wire form, write the plan and manifests, and run the policy pack over the
analyzer protocol -- with no Pulumi CLI, no cloud account and no cluster.

The preview reuses the pack's own code (chart rendering, type tokens, the capacity model) rather
than a second copy, so the pack's package is made importable here, once, as ``gpu_batch_policy``:
the way the analyzer host has it (``python -m pulumi.policy`` with cwd ``policies/``).
"""

import sys
from pathlib import Path

POLICIES_DIR = Path(__file__).resolve().parent.parent / "policies"
if str(POLICIES_DIR) not in sys.path:
    sys.path.insert(0, str(POLICIES_DIR))
