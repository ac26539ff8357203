"""Kueue v0.19.2 Workloads as the status command reads them (``apis/kueue/v1beta2/workload_types.go``).

States from the conditions Kueue sets (kubernetes-sigs/kueue@v0.19.2):
- ``QuotaReserved`` True: quota reserved (``pkg/workload/workload.go`` ``SetQuotaReservation``,
  reason ``QuotaReserved``, message ``Quota reserved in ClusterQueue <cq>``); False with the
  scheduler's message while pending (``pkg/scheduler/scheduler.go`` ``requeueAndUpdate`` ->
  ``UnsetQuotaReservationWithCondition``; reason ``Pending`` unless the
  ``UnadmittedWorkloadsObservability`` gate (Beta, off in 0.19) gives the granular reasons
  ``WaitingForQuota``, ``ExceedsMaxQuota``, ``NoMatchingFlavor``, ...);
- ``Admitted`` True once quota is reserved and every admission check is Ready
  (``pkg/workload/admissionchecks.go`` ``SyncAdmittedCondition``: else False with
  ``NoReservation`` / ``UnsatisfiedChecks``);
- ``Finished`` True when it ended; ``spec.active: false`` when deactivated.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from whatif.amounts import to_amount
from whatif.pack import quantity
from whatif.pod_spec import SPEC_KEYS
from whatif.workload import PodSet

PENDING = "pending"
CHECKS = "waiting for admission checks"
ADMITTED = "admitted"
FINISHED = "finished"
INACTIVE = "deactivated"


def timestamp(raw: Any) -> float | None:
    """RFC 3339 (``metav1.Time``) as seconds since the epoch."""
    if not isinstance(raw, str) or not raw:
        return None
    return datetime.fromisoformat(raw.replace("Z", "+00:00")).astimezone(UTC).timestamp()


def duration_text(seconds: float) -> str:
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    h, m = divmod(s // 60, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m"


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if isinstance(cond, dict) and cond.get("type") == kind:
            return cond
    return None


def is_true(obj: dict[str, Any], kind: str) -> bool:
    cond = condition(obj, kind)
    return cond is not None and cond.get("status") == "True"


@dataclass(frozen=True)
class KueueWorkload:
    obj: dict[str, Any]

    @property
    def namespace(self) -> str:
        return str((self.obj.get("metadata") or {}).get("namespace", ""))

    @property
    def name(self) -> str:
        return str((self.obj.get("metadata") or {}).get("name", ""))

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def spec(self) -> dict[str, Any]:
        return self.obj.get("spec") or {}

    @property
    def status(self) -> dict[str, Any]:
        return self.obj.get("status") or {}

    @property
    def queue(self) -> str:
        return str(self.spec.get("queueName", ""))

    @property
    def priority(self) -> int:
        return int(self.spec.get("priority") or 0)

    @property
    def created(self) -> float:
        return timestamp((self.obj.get("metadata") or {}).get("creationTimestamp")) or 0.0

    def state(self) -> str:
        if is_true(self.obj, "Finished"):
            return FINISHED
        if is_true(self.obj, "Admitted"):
            return ADMITTED
        if self.spec.get("active") is False:
            return INACTIVE
        if is_true(self.obj, "QuotaReserved"):
            return CHECKS
        return PENDING

    def cluster_queue(self) -> str | None:
        admission = self.status.get("admission") or {}
        return admission.get("clusterQueue")

    def admitted_flavors(self) -> dict[str, dict[str, str]]:
        """``status.admission.podSetAssignments``: pod set -> resource -> flavor."""
        out: dict[str, dict[str, str]] = {}
        for psa in (self.status.get("admission") or {}).get("podSetAssignments") or []:
            out[str(psa.get("name"))] = {str(r): str(f) for r, f in (psa.get("flavors") or {}).items()}
        return out

    def since(self, kind: str) -> float | None:
        cond = condition(self.obj, kind)
        return timestamp(cond.get("lastTransitionTime")) if cond else None

    def queue_order_time(self) -> float:
        """Kueue's queue order timestamp (``pkg/workload/workload.go``
        ``Ordering.GetQueueOrderTimestamp``): the ``Evicted`` transition when an admission check
        evicted it (``IsEvictedByAdmissionCheck``), else creation (the ``PrioritySortingWithinCohort``
        gate is on by default in v0.19.2, so the reclaim-while-borrowing epsilon does not apply;
        the ``PodsReadyTimeout`` ordering needs ``waitForPodsReady``, not modelled)."""
        evicted = condition(self.obj, "Evicted")
        if (
            evicted is not None
            and evicted.get("status") == "True"
            and evicted.get("reason") == "AdmissionCheck"
        ):
            t = timestamp(evicted.get("lastTransitionTime"))
            if t is not None:
                return t
        return self.created

    def pod_sets(self) -> tuple[PodSet, ...]:
        """The pod sets with their per-pod requests: ``status.resourceRequests`` when Kueue has
        written it (its own arithmetic, ``PropagateResourceRequests``), else the containers'."""
        computed = {
            str(r.get("name")): r.get("resources") or {} for r in self.status.get("resourceRequests") or []
        }
        out = []
        for ps in self.spec.get("podSets") or []:
            name = str(ps.get("name", "main"))
            count = int(ps.get("count", 1))
            template = ((ps.get("template") or {}).get("spec")) or {}
            requests = computed.get(name) or _container_requests(template)
            amounts: dict[str, int] = {}
            for res, val in requests.items():
                q = quantity(val)
                if q.value is not None:
                    amounts[str(res)] = to_amount(q.value)
            spec = {k: template[k] for k in SPEC_KEYS if template.get(k)}
            out.append(PodSet(name, count, amounts, spec or None))
        return tuple(out)


def _container_requests(spec: dict[str, Any]) -> dict[str, Any]:
    total: dict[str, float] = {}
    for c in spec.get("containers") or []:
        for res, val in ((c.get("resources") or {}).get("requests") or {}).items():
            q = quantity(val)
            if q.value is not None:
                total[res] = total.get(res, 0.0) + float(q.value)
    return {r: str(v) for r, v in total.items()}


def kueue_workloads(objects: list[dict[str, Any]]) -> list[KueueWorkload]:
    return sorted((KueueWorkload(o) for o in objects), key=lambda w: w.key)


def provisioning_requests(wl: KueueWorkload, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ProvisioningRequests Kueue made for ``wl``, oldest first: the provisioning controller
    owns each by its Workload (v0.19.2 ``pkg/controller/admissionchecks/provisioning/controller.go``
    ``syncOwnedProvisionRequest``: ``ctrl.SetControllerReference``) and names it
    ``<workload>-<check>-<attempt>`` (``provisioning.go`` ``ProvisioningRequestName``)."""
    mine = [
        pr
        for pr in objects
        if (pr.get("metadata") or {}).get("namespace") == wl.namespace
        and any(
            ref.get("kind") == "Workload" and ref.get("name") == wl.name
            for ref in (pr.get("metadata") or {}).get("ownerReferences") or []
        )
    ]
    return sorted(mine, key=lambda pr: timestamp((pr.get("metadata") or {}).get("creationTimestamp")) or 0.0)
