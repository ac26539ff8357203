"""Where GKE allows a node pool's ``placementPolicy.type: COMPACT``.

From GoogleCloudPlatform/cluster-toolkit v1.95.0 ``modules/compute/gke-node-pool/main.tf``
preconditions (each mirrors a GKE refusal):

- "Compact placement is only available for node pools operating in a single zone.";
- "placement_policy cannot be COMPACT when enable_queued_provisioning is true.";
- "Compact placement with DWS Flex start is only supported for A3 Ultra, A4, and H4D machine
  types" (``^(a3-ultragpu-|a4-|h4d-)``).

The pack's ``gke-compact-placement-flex-start`` and the stack config both read this module, so
they refuse exactly the same pools.
"""

from __future__ import annotations

import re
from typing import Final

COMPACT_FLEX_MACHINES: Final = re.compile(r"^(a3-ultragpu-|a4-|h4d-)")


def compact_refusal(machine_type: str, *, queued: bool, flex_start: bool, zones: int | None) -> str | None:
    """Why GKE refuses COMPACT placement on such a pool; None: allowed (``zones`` None: unknown)."""
    if queued:
        return "GKE refuses COMPACT placement on queued-provisioning pools"
    if zones is not None and zones != 1:
        return "COMPACT placement is only available for node pools in a single zone"
    if flex_start and not COMPACT_FLEX_MACHINES.match(machine_type):
        return "COMPACT placement with DWS flex-start is only supported for A3 Ultra, A4 and H4D"
    return None
