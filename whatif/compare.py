"""``--base <git ref>``: the same what-if on the stack as it was at ``ref``, and the change per queue.

The stack at ``ref`` is exported with ``git archive`` into a temporary folder and its own offline
preview runs there (``preview.base_plan``) to record its plan; both sides are then
simulated by *this* simulator with *one* trace (the working tree's ``--trace`` or load profile),
so only the stack differs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from preview.base_plan import BasePlanError, check_ref, plan_at
from preview.project import PROJECT_DIR
from whatif.errors import WhatIfError
from whatif.pack import StackModel
from whatif.sources import plan_items
from whatif.summary import cells, fmt_seconds, fmt_use, side_summary, table


def check_base(ref: str, project_dir: Path = PROJECT_DIR) -> None:
    """WhatIfError when git names no commit ``ref`` (``preview.base_plan.check_ref``): asked
    before the head's program runs, as ``python -m preview --base`` asks."""
    try:
        check_ref(ref, project_dir)
    except BasePlanError as error:
        raise WhatIfError(str(error)) from None


def model_at(ref: str, stack: str, project_dir: Path = PROJECT_DIR) -> StackModel:
    try:
        plan = plan_at(ref, stack, project_dir)
    except BasePlanError as error:
        raise WhatIfError(str(error)) from None
    return StackModel.from_plain(plan_items(plan))


def delta(before: str, after: str) -> str:
    """A cell of a diff: the figure, or ``before → after`` when it changed."""
    return after if before == after else f"{before} → {after}"


def _refused_rows(
    queues: list[str], base: dict[str, Any] | str, head: dict[str, Any] | str
) -> list[list[str]]:
    """A side that was not simulated says why in every queue's row, instead of a number."""

    return [[name, side_summary(base, name), side_summary(head, name)] for name in queues]


def _notes(*results: dict[str, Any] | str) -> list[str]:
    notes = [n for r in results if not isinstance(r, str) for n in r.get("notes", [])]
    return [f"- note: {n}" for n in dict.fromkeys(notes)]


def diff_lines(
    stack: str,
    ref: str,
    base: dict[str, Any] | str,
    head: dict[str, Any] | str,
    queues: list[str] | None = None,
) -> list[str]:
    """Markdown: one row per queue, ``before → after`` where a figure changed."""
    out = [f"### What-if `{stack}`: `{ref}` → working tree", ""]
    if isinstance(base, str) or isinstance(head, str):
        out += table(_refused_rows(queues or [], base, head), ["ClusterQueue", f"at {ref}", "working tree"])
        out += [
            "",
            "A side that uses a behaviour the simulator does not model (Topology-Aware Scheduling placement, "
            "MultiKueue, partial admission) is not simulated.",
        ]
        return out + _notes(base, head)
    bq, hq = base["queues"], head["queues"]
    rows = []
    for name in sorted(set(bq) | set(hq)):
        if name not in bq:
            rows.append([name, *["(new) " + c for c in cells(hq[name])]])
        elif name not in hq:
            rows.append([name, *[c + " (removed)" for c in cells(bq[name])]])
        else:
            rows.append([name, *(delta(b, h) for b, h in zip(cells(bq[name]), cells(hq[name]), strict=True))])
    out += table(rows)
    changed = [r for r in rows if any("→" in c or "(new)" in c or "(removed)" in c for c in r[1:])]
    out += ["", f"{len(changed)} of {len(rows)} queues changed." if rows else "No ClusterQueues."]
    notes = dict.fromkeys([*base.get("notes", []), *head.get("notes", [])])
    return out + [f"- note: {n}" for n in notes]


__all__ = ["delta", "diff_lines", "fmt_seconds", "fmt_use", "model_at"]
