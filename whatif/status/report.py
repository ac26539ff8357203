"""One status report: every pending Workload (and KAI PodGroup) of the user's namespaces with
Kueue's (KAI's) own reason, the work ahead of it, and the replayed ETA; what was not visible and
what the ETA rests on."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from whatif.errors import WhatIfError
from whatif.status.collect import Snapshot
from whatif.status.explain import Explanation, explain
from whatif.status.kai import KaiExplanation, explain_podgroup, pending_podgroups
from whatif.status.kai_replay import kai_etas
from whatif.status.objects import (
    ADMITTED,
    CHECKS,
    INACTIVE,
    PENDING,
    KueueWorkload,
    duration_text,
    provisioning_requests,
)
from whatif.status.replay import MODEL_KINDS, Eta, Inputs, referenced, replay


@dataclass
class Report:
    now: float
    namespaces: tuple[str, ...]
    kueue: list[tuple[Explanation, Eta | None]] = field(default_factory=list)
    kai: list[KaiExplanation] = field(default_factory=list)
    not_visible: dict[str, str] = field(default_factory=dict)
    assumptions: list[str] = field(default_factory=list)
    eta_error: str | None = None
    kai_etas: dict[str, Eta] = field(default_factory=dict)
    kai_eta_error: str | None = None
    # "<namespace>/<name>" of a LocalQueue with pending work -> why Kueue's visibility API did not
    # give its order: the pending Workloads were read instead (see ``QUEUE_ORDER_FALLBACK``)
    order_unknown: dict[str, str] = field(default_factory=dict)


QUEUE_ORDER_FALLBACK = (
    "the pending Workloads were read instead and ordered as Kueue orders them (priority, then "
    "creation); pending work of other teams ahead of yours is not counted"
)


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _lq_cluster_queue(snap: Snapshot) -> dict[tuple[str, str], str]:
    out = {}
    for lq in snap.of("LocalQueue"):
        meta = lq.get("metadata") or {}
        out[(str(meta.get("namespace")), str(meta.get("name")))] = str(
            (lq.get("spec") or {}).get("clusterQueue")
        )
    return out


def _ahead(
    mine: KueueWorkload, cq: str | None, pending: list[KueueWorkload], lq_cq: Mapping[tuple[str, str], str]
) -> list[str]:
    order = sorted(pending, key=lambda w: (-w.priority, w.queue_order_time(), w.key))
    out = []
    for w in order:
        if w.key == mine.key:
            break
        if lq_cq.get((w.namespace, w.queue)) == cq:
            out.append(f"{w.key} (priority {w.priority})")
    return out


def build(snap: Snapshot, now: float, inputs: Inputs | None = None) -> Report:
    report = Report(now, snap.namespaces, not_visible=dict(snap.not_visible))
    workloads = [KueueWorkload(o) for o in snap.of("Workload")]
    pending = [w for w in workloads if w.state() == PENDING]
    lq_cq = _lq_cluster_queue(snap)
    mine = [
        w for w in workloads if w.namespace in snap.namespaces and w.state() in (PENDING, CHECKS, INACTIVE)
    ]
    etas: dict[str, Eta] = {}
    if any(w.state() == PENDING for w in mine):
        try:
            result = replay(snap, now, inputs or Inputs())
            etas = result.etas
            report.assumptions = result.assumptions
        except WhatIfError as error:
            report.eta_error = str(error)
    for w in mine:
        cq = w.cluster_queue() or lq_cq.get((w.namespace, w.queue))
        ex = explain(w, cq, now)
        if w.state() == PENDING:
            ex.ahead = _ahead(w, cq, pending, lq_cq)
            pos = snap.positions.get(w.key)
            ex.position = pos
            if pos is not None:
                ex.ahead_hidden = max(pos[0] - len(ex.ahead), 0)
            lq = f"{w.namespace}/{w.queue}"
            if lq in snap.order_unknown:
                report.order_unknown[lq] = snap.order_unknown[lq]
            ex.held_by = _holders(ex, workloads, now)
        requests = provisioning_requests(w, snap.of("ProvisioningRequest"))
        if requests:
            ex.kueue["provisioningRequests"] = [
                {
                    "name": pr["metadata"]["name"],
                    "conditions": (pr.get("status") or {}).get("conditions") or [],
                }
                for pr in requests
            ]
        report.kueue.append((ex, etas.get(w.key)))
    queues = (
        {str((q.get("metadata") or {}).get("name")): q for q in snap.of("Queue")}
        if snap.visible("Queue")
        else None
    )
    waiting = pending_podgroups(snap.of("PodGroup"), snap.namespaces)
    for pg in waiting:
        report.kai.append(explain_podgroup(pg, queues))
    if waiting:
        try:
            report.kai_etas = kai_etas(snap, now, inputs or Inputs(), waiting)
        except WhatIfError as error:
            report.kai_eta_error = str(error)
    report.not_visible = _relevant(report.not_visible, snap, report, mine)
    return report


def _relevant(
    not_visible: dict[str, str], snap: Snapshot, report: Report, mine: list[KueueWorkload]
) -> dict[str, str]:
    """What was not visible and matters: KAI's kinds where a KAI PodGroup is pending, the
    ProvisioningRequests where a workload has admission checks, the cluster-scoped kinds the
    replay needs (:func:`~whatif.status.replay.referenced`)."""
    needed = referenced(snap)
    checks = any(w.status.get("admissionChecks") for w in mine)
    out = {}
    for what, why in not_visible.items():
        kind = what.split(" ")[0]
        if kind in ("PodGroup", "Queue") and not report.kai:
            continue
        if kind == "ProvisioningRequest" and not checks:
            continue
        if kind in MODEL_KINDS and kind not in needed:
            continue
        if kind in (*MODEL_KINDS, "LocalQueue", "Workload") and report.kai and not report.kueue:
            continue  # a KAI team: Kueue's kinds are no news
        out[what] = why
    return out


def _holders(ex: Explanation, workloads: list[KueueWorkload], now: float) -> list[str]:
    """The visible workloads holding quota of the flavors a quota blocker names, in its ClusterQueue."""
    flavors = {b.flavor for b in ex.blockers if b.kind == "quota" and b.flavor}
    out = []
    for w in workloads:
        if w.state() not in (ADMITTED, CHECKS) or w.cluster_queue() != ex.cluster_queue:
            continue
        used = {f for res in w.admitted_flavors().values() for f in res.values()}
        if used & flavors:
            since = w.since("Admitted") if w.state() == ADMITTED else w.since("QuotaReserved")
            what = "running" if w.state() == ADMITTED else "reserved, waiting for its checks"
            ago = f" for {duration_text(now - since)}" if since is not None else ""
            out.append(f"{w.key} ({what}{ago})")
    return out


def eta_json(eta: Eta | None, now: float, error: str | None) -> dict[str, Any]:
    if eta is None:
        return {"low": None, "high": None, "text": f"not replayed: {error}" if error else "not replayed"}
    out: dict[str, Any] = {"lowSeconds": eta.low, "highSeconds": eta.high}
    out["lowAt"] = iso(now + eta.low) if eta.low is not None else None
    out["highAt"] = iso(now + eta.high) if eta.high is not None else None
    if eta.never:
        out["never"] = eta.never
    if eta.unbounded:
        out["unbounded"] = eta.unbounded
    out["text"] = eta_text(eta)
    return out


def eta_text(eta: Eta | None) -> str:
    if eta is None:
        return "unknown"
    if eta.low is None:
        return "never"
    if eta.low == 0 and eta.high == 0:
        return "now"
    low = duration_text(eta.low)
    if eta.high is None:
        return f"{'now' if eta.low == 0 else 'in ' + low} or later (no upper bound)"
    if eta.high == eta.low:
        return f"in {low}"
    return f"{'now' if eta.low == 0 else 'in ' + low} to {duration_text(eta.high)}"
