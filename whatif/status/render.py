"""The report for people (a terminal table), for tools (JSON) and for chat (one line)."""

from __future__ import annotations

from typing import Any

from whatif.status.report import QUEUE_ORDER_FALLBACK, Report, eta_json, eta_text, iso

SHORT = {
    "quota": "waiting for quota",
    "max-quota": "asks more than the queue can ever hold",
    "taint": "no flavor it tolerates",
    "affinity": "no flavor its nodeSelector matches",
    "resource": "a resource the queue has no quota for",
    "preempting": "preempting to make room",
    "checks": "waiting for capacity (admission check)",
    "queue": "queue misconfigured",
    "other": "see reason",
}


def to_json(report: Report) -> dict[str, Any]:
    pending: list[dict[str, Any]] = []
    for ex, eta in report.kueue:
        pending.append(
            {
                "workload": ex.workload,
                "scheduler": "kueue",
                "state": ex.state,
                "clusterQueue": ex.cluster_queue,
                "reason": ex.reason(),
                "change": ex.change(),
                "kueue": ex.kueue,
                "ahead": ex.ahead,
                "aheadNotVisible": ex.ahead_hidden,
                "queuePosition": (
                    {"clusterQueue": ex.position[0], "localQueue": ex.position[1]}
                    if ex.position is not None
                    else None
                ),
                "eta": eta_json(eta, report.now, report.eta_error),
            }
        )
    for kx in report.kai:
        pending.append(
            {
                "workload": kx.workload,
                "scheduler": "kai",
                "state": "pending",
                "queue": kx.queue,
                "nodePool": kx.node_pool,
                "reason": kx.reason(),
                "change": kx.changes,
                "kai": kx.kai,
                "queueStatus": kx.queue_status,
                "eta": eta_json(report.kai_etas.get(kx.workload), report.now, report.kai_eta_error),
            }
        )
    return {
        "now": iso(report.now),
        "namespaces": list(report.namespaces),
        "pending": pending,
        "notVisible": report.not_visible,
        "queueOrderNotRead": {
            lq: f"{why}: {QUEUE_ORDER_FALLBACK}" for lq, why in sorted(report.order_unknown.items())
        },
        "assumptions": report.assumptions,
    }


def _order_lines(report: Report) -> list[str]:
    if not report.order_unknown:
        return []
    lines = ["", "Kueue's queue order (visibility API pendingworkloads) not read:"]
    lines += [f"  {lq}: {why}" for lq, why in sorted(report.order_unknown.items())]
    return [*lines, f"  {QUEUE_ORDER_FALLBACK}"]


def _kinds(report: Report) -> list[str]:
    out = []
    for ex, _ in report.kueue:
        kinds = sorted({b.kind for b in ex.blockers}) or ["other"]
        out.append(", ".join(SHORT.get(k, k) for k in kinds))
    return out


def table(report: Report) -> list[str]:
    rows = [("WORKLOAD", "STATE", "ETA", "WHY")]
    for (ex, eta), why in zip(report.kueue, _kinds(report), strict=True):
        rows.append((ex.workload, ex.state, eta_text(eta), why))
    for kx in report.kai:
        rows.append(
            (
                kx.workload,
                "pending (KAI)",
                eta_text(report.kai_etas.get(kx.workload)),
                ", ".join(kx.kinds) or "see reason",
            )
        )
    if len(rows) == 1:
        return [f"nothing pending in {', '.join(report.namespaces)} at {iso(report.now)}"]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    for ex, eta in report.kueue:
        lines += ["", f"{ex.workload}: {ex.reason()}"]
        note = (eta.never or eta.unbounded) if eta is not None else None
        if note:
            lines.append(f"  ETA {eta_text(eta)}: {note}")
        if ex.kueue.get("message"):
            lines.append(f"  Kueue ({ex.kueue.get('reason')}): {ex.kueue['message']}")
        for c in ex.kueue.get("admissionChecks") or []:
            lines.append(f"  check {c.get('name')}: {c.get('state')} {c.get('message') or ''}".rstrip())
        for change in ex.change():
            lines.append(f"  to change: {change}")
    for kx in report.kai:
        lines += ["", f"{kx.workload} (KAI queue {kx.queue}): {kx.reason()}"]
        for change in kx.changes:
            lines.append(f"  to change: {change}")
        if kx.queue_status:
            lines.append(f"  {kx.queue_status}")
    if report.eta_error:
        lines += ["", f"ETA not replayed: {report.eta_error}"]
    if report.kai_eta_error:
        lines += ["", f"KAI ETA not replayed: {report.kai_eta_error}"]
    lines += _order_lines(report)
    if report.not_visible:
        lines += ["", "not visible with your rights (not absent):"]
        lines += [f"  {what}: {why}" for what, why in sorted(report.not_visible.items())]
    if report.assumptions:
        lines += ["", "the ETA assumes:"]
        lines += [f"  {a}" for a in report.assumptions]
    return lines


def summary(report: Report) -> str:
    """One line for a chat message."""
    parts = []
    for (ex, eta), why in zip(report.kueue, _kinds(report), strict=True):
        parts.append(f"{ex.workload} {eta_text(eta)} ({why})")
    parts += [
        f"{kx.workload} {eta_text(report.kai_etas.get(kx.workload))} (KAI: {', '.join(kx.kinds) or 'see reason'})"
        for kx in report.kai
    ]
    if not parts:
        return f"nothing pending in {', '.join(report.namespaces)}"
    kinds = sorted({what.split(" ")[0] for what in report.not_visible})
    if report.order_unknown:
        kinds.append("Kueue's queue order")
    hidden = f" [not visible: {', '.join(kinds)}]" if kinds else ""
    return f"{len(parts)} pending: " + "; ".join(parts) + hidden
