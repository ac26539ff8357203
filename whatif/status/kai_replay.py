"""The ETA of pending KAI PodGroups: the KAI what-if (``whatif.kai``) replayed from now.

KAI's queues are cluster-scoped and its nodes are the stack's GPU pools, so the run needs
``--stack``; KAI Queues the caller can read replace the stack's.  Every visible PodGroup is a
trace entry: a running one (``status.resourcesStatus.allocated``) submitted when it last started
(the ``kai.scheduler/last-start-timestamp`` annotation the status updater sets,
KAI v0.17.0 ``pkg/scheduler/cache/status_updater/default_status_updater.go``
``setPodGroupLastStartTimeStamp``; else its creation), so it is placed then and runs its
duration; a pending one submitted now, in creation order.  A gang is ``spec.minMember`` pods, each
asking an equal share of the PodGroup's ``status.resourcesStatus.requested`` (KAI's own sum over
its pods).  The range is the durations' (``--durations``, else the load profile's); other
teams' PodGroups are not visible to a team and are not added to the high end here.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from whatif.amounts import to_amount
from whatif.errors import WhatIfError
from whatif.kai.model import build_kai
from whatif.kai.simulator import simulate
from whatif.pack import StackModel, quantity
from whatif.sources import type_token
from whatif.status.collect import Snapshot
from whatif.status.objects import timestamp
from whatif.status.replay import HORIZON, UNBOUNDED, Eta, Inputs, Item, Range
from whatif.trace import Trace, TraceEntry
from whatif.workload import PodSet

START = "kai.scheduler/last-start-timestamp"
RESOURCES = ("cpu", "memory", "nvidia.com/gpu")


def _running(pg: dict[str, Any]) -> bool:
    allocated = ((pg.get("status") or {}).get("resourcesStatus") or {}).get("allocated") or {}
    return any(str(v) not in ("0", "0m", "") for v in allocated.values())


def _pods(pg: dict[str, Any]) -> tuple[PodSet, ...]:
    count = int((pg.get("spec") or {}).get("minMember") or 1)
    status = (pg.get("status") or {}).get("resourcesStatus") or {}
    total = status.get("requested") or status.get("allocated") or {}
    per_pod: dict[str, int] = {}
    for res in RESOURCES:
        q = quantity(total.get(res, "0"))
        if q.value:
            per_pod[res] = to_amount(Decimal(q.value) / count)
    return (PodSet("main", count, per_pod),)


def _duration(key: str, ns: str, queue: str, inputs: Inputs, high: bool) -> float:
    found: Range | None = inputs.durations.get(key) or inputs.profile.durations.get((ns, queue))
    if found is None:
        return UNBOUNDED if high else 0.0
    return found[1] if high else found[0]


def _items(snap: Snapshot, stack: Sequence[Item]) -> list[Item]:
    """The stack's objects, each KAI Queue the caller can read in place of the stack's of that name."""
    read = {q["metadata"]["name"]: q for q in snap.of("Queue")} if snap.visible("Queue") else {}

    def replaced(item: Item) -> bool:
        token, props = item[0], item[1] or {}
        is_queue = token.startswith("kubernetes:scheduling.run.ai/") and token.endswith(":Queue")
        return is_queue and ((props.get("metadata") or {}).get("name")) in read

    items = [i for i in stack if not replaced(i)]
    items += [(type_token(q), q, f"live:Queue/{name}", name) for name, q in read.items()]
    return items


def kai_etas(snap: Snapshot, now: float, inputs: Inputs, pending: list[dict[str, Any]]) -> dict[str, Eta]:
    """Per pending PodGroup key: the low and high first admission, from two KAI what-if runs."""
    if not inputs.stack:
        raise WhatIfError(
            "KAI's ETA needs --stack: its queues are cluster-scoped and its nodes are the stack's pools"
        )
    cluster = build_kai(StackModel.from_plain(_items(snap, inputs.stack)))
    waiting = {f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in pending}
    results: dict[bool, dict[str, float | None]] = {}
    why: dict[str, str] = {}
    for high in (False, True):
        entries = []
        for pg in sorted(
            snap.of("PodGroup"), key=lambda p: timestamp(p["metadata"].get("creationTimestamp")) or 0.0
        ):
            meta, spec = pg["metadata"], pg.get("spec") or {}
            key = f"{meta['namespace']}/{meta['name']}"
            if key not in waiting and not _running(pg):
                continue
            start = timestamp((meta.get("annotations") or {}).get(START)) or timestamp(
                meta.get("creationTimestamp")
            )
            submit = (start or now) - now if _running(pg) else 0.0
            queue = str(spec.get("queue") or "")
            duration = _duration(key, meta["namespace"], queue, inputs, high)
            entries.append(
                TraceEntry(
                    meta["name"],
                    meta["namespace"],
                    queue,
                    None,
                    spec.get("priorityClassName"),
                    submit,
                    duration,
                    _pods(pg),
                )
            )
        outcome = simulate(cluster, Trace(tuple(entries)))
        first: dict[str, float | None] = {}
        for e in outcome.events:
            if e.workload in waiting and e.event == "admitted" and e.workload not in first:
                first[e.workload] = e.time if e.time < HORIZON else None
            elif e.workload in waiting and e.event == "inadmissible" and not high:
                why[e.workload] = str(e.reason or "")
        results[high] = first
    out = {}
    for key in sorted(waiting):
        low, high_t = results[False].get(key), results[True].get(key)
        eta = Eta(low, high_t)
        if low is None:
            eta.never = why.get(key) or "not admitted in KAI's replay"
        elif high_t is None:
            eta.unbounded = "the high end waits on a PodGroup whose duration is unknown"
        out[key] = eta
    return out
