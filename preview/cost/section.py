"""The report's "GPU cost per team" section and, with ``--base``, each team's change.

Rows are ClusterQueues (and KAI queues): a queue is the unit Kueue charges quota to, and its
teams are the LocalQueues that submit to it.  Unpriced figures say so, with why; a total that
misses a flavor is marked incomplete.  Against a base plan, only queues whose figures changed
are listed, largest change first, so a quota change on one ClusterQueue shows one row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

UNPRICED = "unpriced"
Table = Callable[[Sequence[str], Iterable[Sequence[object]]], list[str]]


def _amount(value: str | None, currency: str | None, complete: bool = True) -> str:
    if value is None:
        return UNPRICED
    text = f"{value} {currency or ''}".strip()
    return text if complete else f"{text} (incomplete)"


def _why(queue: Mapping[str, Any]) -> str:
    reasons = sorted({f["unpriced"] for f in queue["flavors"] if f["unpriced"]})
    return "; ".join(reasons) or "-"


def _sources(queue: Mapping[str, Any]) -> str:
    cited = sorted(
        {
            f"{p['price']['source']} ({p['price']['effective']})"
            for f in queue["flavors"]
            for p in f["pools"]
            if p["price"] is not None
        }
    )
    return ", ".join(cited) or "-"


def _week(queue: Mapping[str, Any]) -> str:
    hours = queue.get("expectedWeeklyGpuHours")
    if hours is None:
        return "no what-if"
    return f"{hours} GPU-h: {_amount(queue.get('expectedWeekly'), queue['currency'])}"


def _gpus(queue: Mapping[str, Any], key: str) -> str:
    values = [f[key] for f in queue["flavors"]]
    if any(v is None for v in values):
        return "unknown"
    return f"{sum((Decimal(v) for v in values), Decimal(0)).normalize():f}"


def cost_section(document: Mapping[str, Any], table: Table) -> list[str]:
    out = ["### GPU cost per team", ""]
    queues = document["queues"]
    if not queues:
        return [*out, "No Kueue ClusterQueues or KAI queues with GPU quota: nothing to price.", ""]
    rows = []
    for q in queues:
        complete = bool(q["complete"])
        rows.append(
            [
                q["queue"],
                ", ".join(q["teams"]) or "-",
                _gpus(q, "nominalGpus"),
                _amount(q["nominalPerHour"], q["currency"], complete),
                _amount(q["ceilingPerHour"], q["currency"], complete),
                _week(q),
                f"{_gpus(q, 'unservableGpus')} GPUs: {_amount(q['unservablePerHour'], q['currency'], complete)}",
                _amount(q["committedPerHour"], q["currency"]) if q["committedPerHour"] else "-",
                _why(q),
                _sources(q),
            ]
        )
    out += table(
        [
            "queue",
            "teams",
            "nominal GPUs",
            "per hour at nominal",
            "per hour at borrowing ceiling",
            "expected week (what-if)",
            "quota the pools can never serve",
            "of which committed (reservation)",
            "unpriced because",
            "price source",
        ],
        rows,
    )
    return [
        *out,
        "",
        "Node-hour prices per machine type, region and provisioning model (queued provisioning is "
        "DWS capacity, priced as flex-start) from `preview/cost/prices.yaml` and the stack's "
        "`gpuPrices`; the expected week is the what-if's GPU-hours for the queue under the stack's "
        "load profile (`whatif/<stack>.yaml`) over a 168-hour week, each GPU flavor's at its own price "
        "(KAI queues: the KAI what-if's); a GPU-hour is the node-hour over the GPUs per node. *unpriced* means no cited "
        "price covers it, never $0. Reservation pools are committed cost, not new spend. "
        "Figures: `build/<stack>/cost.json`.",
        "",
        *_management_line(document.get("clusterManagement")),
    ]


def _management_line(management: Mapping[str, Any] | None) -> list[str]:
    """GKE's cluster management fee: the stack's, not a team's."""
    if not management or not management["clusters"]:
        return []
    price = management["price"]
    if price is None:
        return [f"GKE cluster management fee for {management['clusters']} cluster(s): {UNPRICED}.", ""]
    return [
        f"GKE cluster management fee: {management['clusters']} cluster(s) x {price['perClusterHour']} "
        f"{price['currency']} per hour = {management['perHour']} {price['currency']} per hour, in no team's "
        f"row, before the free tier's monthly credit ({price['source']}, {price['effective']}).",
        "",
    ]


def cost_changes(base: Mapping[str, Any], head: Mapping[str, Any], ref: str, table: Table) -> list[str]:
    """Each queue whose figures differ between ``base`` and ``head``, largest change first."""
    before = {q["queue"]: q for q in base["queues"]}
    after = {q["queue"]: q for q in head["queues"]}
    rows: list[tuple[Decimal, str, list[object]]] = []
    for name in sorted(set(before) | set(after)):
        b, h = before.get(name), after.get(name)
        if _figures(b) == _figures(h):
            continue
        delta = _delta(b, h, "nominalPerHour")
        gpus = _delta(b, h, "nominalGpus")
        size = abs(delta) if delta is not None else abs(gpus or Decimal(0))
        currency = (h or b or {}).get("currency")
        rows.append(
            (
                size,
                name,
                [
                    name,
                    f"{_gpus(b, 'nominalGpus') if b else '-'} -> {_gpus(h, 'nominalGpus') if h else '-'}",
                    _amount(b["nominalPerHour"], currency) if b else "-",
                    _amount(h["nominalPerHour"], currency) if h else "-",
                    _signed(delta, currency),
                    f"{_amount(b['ceilingPerHour'], currency) if b else '-'} -> "
                    f"{_amount(h['ceilingPerHour'], currency) if h else '-'}",
                ],
            )
        )
    out = [f"### GPU cost against `{ref}`", ""]
    if not rows:
        return [*out, "No queue's GPU quota or price changed.", ""]
    rows.sort(key=lambda r: (-r[0], r[1]))
    out += table(
        [
            "queue",
            "nominal GPUs",
            "per hour at base",
            "per hour here",
            "change",
            "borrowing ceiling per hour",
        ],
        [r[2] for r in rows],
    )
    return [*out, ""]


def _figures(queue: Mapping[str, Any] | None) -> Any:
    """What a quota or price change moves.  Not the expected week: one queue's quota can shift
    every queue's simulated use, and the changes table is about what the config bought."""
    if queue is None:
        return None
    flavors = [{k: v for k, v in f.items() if k not in _NOT_COMPARED} for f in queue["flavors"]]
    return flavors, queue["nominalPerHour"]


_NOT_COMPARED = frozenset({"pools", "expectedWeeklyGpuHours", "expectedWeekly"})


def _delta(b: Mapping[str, Any] | None, h: Mapping[str, Any] | None, key: str) -> Decimal | None:
    def value(q: Mapping[str, Any] | None) -> Decimal | None:
        if q is None:
            return Decimal(0)
        if key == "nominalGpus":
            text = _gpus(q, key)
            return None if text == "unknown" else Decimal(text)
        return None if q[key] is None else Decimal(q[key])

    before, after = value(b), value(h)
    return None if before is None or after is None else after - before


def _signed(delta: Decimal | None, currency: str | None) -> str:
    if delta is None:
        return UNPRICED
    return f"{'+' if delta >= 0 else ''}{delta} {currency or ''}".strip()
