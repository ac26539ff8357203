"""One what-if run: objects + trace (or the stack's load profile) -> the JSON document."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from whatif.cluster import build_cluster
from whatif.errors import WhatIfError
from whatif.pack import StackModel
from whatif.profiles import DeclaredPodSets, generate_trace, load_profile, profile_path
from whatif.results import document
from whatif.simulator import Simulation
from whatif.sources import flavor_pools
from whatif.trace import Delay, Trace


def default_trace(
    model: StackModel,
    stack: str | None,
    profile: Path | None = None,
    declared: DeclaredPodSets | None = None,
) -> Trace:
    """The trace of ``--profile`` or the stack's load profile (``declared``: see
    :func:`whatif.profiles.generate_trace`)."""
    path = profile or (profile_path(stack) if stack else None)
    if path is None or not path.exists():
        where = path.name if path else "--profile"
        raise WhatIfError(f"no trace: pass --trace FILE, or write a load profile ({where})")
    return generate_trace(load_profile(path), model, path.name, declared)


def simulate(
    model: StackModel,
    trace: Trace,
    *,
    provisioning_delay: Delay | None = None,
    eviction_delay: float | None = None,
    ignore_fair_sharing: bool = False,
) -> dict[str, Any]:
    cluster = build_cluster(model, ignore_fair_sharing=ignore_fair_sharing)
    cluster.pools = flavor_pools(model)
    for cq in cluster.cluster_queues.values():
        unknown = sorted(f for f in cq.provisioning_flavors if f not in cluster.pools)
        if unknown:
            cluster.notes.append(
                f"ClusterQueue {cq.name}: the node pools behind flavor(s) {', '.join(unknown)} are not known, so "
                "ProvisioningRequests on them are taken to find capacity"
            )
    sim = Simulation(cluster, trace, provisioning_delay=provisioning_delay, eviction_delay=eviction_delay)
    return document(cluster, sim.run())
