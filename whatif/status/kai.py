"""KAI Scheduler's own reason for a pending PodGroup (kai-scheduler/KAI-Scheduler@v0.17.0).

KAI writes why a gang was not placed on its PodGroup, not on a Workload: ``status.
schedulingConditions[]`` (``pkg/apis/scheduling/v2alpha2/podgroup_types.go``), appended by the
scheduler's status updater while no pod of the gang is allocated
(``pkg/scheduler/cache/status_updater/default_status_updater.go`` ``markPodGroupUnschedulable``:
``type: UnschedulableOnNodePool``, ``reason: Unschedulable``, ``status: "True"``, the node pool,
the fit errors' ``message`` and one ``reasons[]`` entry per fit error with optional
``details.queueDetails``: the queue's deserved, allocated, limit and the gang's request).  The
reason names KAI gives (``podgroup_types.go``): ``OverLimit`` (the queue or a parent would exceed
its limit), ``NonPreemptibleOverQuota`` (non-preemptible work beyond deserved quota:
``plugins/proportion/capacity_policy``), ``PreemptionDelayNotElapsed``, ``QueueDoesNotExist``;
any other failure is in the message.  Queues (``scheduling.run.ai/v2`` ``Queue``, cluster-scoped,
``status.allocated`` / ``requested``) are read when visible.  The ETA: :mod:`whatif.status.kai_replay`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PLAIN = {
    "OverLimit": (
        "the gang would take its queue (or a parent queue) over its limit",
        "wait for the queue's own running work to finish, shrink the gang, or have the queue's limit raised",
    ),
    "NonPreemptibleOverQuota": (
        "it is non-preemptible (priority 100 or more) and would take the queue's non-preemptible work beyond "
        "its deserved quota",
        "submit it with a preemptible priority class (below 100, e.g. train), or wait for the queue's "
        "non-preemptible work to finish",
    ),
    "PreemptionDelayNotElapsed": (
        "it is within its preemption delay and may not evict other work yet",
        "nothing: it may preempt once the delay has passed",
    ),
    "QueueDoesNotExist": (
        "its queue does not exist or has no parent queue",
        "set the kai.scheduler/queue label to your team's queue",
    ),
}


@dataclass
class KaiExplanation:
    workload: str
    queue: str | None
    node_pool: str | None
    kai: dict[str, Any]
    reasons: list[str] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)
    queue_status: str | None = None
    kinds: list[str] = field(default_factory=list)  # KAI's reason names, or "Unschedulable"

    def reason(self) -> str:
        return "; ".join(self.reasons) or "no reason recorded by KAI yet"


def _allocated(pg: dict[str, Any]) -> bool:
    allocated = ((pg.get("status") or {}).get("resourcesStatus") or {}).get("allocated") or {}
    return any(str(v) not in ("0", "0m", "") for v in allocated.values())


def pending_podgroups(objects: list[dict[str, Any]], namespaces: tuple[str, ...]) -> list[dict[str, Any]]:
    out = []
    for pg in objects:
        meta = pg.get("metadata") or {}
        if meta.get("namespace") not in namespaces:
            continue
        conds = (pg.get("status") or {}).get("schedulingConditions") or []
        if conds and conds[-1].get("status") == "True" and not _allocated(pg):
            out.append(pg)
    return sorted(out, key=lambda p: (p["metadata"]["namespace"], p["metadata"]["name"]))


def _queue_words(details: dict[str, Any]) -> str:
    q = details.get("queueDetails") or {}
    if not q:
        return ""
    gpu = "nvidia.com/gpu"
    parts = []
    for label, key in (
        ("allocated", "queueAllocatedResources"),
        ("deserved", "queueDeservedResources"),
        ("limit", "queueResourceLimits"),
        ("the gang asks", "podGroupRequestedResources"),
    ):
        value = (q.get(key) or {}).get(gpu)
        if value is not None:
            parts.append(f"{label} {value}")
    return f"queue {q.get('name')}: GPUs " + ", ".join(parts) if parts else ""


def explain_podgroup(pg: dict[str, Any], queues: dict[str, dict[str, Any]] | None) -> KaiExplanation:
    meta = pg.get("metadata") or {}
    cond = ((pg.get("status") or {}).get("schedulingConditions") or [{}])[-1]
    queue = (pg.get("spec") or {}).get("queue")
    out = KaiExplanation(
        f"{meta.get('namespace')}/{meta.get('name')}",
        queue,
        cond.get("nodePool"),
        {
            "condition": cond.get("type"),
            "reason": cond.get("reason"),
            "message": cond.get("message"),
            "reasons": cond.get("reasons") or [],
        },
    )
    for r in cond.get("reasons") or []:
        plain, change = PLAIN.get(str(r.get("reason")), (f"KAI says: {r.get('message')}", ""))
        out.kinds.append(str(r.get("reason")))
        extra = _queue_words(r.get("details") or {})
        out.reasons.append(f"{plain} ({extra})" if extra else plain)
        if change:
            out.changes.append(change)
    if not out.reasons and cond.get("message"):
        out.reasons.append(f"KAI says: {str(cond['message']).strip()}")
        out.kinds.append(str(cond.get("reason") or "Unschedulable"))
        out.changes.append(
            "free GPUs in the node pool or the queue's fair share must open up for the whole gang"
        )
    if queues is not None and queue in queues:
        status = queues[queue].get("status") or {}
        out.queue_status = (
            f"queue {queue}: allocated {status.get('allocated', {}).get('nvidia.com/gpu', '0')} GPU(s), "
            f"requested {status.get('requested', {}).get('nvidia.com/gpu', '0')}"
        )
    return out
