"""``--base <git ref>`` for KAI queues: the change per KAI queue between the stack at ``ref`` and
the working tree.

Both sides are simulated by this KAI what-if with one trace (the working tree's ``--trace`` or
its load profile, ``declared`` shapes resolved on the working tree's objects, or on the base's
when the working tree has no KAI queues), so only the stack differs: the queue tree (quota, limit,
over-quota weight, priority), the priority classes and the GPU nodes.  A side without KAI queues
has no rows (every queue of the other side is new or removed); a side using a KAI behaviour the
what-if refuses says so in every row, as the Kueue diff does (:mod:`whatif.compare`).
"""

from __future__ import annotations

from typing import Any

from whatif.compare import delta
from whatif.errors import NotModelledError
from whatif.kai.run import has_kai_queues, simulate_kai
from whatif.kai.section import HEADER, kai_cells
from whatif.pack import StackModel
from whatif.summary import side_summary, table
from whatif.trace import Trace

Side = dict[str, Any] | str

NO_KAI: dict[str, Any] = {"queues": {}, "notes": []}


def simulate_side(model: StackModel, trace: Trace) -> Side:
    """The side's KAI document; no queues when it has no KAI objects; the refusal as a string."""
    if not has_kai_queues(model):
        return NO_KAI
    try:
        return simulate_kai(model, trace)
    except NotModelledError as error:
        return f"not simulated: {error}"


def _names(*results: Side) -> list[str]:
    return sorted({n for r in results if not isinstance(r, str) for n in r["queues"]})


def kai_diff_lines(
    stack: str, ref: str, base: Side, head: Side, queues: list[str] | None = None
) -> list[str]:
    """Markdown: one row per KAI queue, ``before → after`` where a figure changed."""
    out = [f"### What-if `{stack}` KAI queues: `{ref}` → working tree", ""]
    names = queues if queues is not None else _names(base, head)
    notes = dict.fromkeys(n for r in (base, head) if not isinstance(r, str) for n in r.get("notes", []))
    if isinstance(base, str) or isinstance(head, str):
        rows = [
            [f"`{n}`", side_summary(base, n, never_admitted=True), side_summary(head, n, never_admitted=True)]
            for n in names
        ]
        out += table(rows, ["KAI queue", f"at {ref}", "working tree"])
        out += ["", "A side that uses a KAI behaviour the what-if does not model is not simulated."]
        return out + [f"- note: {n}" for n in notes]
    bq, hq = base["queues"], head["queues"]
    rows = []
    for name in names:
        if name not in bq:
            rows.append([f"`{name}`", *["(new) " + c for c in kai_cells(hq[name])]])
        elif name not in hq:
            rows.append([f"`{name}`", *[c + " (removed)" for c in kai_cells(bq[name])]])
        else:
            before, after = kai_cells(bq[name]), kai_cells(hq[name])
            rows.append([f"`{name}`", *(delta(b, h) for b, h in zip(before, after, strict=True))])
    out += table(rows, HEADER)
    changed = [r for r in rows if any("→" in c or "(new)" in c or "(removed)" in c for c in r[1:])]
    out += ["", f"{len(changed)} of {len(rows)} KAI queues changed." if rows else "No KAI queues."]
    return out + [f"- note: {n}" for n in notes]


def queue_names(model: StackModel) -> set[str]:
    """The side's KAI queues (declared and the chart's), read without simulating."""
    from gpu_batch_policy.facts.kai.tree import QueueTree

    return set(QueueTree(model).nodes) if has_kai_queues(model) else set()


def kai_compare_lines(
    stack: str, ref: str, base_model: StackModel, head_model: StackModel, trace: Trace
) -> list[str]:
    """Simulate both sides with ``trace`` and diff them per KAI queue."""
    base, head = simulate_side(base_model, trace), simulate_side(head_model, trace)
    names = queue_names(base_model) | queue_names(head_model) | set(_names(base, head))
    return kai_diff_lines(stack, ref, base, head, sorted(names))
