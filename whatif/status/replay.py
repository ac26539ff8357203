"""The ETA: the what-if simulator replayed from the cluster's current state.

The run starts *now* (time 0) with, as Kueue holds them:
- every visible Workload holding quota seeded where it is (``Simulation.seed``): admitted ones in
  the flavors of ``status.admission`` since their ``Admitted`` transition, ending after their
  duration; ones with quota reserved and a ProvisioningRequest in flight answered after the
  provisioning time left since their latest request was created (when the caller may read
  ProvisioningRequests), else since their ``QuotaReserved`` transition (Kueue creates the request
  right after reserving);
- every visible pending Workload submitted at 0 in Kueue's queue order (priority, then the queue
  order timestamp: ``pkg/cache/queue/cluster_queue.go`` ``queueOrderingFunc``), one whose check is
  in ``Retry`` at its ``lastTransitionTime + requeueAfterSeconds`` (``pkg/workload``
  ``UpdateAdmissionCheckRequeueState``);
- the objects Kueue admits by: the ClusterQueues, Cohorts, ResourceFlavors and AdmissionChecks the
  caller can read, else the stack's declared ones (``--stack``), with the stack's node pools and
  Kueue Configuration.

Two runs give the range.  **low**: durations at the low end, ProvisioningRequests at the low end
of the stack's DWS time, and nothing beyond what is visible.  **high**: durations and DWS time at
the high end, and the work the caller cannot see taken at its largest: a ClusterQueue whose status
is readable holds its reported ``flavorsReservation`` beyond the visible Workloads, one that is not
readable and takes other namespaces' work holds its nominal quota, each for the longest duration
of the load profile; every pending workload the visibility API puts ahead of yours that you cannot
see is taken as large as yours.  A duration nobody knows makes the high end unbounded.

Durations: ``--durations`` (per Workload) first; else the stack's load profile
(``whatif/<stack>.yaml``: ``durationMinutes`` of the stream of the Workload's namespace and
LocalQueue; DWS time ``provisioningDelaySeconds``, victims' release ``evictionDelaySeconds``);
``spec.maximumExecutionTimeSeconds`` caps the high end.  ``whatif/calibration`` holds no job
durations: it shows the simulator's admissions come sooner than Kueue's under its API server's
rate limit (whatif/README.md, Calibration), so the low end is optimistic by those round trips.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from whatif.cluster import Cluster
from whatif.errors import WhatIfError
from whatif.multikueue.run import prepared
from whatif.pack import StackModel
from whatif.simulator import Simulation
from whatif.sources import type_token
from whatif.status.collect import Snapshot
from whatif.status.objects import ADMITTED, CHECKS, PENDING, KueueWorkload, provisioning_requests, timestamp
from whatif.trace import Trace, TraceEntry
from whatif.tree import FlavorResource
from whatif.workload import PodSet, Workload

UNBOUNDED = 1e9  # seconds: a duration nobody knows
HORIZON = UNBOUNDED / 2  # events from here on wait on an unknown duration: not waited for
KUEUE_GROUP = "kueue.x-k8s.io"
MODEL_KINDS = ("ClusterQueue", "Cohort", "ResourceFlavor", "AdmissionCheck", "ProvisioningRequestConfig")

Range = tuple[float, float]
Item = tuple[str, Any, str, str]


@dataclass(frozen=True)
class Profile:
    """What the stack's load profile says about durations (seconds)."""

    durations: Mapping[tuple[str, str], Range] = field(default_factory=dict)  # (namespace, queue)
    provisioning: Range | None = None
    eviction: float = 0.0

    @staticmethod
    def from_doc(doc: Mapping[str, Any] | None) -> Profile:
        if not doc:
            return Profile()
        durations: dict[tuple[str, str], Range] = {}
        for stream in doc.get("arrivals") or []:
            low, high = stream.get("durationMinutes", [60, 60])
            key = (str(stream.get("namespace")), str(stream.get("queue")))
            old = durations.get(key)
            new = (float(low) * 60, float(high) * 60)
            durations[key] = (min(old[0], new[0]), max(old[1], new[1])) if old else new
        raw = doc.get("provisioningDelaySeconds")
        prov: Range | None = None
        if isinstance(raw, list) and len(raw) == 2:
            prov = (float(raw[0]), float(raw[1]))
        elif isinstance(raw, (int, float)):
            prov = (float(raw), float(raw))
        return Profile(durations, prov, float(doc.get("evictionDelaySeconds") or 0))

    def longest(self) -> float | None:
        return max((h for _, h in self.durations.values()), default=None)


