"""Kueue's own reason for a pending Workload, in plain words, with what would have to change.

Kueue's words are read, never guessed: the ``QuotaReserved`` condition's reason and message and
each admission check's state and message, verbatim.  The message formats are those of
kubernetes-sigs/kueue@v0.19.2:

- ``pkg/scheduler/flavorassigner/flavorassigner.go`` ``Assignment.Message``: per pod set that
  did not fit, ``couldn't assign flavors to pod set <ps>: <reasons>`` joined by ``"; "``, the
  reasons sorted and joined by ``", "`` (``Status.Message``), each one of
  ``insufficient unused quota for <res> in flavor <f>, <q> more needed`` and
  ``insufficient quota for <res> in flavor <f>, previously considered podsets requests (<a>) +
  current podset request (<b>) > maximum capacity (<c>)`` (``fitsResourceQuota``),
  ``untolerated taint {<key> <value> <effect> <timeAdded>} in flavor <f>`` and
  ``flavor <f> doesn't match node affinity`` (``checkFlavorForPodSets``),
  ``resource <res> unavailable in ClusterQueue`` (``findFlavorForPodSetResource``); the tests'
  expected messages: ``pkg/scheduler/scheduler_test.go`` ``TestSchedule``;
- ``pkg/scheduler/scheduler.go``: ``. Pending the preemption of <n> workload(s)``
  (``markPreemptionOutcome``), ``ClusterQueue <cq> is inactive`` / ``not found``, ``The workload
  has failed admission checks`` (``nominate``), ``Workload has overlapping preemption targets
  ...`` (``schedule``);
- admission checks (``status.admissionChecks[]``: ``Pending | Ready | Retry | Rejected``,
  ``apis/kueue/v1beta2/admissioncheck_types.go``); the ProvisioningRequest check's messages
  (``pkg/controller/admissionchecks/provisioning/controller.go`` ``syncCheckStates``): the
  request's ``Provisioned`` condition message while it is accepted, ``Retrying after failure:
  <Failed message>``, ``Retrying after booking expired: ...``, the ``Failed`` message when
  Rejected past ``backoffLimitCount``, ``the check is not active`` (``constants.go``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from whatif.status.objects import (
    CHECKS,
    INACTIVE,
    PENDING,
    KueueWorkload,
    condition,
    duration_text,
    timestamp,
)

POD_SET = re.compile(
    r"couldn't assign flavors to pod set (?P<ps>[^:]+): (?P<body>.*?)(?=; couldn't assign|$)"
)
UNUSED = re.compile(
    r"insufficient unused quota for (?P<res>\S+) in flavor (?P<flavor>[^\s,]+), (?P<more>\S+) more needed"
)
MAXIMUM = re.compile(
    r"insufficient quota for (?P<res>\S+) in flavor (?P<flavor>[^\s,]+), previously considered podsets requests "
    r"\((?P<prev>[^)]*)\) \+ current podset request \((?P<req>[^)]*)\) > maximum capacity \((?P<max>[^)]*)\)"
)
TAINT = re.compile(r"untolerated taint \{(?P<taint>[^}]*)\} in flavor (?P<flavor>[^\s,;.]+)")
AFFINITY = re.compile(r"flavor (?P<flavor>[^\s,]+) doesn't match node affinity")
NO_RESOURCE = re.compile(r"resource (?P<res>\S+) unavailable in ClusterQueue")
PREEMPTING = re.compile(r"Pending the preemption of (?P<n>\d+) workload\(s\)")
INACTIVE_CQ = re.compile(r"ClusterQueue (?P<cq>\S+) is inactive")
MISSING_CQ = re.compile(r"ClusterQueue (?P<cq>\S+) not found")


@dataclass
class Blocker:
    """One thing in Kueue's words that keeps the workload out, and what would change it."""

    kind: str  # quota | max-quota | taint | affinity | resource | preempting | checks | queue | other
    plain: str
    change: str
    flavor: str | None = None
    resource: str | None = None


