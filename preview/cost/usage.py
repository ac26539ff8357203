"""Expected GPU-hours per queue, GPU flavor and week, from the what-if under the stack's load profile.

Kueue (``whatif.run.simulate``, Kueue v0.19.2's admission rules): per ClusterQueue the what-if
reports ``gpusHeldByFlavor``, the GPU-seconds its admitted workloads held on each GPU flavor
(the flavor Kueue assigned each pod set: the ``admitted`` event's ``flavors``) over the
simulated span, i.e. the mean GPUs held per flavor (``whatif/results.py`` ``queue_figures``).
A week is that mean x 168 hours.

KAI (``whatif.kai.run.simulate_kai``, KAI Scheduler v0.17.0): per queue ``gpuUtilisation`` =
GPU-seconds charged to the queue over ``gpuCapacity`` x the span (``whatif/kai/results.py``
``queue_figures``; a parent queue sums its leaves), so the mean GPUs held = utilisation x
capacity (utilisation is rounded to 4 places there).  KAI has no flavors: its queues' one
figure is keyed ``-``, as the cost's KAI rows are (``preview.cost.estimate``).

No load profile, or a stack the simulator does not model, gives no figure (the cost says
"no what-if"), never 0.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal

from whatif.errors import WhatIfError
from whatif.kai.model import build_kai
from whatif.kai.run import declared_kai_pod_sets, has_kai_queues, simulate_kai
from whatif.pack import StackModel
from whatif.profiles import generate_trace, load_profile, profile_path
from whatif.run import simulate

HOURS_PER_WEEK = Decimal(168)
KAI_FLAVOR = "-"

Weekly = dict[str, dict[str, Decimal]]  # queue -> GPU flavor -> GPU-hours per week


@dataclass(frozen=True)
class WeeklyUse:
    """Each scheduler's expected week; None: that scheduler was not simulated."""

    kueue: Weekly | None
    kai: Weekly | None


def weekly_gpu_hours(stack: str, items: Iterable[tuple[str, object, str, str]]) -> WeeklyUse:
    return weekly_use(stack, lambda: StackModel.from_plain(items))


def weekly_use(stack: str, model_of: Callable[[], StackModel]) -> WeeklyUse:
    """:func:`weekly_gpu_hours` of the model ``model_of`` gives, built only when the stack has a
    load profile (the cost shares its own model: building one over a one-team stack's CRDs is
    most of the cost's time)."""
    path = profile_path(stack)
    if not path.exists():
        return WeeklyUse(None, None)
    model = model_of()
    return WeeklyUse(_kueue_week(model, stack), _kai_week(model, stack))


def _kueue_week(model: StackModel, stack: str) -> Weekly | None:
    if not model.cluster_queues():
        return None
    path = profile_path(stack)
    try:
        result = simulate(model, generate_trace(load_profile(path), model, path.name))
    except WhatIfError:  # NotModelledError included: the what-if section says why
        return None
    out: Weekly = {}
    for name, figures in result["queues"].items():
        if figures.get("gpuCapacity") is None:
            continue
        out[name] = {
            flavor: Decimal(str(mean)) * HOURS_PER_WEEK
            for flavor, mean in figures.get("gpusHeldByFlavor", {}).items()
        }
    return out


def _kai_week(model: StackModel, stack: str) -> Weekly | None:
    if not has_kai_queues(model):
        return None
    path = profile_path(stack)
    try:
        cluster = build_kai(model)
        trace = generate_trace(load_profile(path), model, path.name, declared_kai_pod_sets)
        result = simulate_kai(model, trace, cluster)
    except WhatIfError:  # the KAI what-if section says why
        return None
    out: Weekly = {}
    for name, figures in result["queues"].items():
        capacity, use = figures.get("gpuCapacity"), figures.get("gpuUtilisation")
        if capacity is None or use is None:
            continue
        out[name] = {KAI_FLAVOR: Decimal(str(use)) * Decimal(str(capacity)) * HOURS_PER_WEEK}
    return out