@dataclass
class Eta:
    low: float | None  # seconds from now; None: never (see reason)
    high: float | None  # None: never, or unbounded (see reason)
    never: str | None = None  # Kueue (as simulated) never admits it: why
    unbounded: str | None = None  # why the high end has no bound


@dataclass
class Replay:
    etas: dict[str, Eta]
    assumptions: list[str]
    runs: dict[str, list[dict[str, Any]]]  # "low" | "high" -> the simulator's events


def _is_kind(token: str, kind: str) -> bool:
    return token.endswith(f":{kind}") and f":{KUEUE_GROUP}/" in token


def referenced(snap: Snapshot) -> set[str]:
    """The cluster-scoped kinds the replay needs: all of them while the ClusterQueues are not
    visible; else those the visible ClusterQueues name (``cohortName``, admission checks) and the
    ProvisioningRequestConfigs the AdmissionChecks name."""
    if not snap.visible("ClusterQueue"):
        return set(MODEL_KINDS)
    out = {"ClusterQueue", "ResourceFlavor"}
    for cq in snap.of("ClusterQueue"):
        spec = cq.get("spec") or {}
        if spec.get("cohortName") or spec.get("cohort"):
            out.add("Cohort")
        if spec.get("admissionChecks") or spec.get("admissionChecksStrategy"):
            out.add("AdmissionCheck")
    if "AdmissionCheck" in out and (
        not snap.visible("AdmissionCheck")
        or any(
            ((ac.get("spec") or {}).get("parameters") or {}).get("kind") == "ProvisioningRequestConfig"
            for ac in snap.of("AdmissionCheck")
        )
    ):
        out.add("ProvisioningRequestConfig")
    return out


def model_items(
    snap: Snapshot, stack: Sequence[Item], declared_by: str = "the stack"
) -> tuple[list[Item], list[str]]:
    """The visible Kueue objects, and the declared ones (``declared_by``: the stack, or a
    ``--manifests`` file) where a kind is not visible."""
    notes: list[str] = []
    items: list[Item] = []
    from_stack: set[str] = set()
    for kind in MODEL_KINDS:
        if snap.visible(kind):
            for i, doc in enumerate(snap.of(kind)):
                meta = doc.get("metadata") or {}
                items.append(
                    (type_token(doc), doc, f"live:{kind}/{meta.get('name', i)}", str(meta.get("name", i)))
                )
        else:
            from_stack.add(kind)
    seen_lq = set()
    for i, doc in enumerate(snap.of("LocalQueue")):
        meta = doc.get("metadata") or {}
        seen_lq.add((meta.get("namespace"), meta.get("name")))
        items.append(
            (
                type_token(doc),
                doc,
                f"live:LocalQueue/{meta.get('namespace')}/{meta.get('name', i)}",
                str(meta.get("name")),
            )
        )
    for token, props, urn, name in stack:
        if any(_is_kind(token, k) for k in MODEL_KINDS):
            if any(_is_kind(token, k) for k in from_stack):
                items.append((token, props, urn, name))
            continue
        if _is_kind(token, "LocalQueue"):
            meta = (props or {}).get("metadata") or {}
            if (meta.get("namespace"), meta.get("name")) not in seen_lq:
                items.append((token, props, urn, name))
            continue
        if _is_kind(token, "Workload"):
            continue
        items.append((token, props, urn, name))
    from_stack &= referenced(snap)
    if from_stack:
        if stack:
            notes.append(
                f"{', '.join(sorted(from_stack))}: not visible, taken as {declared_by} declares them (a change "
                "made on the cluster since is not seen)"
            )
        else:
            notes.append(f"{', '.join(sorted(from_stack))}: not visible and no --stack or --manifests given")
    return items, notes


def _range(wl: KueueWorkload, given: Mapping[str, Range], profile: Profile) -> Range | None:
    found = given.get(wl.key) or profile.durations.get((wl.namespace, wl.queue))
    cap = wl.spec.get("maximumExecutionTimeSeconds")
    if found is None:
        return (0.0, float(cap)) if cap else None
    low, high = found
    if cap:
        high = min(high, float(cap))
        low = min(low, high)
    return (low, high)