@dataclass
class Explanation:
    workload: str
    state: str
    cluster_queue: str | None
    kueue: dict[str, Any]  # condition reason/message and admission checks, verbatim
    blockers: list[Blocker] = field(default_factory=list)
    ahead: list[str] = field(default_factory=list)  # higher-priority / older work ahead, visible
    ahead_hidden: int = 0  # work ahead the user cannot see (visibility API positions)
    held_by: list[str] = field(default_factory=list)  # visible workloads holding the quota it waits for
    # (positionInClusterQueue, positionInLocalQueue) from Kueue's visibility API; None: not read
    position: tuple[int, int] | None = None

    def reason(self) -> str:
        words = [b.plain for b in self.blockers] or ["no reason recorded by Kueue yet"]
        if self.held_by:
            words.append("the quota is held by " + ", ".join(self.held_by))
        if self.ahead or self.ahead_hidden:
            words.append(ahead_words(self.ahead, self.ahead_hidden))
        return "; ".join(words)

    def change(self) -> list[str]:
        return [b.change for b in self.blockers if b.change]


def ahead_words(visible: list[str], hidden: int) -> str:
    parts = []
    if visible:
        parts.append(", ".join(visible))
    if hidden:
        parts.append(f"{hidden} workload(s) of other teams you cannot see")
    return "ahead of it in the ClusterQueue: " + " and ".join(parts)


def _quota_blockers(message: str, cq: str | None) -> list[Blocker]:
    where = f"ClusterQueue {cq}" if cq else "its ClusterQueue"
    out: list[Blocker] = []
    for part in POD_SET.finditer(message):
        ps, body = part.group("ps"), part.group("body")
        for m in UNUSED.finditer(body):
            out.append(
                Blocker(
                    "quota",
                    f"pod set {ps}: flavor {m['flavor']} has not enough unused {m['res']} quota "
                    f"({m['more']} more needed)",
                    f"{m['more']} {m['res']} of flavor {m['flavor']} must be freed in {where} or its cohort "
                    "(work ahead finishing, or preempted by a policy that allows it)",
                    m["flavor"],
                    m["res"],
                )
            )
        for m in MAXIMUM.finditer(body):
            out.append(
                Blocker(
                    "max-quota",
                    f"pod set {ps}: asks {m['req']} {m['res']} of flavor {m['flavor']}, more than {where} can "
                    f"ever hold there ({m['max']} with borrowing; {m['prev']} already counted)",
                    f"raise {m['res']} nominalQuota/borrowingLimit of flavor {m['flavor']} in {where}, or "
                    "shrink the pod set: no amount of waiting helps",
                    m["flavor"],
                    m["res"],
                )
            )
        for m in TAINT.finditer(body):
            out.append(
                Blocker(
                    "taint",
                    f"pod set {ps}: flavor {m['flavor']} has the taint {{{m['taint']}}}, which the pod set "
                    "does not tolerate",
                    f"add a toleration for that taint to pod set {ps} (or to flavor {m['flavor']}'s "
                    "tolerations), or submit to a LocalQueue whose flavors it can use",
                    m["flavor"],
                )
            )
        for m in AFFINITY.finditer(body):
            out.append(
                Blocker(
                    "affinity",
                    f"pod set {ps}: its nodeSelector/affinity does not match the node labels of flavor {m['flavor']}",
                    f"change pod set {ps}'s nodeSelector/affinity to the labels of a flavor of {where}, "
                    "or submit to the LocalQueue of the GPU type it asks for",
                    m["flavor"],
                )
            )
        for m in NO_RESOURCE.finditer(body):
            out.append(
                Blocker(
                    "resource",
                    f"pod set {ps}: {where} has no quota for {m['res']} at all",
                    f"drop the {m['res']} request, or have {m['res']} added to a resource group of {where}",
                    None,
                    m["res"],
                )
            )
    return out


