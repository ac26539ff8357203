"""When a topology-aware flavor can never place a gang: one decision for the pack's
``kueue-tas-nodes-exist`` and the stack config check (``stacks/checks/topology.py``).

kubernetes-sigs/kueue v0.19.2 ``pkg/cache/scheduler/tas_flavor_snapshot.go``
``TASFlavorSnapshot.findLevelWithFitDomains``: the topology is assigned over the nodes the cache
holds; with none, "no topology domains at level: <label>", and the workload stays pending without a
pod, so no autoscaler ever adds a node.  ``site/content/en/docs/concepts/topology_aware_scheduling.md``,
"ClusterAutoscaler support": TAS reaches the autoscaler only through the ProvisioningRequest
admission check (quota, then the check provisions the nodes, then the topology is assigned).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

REASON: Final = (
    "Kueue places a topology only over existing nodes (no topology domains at level), creates no pod, "
    "so the autoscaler never adds one"
)


def never_placed(minimums: Sequence[int | None], provisioned: bool) -> bool:
    """True when every pool behind a TAS flavor can shrink to zero nodes (``minimums``: each pool's
    fewest nodes; None = not known) and no ProvisioningRequest check provisions the flavor."""
    return bool(minimums) and not provisioned and all(m == 0 for m in minimums)