def _sim_workload(wl: KueueWorkload, cluster: Cluster, seq: int, duration: float) -> Workload:
    out = Workload(wl.namespace, wl.name, wl.queue, wl.priority, 0.0, duration, seq, wl.pod_sets())
    out.cluster_queue = cluster.local_queues.get((wl.namespace, wl.queue))
    return out


@dataclass
class _Side:
    """One run of the range, with everything it reads."""

    name: str  # low | high
    high: bool
    snap: Snapshot
    now: float
    given: Mapping[str, Range]
    profile: Profile
    prov: Range | None


def _pick(r: Range | None, side: _Side) -> float:
    if r is None:
        return UNBOUNDED if side.high else 0.0
    return r[1] if side.high else r[0]


def _cluster_of(items: list[Item]) -> Cluster:
    model = StackModel.from_plain(items)
    if not model.cluster_queues():
        raise WhatIfError(
            "no ClusterQueue visible or declared: nothing to replay (pass --stack <s> or --manifests FILE)"
        )
    return prepared(model)


def _nominal(cluster: Cluster, cq: str) -> dict[FlavorResource, int]:
    node = cluster.cluster_queues[cq].node
    return {fr: q.nominal for fr, q in node.quotas.items() if q.nominal}


def _hidden_seed(
    usage: Mapping[FlavorResource, int],
) -> tuple[tuple[PodSet, ...], dict[str, dict[str, str]]]:
    """Usage nobody can see as a workload: one pod set per flavor, each resource in that flavor."""
    by_flavor: dict[str, dict[str, int]] = {}
    for (flavor, res), amount in usage.items():
        if amount > 0:
            by_flavor.setdefault(flavor, {})[res] = amount
    pod_sets = tuple(PodSet(f, 1, req) for f, req in sorted(by_flavor.items()))
    return pod_sets, {f: {r: f for r in req} for f, req in by_flavor.items()}


def _reserved_usage(cq_obj: Mapping[str, Any]) -> dict[FlavorResource, int]:
    from whatif.amounts import to_amount
    from whatif.pack import quantity

    out: dict[FlavorResource, int] = {}
    for fu in (cq_obj.get("status") or {}).get("flavorsReservation") or []:
        for r in fu.get("resources") or []:
            q = quantity(r.get("total", "0"))
            if q.value is not None:
                out[(str(fu.get("name")), str(r.get("name")))] = to_amount(q.value)
    return out


@dataclass(frozen=True)
class Inputs:
    """What the replay rests on beyond the cluster's state: the stack's declared objects, its load
    profile, durations the user gives, the DWS time."""

    stack: Sequence[Item] = ()
    profile: Profile = field(default_factory=Profile)
    durations: Mapping[str, Range] = field(default_factory=dict)
    provisioning: Range | None = None
    declared_by: str = "the stack"  # where ``stack`` comes from, for the notes


def replay(snap: Snapshot, now: float, inputs: Inputs) -> Replay:
    profile = inputs.profile
    items, notes = model_items(snap, inputs.stack, inputs.declared_by)
    given = inputs.durations
    prov = inputs.provisioning or profile.provisioning
    workloads = [KueueWorkload(o) for o in snap.of("Workload")]
    mine = {w.key for w in workloads if w.namespace in snap.namespaces and w.state() in (PENDING, CHECKS)}
    assumptions = list(notes)
    unknown = sorted(
        w.key
        for w in workloads
        if w.state() in (ADMITTED, CHECKS, PENDING) and _range(w, given, profile) is None
    )
    if unknown:
        assumptions.append(
            f"no duration known for {', '.join(unknown[:5])}{' ...' if len(unknown) > 5 else ''}: "
            "0 s at the low end, unbounded at the high end (give --durations or --stack)"
        )
    assumptions += _hidden_notes(snap)
    if not inputs.stack:
        assumptions.append(
            "Kueue's Configuration (a ConfigMap in kueue-system) is not read: fair sharing and admission fair "
            "sharing are taken as off (--stack gives the stack's)"
        )
    runs: dict[str, list[dict[str, Any]]] = {}
    results: dict[str, dict[str, tuple[float | None, str | None]]] = {}
    for upper in (False, True):
        side = _Side("high" if upper else "low", upper, snap, now, given, profile, prov)
        cluster = _cluster_of(items)
        events = _run(cluster, workloads, side)
        runs[side.name] = events
        results[side.name] = _first_admissions(events, mine)
    etas: dict[str, Eta] = {}
    for key in sorted(mine):
        low, never = results["low"].get(key, (None, None))
        high, _ = results["high"].get(key, (None, None))
        eta = Eta(low, high)
        if low is None:
            eta.never = never or "not admitted in the replay"
        elif high is None:
            eta.unbounded = "the high end waits on work whose duration is unknown or on work you cannot see"
        etas[key] = eta
    if prov is None and any(cq.provisioning for cq in cluster.cluster_queues.values()):
        assumptions.append(
            "DWS provisioning time unknown (no --stack profile, no --provisioning-delay): 0 s at the low end, "
            "unbounded at the high end"
        )
    assumptions += cluster.notes
    return Replay(etas, assumptions, runs)


