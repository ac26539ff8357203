"""The KAI part of the report's What-if section: one row per KAI queue under the load profile.

Like the Kueue section it always says something: the table, or why there is none (no load
profile, a KAI behaviour the what-if does not model, bad input).
"""

from __future__ import annotations

from typing import Any

from whatif.errors import NotModelledError, WhatIfError
from whatif.kai.model import build_kai
from whatif.kai.run import declared_kai_pod_sets, simulate_kai
from whatif.pack import StackModel
from whatif.profiles import generate_trace, load_profile, profile_path
from whatif.summary import fmt_seconds, fmt_use, table

HEADING = "### What-if: KAI Scheduler queues under the stack's load profile"
HEADER = [
    "KAI queue",
    "parent",
    "admitted",
    "reclaimed",
    "preempted",
    "wait p50",
    "wait p95",
    "wait max",
    "GPU quota",
    "GPU use (of what it can hold)",
    "never admitted",
]


def _gpus(value: float | None) -> str:
    return "unlimited" if value is None else f"{value:g}"


def kai_cells(fig: dict[str, Any]) -> list[str]:
    """One KAI queue's figures as table cells (every column of :data:`HEADER` but the name)."""
    wait = fig["waitSeconds"]
    cap = fig["gpuCapacity"]
    return [
        f"`{fig['parent']}`" if fig["parent"] else "-",
        str(fig["admitted"]),
        str(fig["reclaimed"]),
        str(fig["preempted"]),
        fmt_seconds(wait["p50"]),
        fmt_seconds(wait["p95"]),
        fmt_seconds(wait["max"]),
        _gpus(fig["gpuQuota"]),
        "-" if cap is None else f"{fmt_use(fig['gpuUtilisation'])} of {cap:g}",
        str(len(fig["neverAdmitted"])),
    ]


def kai_table(queues: dict[str, dict[str, Any]]) -> list[str]:
    return table([[f"`{name}`", *kai_cells(fig)] for name, fig in queues.items()], HEADER)


def kai_starved_lines(queues: dict[str, dict[str, Any]], limit: int = 5) -> list[str]:
    out = []
    for name, fig in queues.items():
        if (
            fig["parent"] is None
            and name != "(no KAI leaf queue)"
            and any(f["parent"] == name for f in queues.values())
        ):
            continue  # a parent lists its leaves' workloads again
        never = fig["neverAdmitted"]
        if never:
            shown = ", ".join(f"`{k}`" for k in never[:limit])
            more = f" and {len(never) - limit} more" if len(never) > limit else ""
            out.append(f"- `{name}`: {shown}{more}")
    return out


def kai_section_lines(stack: str, model: StackModel) -> list[str]:
    out = [HEADING, ""]
    path = profile_path(stack)
    if not path.exists():
        return [*out, f"No load profile (`whatif/{path.name}`): not simulated.", ""]
    try:
        cluster = build_kai(model)  # refusals first: a behaviour not modelled, whatever the profile
        profile = load_profile(path)
        trace = generate_trace(profile, model, path.name, declared_kai_pod_sets)
        result = simulate_kai(model, trace, cluster)
    except NotModelledError as error:
        return [*out, f"**Not simulated:** {error}.", ""]
    except WhatIfError as error:
        return [*out, f"**What-if failed:** {error}", ""]
    nodes = result["nodes"]
    out += [
        f"{len(trace.entries)} PodGroups from `whatif/{path.name}` over {profile.get('hours', 168)} h "
        f"(seed {profile.get('seed', 0)}) on {nodes['count']} GPU nodes ({nodes['gpus']:g} GPUs), simulated "
        "with KAI Scheduler v0.17.0's allocate, reclaim and preempt actions and its proportion plugin "
        "(`python -m whatif`; what is and is not modelled: `whatif/README.md`). *reclaimed*: evicted "
        "so another queue gets back to its fair share; *preempted*: evicted by a higher-priority "
        "PodGroup of the same queue. GPU use is GPU-hours charged to the queue (fractions as "
        "fractions) over what it can hold: the nodes' GPUs, or its (or an ancestor's) GPU limit when "
        "lower; a parent queue sums its children.",
        "",
        *kai_table(result["queues"]),
        "",
    ]
    starved = kai_starved_lines(result["queues"])
    out += ["Never admitted:", "", *starved, ""] if starved else ["Every PodGroup was admitted.", ""]
    out += [f"- note: {n}" for n in result["notes"]]
    return [*out, ""] if result["notes"] else out
