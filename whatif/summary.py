"""Per-queue figures as Markdown: the report's What-if section, the CLI summary and the diff."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

HEADER = [
    "ClusterQueue",
    "admitted",
    "preempted",
    "wait p50",
    "wait p95",
    "wait max",
    "waiting for quota (mean)",
    "waiting for capacity (mean)",
    "GPU use",
    "never admitted",
]


def fmt_seconds(value: float) -> str:
    seconds = float(value)
    if seconds < 120:
        return f"{seconds:g} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def fmt_use(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def cells(figures: dict[str, Any]) -> list[str]:
    wait = figures["waitSeconds"]
    return [
        str(figures["admitted"]),
        str(figures["preempted"]),
        fmt_seconds(wait["p50"]),
        fmt_seconds(wait["p95"]),
        fmt_seconds(wait["max"]),
        fmt_seconds(figures["waitForQuotaSeconds"]),
        fmt_seconds(figures["waitForCapacitySeconds"]),
        fmt_use(figures["gpuUtilisation"]),
        str(len(figures["neverAdmitted"])),
    ]


def side_summary(result: dict[str, Any] | str, name: str, *, never_admitted: bool = False) -> str:
    """One queue of one side of a ``--base`` comparison in a cell: its waits and GPU use (and how
    many were never admitted), the side's refusal when it was not simulated, or that the queue
    does not exist on that side."""
    if isinstance(result, str):
        return result
    fig = result["queues"].get(name)
    if fig is None:
        return "(no such queue)"
    wait = fig["waitSeconds"]
    text = f"p50 {fmt_seconds(wait['p50'])}, p95 {fmt_seconds(wait['p95'])}, GPU {fmt_use(fig['gpuUtilisation'])}"
    return f"{text}, never admitted {len(fig['neverAdmitted'])}" if never_admitted else text


def table(rows: Sequence[Sequence[str]], header: Sequence[str] = HEADER) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return lines


def queue_table(queues: dict[str, dict[str, Any]]) -> list[str]:
    return table([[f"`{name}`", *cells(fig)] for name, fig in queues.items()])


def pool_lines(pools: dict[str, dict[str, Any]]) -> list[str]:
    """One line per node pool behind a ProvisioningRequest flavor: how much of it was held."""
    return [
        f"- node pool `{name}`: {fig['maxNodes']} nodes of {fig['gpusPerNode']} "
        f"GPU{'' if fig['gpusPerNode'] == 1 else 's'}, "
        f"{fmt_use(fig['nodeUtilisation'])} of its node-time held by admitted gangs"
        for name, fig in pools.items()
    ]


def starved_lines(queues: dict[str, dict[str, Any]], limit: int = 5) -> list[str]:
    out = []
    for name, fig in queues.items():
        never = fig["neverAdmitted"]
        if never:
            shown = ", ".join(f"`{k}`" for k in never[:limit])
            more = f" and {len(never) - limit} more" if len(never) > limit else ""
            out.append(f"- `{name}`: {shown}{more}")
    return out