def _hidden_notes(snap: Snapshot) -> list[str]:
    out = []
    if not snap.others_visible("Workload"):
        out.append(
            "other teams' Workloads are not visible: the high end counts their quota as taken (a ClusterQueue "
            "you cannot read that takes other namespaces' work at its nominal quota, for the profile's longest run)"
        )
    if snap.order_unknown:
        out.append(
            "Kueue's queue order not read for "
            + ", ".join(f"{k} ({why})" for k, why in sorted(snap.order_unknown.items()))
            + ": pending work is ordered by priority, then age, as Kueue orders it"
        )
    return out


def _run(cluster: Cluster, workloads: list[KueueWorkload], side: _Side) -> list[dict[str, Any]]:
    snap, now, given, profile, prov = side.snap, side.now, side.given, side.profile, side.prov
    pending = [w for w in workloads if w.state() == PENDING]
    pending.sort(key=lambda w: (-w.priority, w.queue_order_time(), w.key))
    entries: list[TraceEntry] = []
    hidden = _hidden_ahead(snap, pending) if side.high else {}
    for w in pending:
        checks = w.status.get("admissionChecks") or []
        if any(c.get("state") == "Rejected" for c in checks):
            continue
        submit = 0.0
        for c in checks:
            after = c.get("requeueAfterSeconds")
            t = timestamp(c.get("lastTransitionTime"))
            if c.get("state") == "Retry" and after is not None and t is not None:
                submit = max(submit, t + float(after) - now)
        duration = _pick(_range(w, given, profile), side)
        for n in range(hidden.get(w.key, 0)):
            entries.append(
                TraceEntry(
                    f"hidden-ahead-{n}-{w.name}",
                    w.namespace + "~hidden",
                    w.queue,
                    w.priority,
                    None,
                    submit,
                    duration,
                    w.pod_sets(),
                )
            )
        entries.append(
            TraceEntry(w.name, w.namespace, w.queue, w.priority, None, submit, duration, w.pod_sets())
        )
    delay: float = (prov[1] if side.high else prov[0]) if prov else (UNBOUNDED if side.high else 0.0)
    trace = Trace(tuple(entries), delay, profile.eviction)
    sim = Simulation(cluster, trace, provisioning_delay=delay, eviction_delay=profile.eviction)
    attempts = {w.key: _attempts(w) for w in pending}
    for wl in sim.workloads:  # the hidden copies go to their workload's ClusterQueue
        if wl.namespace.endswith("~hidden"):
            wl.cluster_queue = cluster.local_queues.get((wl.namespace.removesuffix("~hidden"), wl.queue))
        wl.failed_requests = attempts.get(wl.key, 0)  # Kueue's retryCount: the retries left
    sim.start()
    _seed(sim, cluster, workloads, side)
    while sim.next_time() < HORIZON:  # events and the requeuer's batches (whatif.requeuer)
        sim.step()
    return [e.to_json() for e in sim.events]


def _attempts(w: KueueWorkload) -> int:
    """Failed ProvisioningRequest attempts so far: the checks' ``retryCount`` (Kueue v0.19.2
    ``AdmissionCheckState.RetryCount``, incremented on every transition to Retry)."""
    return max((int(c.get("retryCount") or 0) for c in w.status.get("admissionChecks") or []), default=0)


