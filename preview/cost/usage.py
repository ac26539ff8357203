"""Expected GPU-hours per ClusterQueue and week, from the what-if under the stack's load profile.

The what-if (``whatif.run.simulate``, Kueue v0.19.2's admission rules) reports per queue
``gpuUtilisation`` = GPU-seconds its admitted workloads held over ``gpuCapacity`` x the simulated
span (``whatif/results.py`` ``queue_figures``), so GPU-hours held = utilisation x capacity x span
hours (utilisation is rounded to 4 places there).  Scaled to a 168-hour week.  No load profile,
or a stack the simulator does not model, gives no figure (the cost says "no what-if"), never 0.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from whatif.errors import WhatIfError
from whatif.pack import StackModel
from whatif.profiles import generate_trace, load_profile, profile_path
from whatif.run import simulate

HOURS_PER_WEEK = Decimal(168)


def weekly_gpu_hours(stack: str, items: Iterable[tuple[str, object, str, str]]) -> dict[str, Decimal] | None:
    """ClusterQueue -> GPU-hours per week it is expected to hold; None without a what-if."""
    path = profile_path(stack)
    if not path.exists():
        return None
    model = StackModel.from_plain(items)
    if not model.cluster_queues():
        return None
    try:
        profile = load_profile(path)
        result = simulate(model, generate_trace(profile, model, path.name))
    except WhatIfError:  # NotModelledError included: the what-if section says why
        return None
    out: dict[str, Decimal] = {}
    for name, figures in result["queues"].items():
        capacity, use = figures.get("gpuCapacity"), figures.get("gpuUtilisation")
        if capacity is None or use is None:
            continue
        # utilisation x capacity x span = GPU-hours over the span; per week: x 168 / span.
        out[name] = Decimal(str(use)) * Decimal(str(capacity)) * HOURS_PER_WEEK
    return out
