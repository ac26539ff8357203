"""One what-if run: objects + trace (or the stack's load profile) -> the JSON document."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from whatif.errors import NotModelledError, WhatIfError
from whatif.multikueue.fleet import Fleet
from whatif.multikueue.run import prepared, simulate_fleet
from whatif.pack import StackModel
from whatif.profiles import DeclaredPodSets, generate_trace, load_profile, profile_path
from whatif.results import document
from whatif.simulator import Simulation
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
    requeue_batch: float | None = None,
    ignore_fair_sharing: bool = False,
    fleet: Fleet | None = None,
) -> dict[str, Any]:
    """One run; ``fleet``: the program is a MultiKueue manager and its workers
    (:mod:`whatif.multikueue.run`), ``model`` is then all their objects."""
    if fleet is not None:
        if ignore_fair_sharing:
            raise NotModelledError("--ignore-fair-sharing with MultiKueue is not modelled")
        return simulate_fleet(
            fleet,
            trace,
            provisioning_delay=provisioning_delay,
            eviction_delay=eviction_delay,
            requeue_batch=requeue_batch,
        )
    cluster = prepared(model, ignore_fair_sharing=ignore_fair_sharing)
    sim = Simulation(
        cluster,
        trace,
        provisioning_delay=provisioning_delay,
        eviction_delay=eviction_delay,
        requeue_batch=requeue_batch,
    )
    return document(cluster, sim.run())
