"""GPUDirect networking for multi-node training on A3 High, A3 Mega, A3 Ultra and A4 pools.

The profile table (network stack, extra VPCs, manifests, version floors per machine type) is the
policy pack's ``gpu_batch_policy.facts.gpudirect.profiles``, so the program and the pack judge with one
table.  Here:

- :mod:`.vpcs` -- the extra VPCs and subnets (:class:`GpuDirectVpcs`) and the pool's
  ``additionalNodeNetworkConfigs``;
- :mod:`.cluster_objects` -- the ``networking.gke.io`` Network / GKENetworkParamSet objects and
  Google's pinned NCCL installer and NRI injector DaemonSets.
"""

import sys
from pathlib import Path
from typing import Final

POLICIES_DIR: Final = Path(__file__).resolve().parents[2] / "policies"
if str(POLICIES_DIR) not in sys.path:  # the pack's profile table, as components/chart_crds.py does
    sys.path.insert(0, str(POLICIES_DIR))