def _message_blockers(message: str, cq: str | None) -> list[Blocker]:
    out = _quota_blockers(message, cq)
    m = PREEMPTING.search(message)
    if m:
        out.append(
            Blocker(
                "preempting",
                f"Kueue is preempting {m['n']} workload(s) to make room for it",
                "nothing: it is admitted once they have stopped and released their quota",
            )
        )
    if (m := INACTIVE_CQ.search(message)) is not None:
        out.append(
            Blocker(
                "queue",
                f"ClusterQueue {m['cq']} is inactive (a flavor or admission check it names is missing, or it is stopped)",
                f"the platform team must fix ClusterQueue {m['cq']} (kubectl describe clusterqueue {m['cq']})",
            )
        )
    if (m := MISSING_CQ.search(message)) is not None:
        out.append(
            Blocker(
                "queue",
                f"its LocalQueue points at ClusterQueue {m['cq']}, which does not exist",
                "the platform team must create that ClusterQueue or fix the LocalQueue",
            )
        )
    if "overlapping preemption targets" in message:
        out.append(
            Blocker(
                "preempting",
                "another workload is preempting the same victims; it fits once those preemptions complete",
                "nothing: wait for the preempted workloads to stop",
            )
        )
    if not out and message and "failed admission checks" not in message:
        out.append(Blocker("other", f"Kueue says: {message}", ""))
    return out


def _check_blockers(wl: KueueWorkload, now: float) -> list[Blocker]:
    out: list[Blocker] = []
    for check in wl.status.get("admissionChecks") or []:
        name, state, message = (
            str(check.get("name")),
            str(check.get("state")),
            str(check.get("message") or ""),
        )
        said = f": {message}" if message else ""
        if state == "Pending" and wl.state() == CHECKS:
            since = timestamp(check.get("lastTransitionTime"))
            spent = f" for {duration_text(now - since)}" if since is not None else ""
            out.append(
                Blocker(
                    "checks",
                    f"quota is reserved; admission check {name} is Pending{spent}{said}",
                    f"nothing from you: {name} (a ProvisioningRequest when it is DWS) must report the nodes "
                    "provisioned; a flavor without that check would not wait for it",
                )
            )
        elif state == "Retry":
            after = check.get("requeueAfterSeconds")
            retry = f" {after} s after {check.get('lastTransitionTime')}" if after is not None else ""
            out.append(
                Blocker(
                    "checks",
                    f"admission check {name} failed; Kueue retries it{retry}{said}",
                    f"nothing from you until {name}'s retries run out (retryStrategy.backoffLimitCount); "
                    "capacity elsewhere (another flavor or region) would avoid it",
                )
            )
        elif state == "Rejected":
            out.append(
                Blocker(
                    "checks",
                    f"admission check {name} rejected it for good{said}",
                    "resubmit: Kueue deactivates a workload whose check is Rejected",
                )
            )
    return out


def explain(wl: KueueWorkload, cluster_queue: str | None, now: float) -> Explanation:
    state = wl.state()
    reserved = condition(wl.obj, "QuotaReserved") or {}
    kueue = {
        "condition": "QuotaReserved",
        "status": reserved.get("status"),
        "reason": reserved.get("reason"),
        "message": reserved.get("message"),
        "admissionChecks": [
            {k: c.get(k) for k in ("name", "state", "message") if k in c}
            for c in wl.status.get("admissionChecks") or []
        ],
    }
    out = Explanation(wl.key, state, cluster_queue, kueue)
    if state == INACTIVE:
        out.blockers.append(
            Blocker(
                "other", "it is deactivated (spec.active: false)", "set spec.active back to true, or resubmit"
            )
        )
    if state == PENDING:
        message = str(reserved.get("message") or "")
        if not reserved:
            out.blockers.append(
                Blocker(
                    "queue",
                    "Kueue's scheduler has not looked at it yet (no QuotaReserved condition): its LocalQueue may "
                    "not exist, or it was just created",
                    "check that its kueue.x-k8s.io/queue-name label names one of your LocalQueues",
                )
            )
        out.blockers += _message_blockers(message, cluster_queue)
    out.blockers += _check_blockers(wl, now)
    return out