def _hidden_ahead(snap: Snapshot, pending: list[KueueWorkload]) -> dict[str, int]:
    """Per own pending workload: pending work ahead of it the visibility API counts and the caller
    cannot see (``positionInClusterQueue`` minus the visible workloads ahead), not yet counted
    for a workload before it."""
    out: dict[str, int] = {}
    placed: dict[str, int] = {}
    by_cq: dict[str, list[KueueWorkload]] = {}
    lq_cq = {
        ((o.get("metadata") or {}).get("namespace"), (o.get("metadata") or {}).get("name")): (
            o.get("spec") or {}
        ).get("clusterQueue")
        for o in snap.of("LocalQueue")
    }
    for w in pending:
        by_cq.setdefault(str(lq_cq.get((w.namespace, w.queue))), []).append(w)
    for cq, ws in by_cq.items():
        for i, w in enumerate(ws):
            pos = snap.positions.get(w.key)
            if pos is None:
                continue
            extra = max(pos[0] - i - placed.get(cq, 0), 0)
            if extra:
                out[w.key] = extra
                placed[cq] = placed.get(cq, 0) + extra
    return out


def _seed(sim: Simulation, cluster: Cluster, workloads: list[KueueWorkload], side: _Side) -> None:
    snap, now, given, profile, prov = side.snap, side.now, side.given, side.profile, side.prov
    seq = len(sim.workloads)
    used: dict[str, dict[FlavorResource, int]] = {}
    for w in workloads:
        state = w.state()
        if state not in (ADMITTED, CHECKS):
            continue
        cq = w.cluster_queue()
        if cq is None or cq not in cluster.cluster_queues:
            continue
        duration = _pick(_range(w, given, profile), side)
        wl = _sim_workload(w, cluster, seq, duration)
        wl.cluster_queue = cq
        seq += 1
        if state == ADMITTED:
            since = (w.since("Admitted") or now) - now
            left = duration + since
            if left < 0:  # ran past the duration assumed: low ends it now, high gives it that long again
                left = duration if side.high else 0.0
            sim.seed(
                wl, w.admitted_flavors(), reserved_at=since, finish_at=left if duration < UNBOUNDED else None
            )
        else:
            requests = provisioning_requests(w, snap.of("ProvisioningRequest"))
            started = (
                timestamp((requests[-1].get("metadata") or {}).get("creationTimestamp")) if requests else None
            )
            since = (started or w.since("QuotaReserved") or now) - now
            wl.failed_requests = _attempts(w)
            delay = (prov[1] if side.high else prov[0]) if prov else (UNBOUNDED if side.high else 0.0)
            sim.seed(
                wl, w.admitted_flavors(), reserved_at=since, finish_at=None, check_at=max(delay + since, 0.0)
            )
        for fr, amount in wl.usage.items():
            used.setdefault(cq, {})[fr] = used.setdefault(cq, {}).get(fr, 0) + amount
    if not side.high:
        return
    longest = profile.longest()
    finish = longest if longest is not None else None
    visible_cqs = {str((o.get("metadata") or {}).get("name")): o for o in snap.of("ClusterQueue")}
    own_cqs = {cq for (ns, _), cq in cluster.local_queues.items() if ns in snap.namespaces}
    fed_by_others = {cq for (ns, _), cq in cluster.local_queues.items() if ns not in snap.namespaces}
    for cq in sorted(cluster.cluster_queues):
        if cq in visible_cqs:
            target = _reserved_usage(visible_cqs[cq])
        elif snap.others_visible("Workload") or (cq in own_cqs and cq not in fed_by_others):
            continue
        else:
            target = _nominal(cluster, cq)
        mine = used.get(cq, {})
        hidden = {fr: amount - mine.get(fr, 0) for fr, amount in target.items() if amount > mine.get(fr, 0)}
        if not hidden:
            continue
        pod_sets, flavors = _hidden_seed(hidden)
        wl = Workload("~hidden", cq, "~hidden", 0, 0.0, finish or UNBOUNDED, seq, pod_sets)
        seq += 1
        wl.cluster_queue = cq
        sim.seed(wl, flavors, reserved_at=0.0, finish_at=finish)


def _first_admissions(
    events: list[dict[str, Any]], keys: set[str]
) -> dict[str, tuple[float | None, str | None]]:
    out: dict[str, tuple[float | None, str | None]] = {}
    for e in events:
        key = e["workload"]
        if key not in keys:
            continue
        if e["event"] == "admitted" and (key not in out or out[key][0] is None):
            t = float(e["time"])
            out[key] = (t if math.isfinite(t) and t < HORIZON else None, None)
        elif e["event"] == "inadmissible" and (key not in out or out[key][0] is None):
            out[key] = (None, str(e.get("reason") or ""))  # the last word: why it ends unadmitted
    return out
