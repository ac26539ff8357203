"""The state the status command works from: what its reads returned, and what they could not.

Reads, in order (``whatif.status.reads``): the cluster-scoped Kueue objects (ClusterQueues,
Cohorts, ResourceFlavors, AdmissionChecks, ProvisioningRequestConfigs); LocalQueues and Workloads
of every namespace, else of the user's namespaces only; Kueue's visibility API
``pendingworkloads`` of each of the user's LocalQueues; ProvisioningRequests and KAI PodGroups
(every namespace, else the user's); KAI Queues.  A team member's Role grants
only the namespaced reads in the team's namespace (``components/tenancy.py`` ``team_rules``), so
the cluster-scoped and every-namespace reads come back :class:`~whatif.status.reads.NotVisibleError`:
each is kept in :attr:`Snapshot.not_visible` with why, and nothing is taken as absent because of
it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from whatif.status.reads import (
    AUTOSCALING,
    CLUSTER_KINDS,
    KAI,
    NotServedError,
    NotVisibleError,
    Read,
    Reader,
    cluster_read,
    kai_queue_read,
    namespaced_read,
    pending_read,
)

OTHER_NAMESPACES = "other namespaces"


@dataclass
class Snapshot:
    namespaces: tuple[str, ...]
    objects: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # kind -> visible objects
    not_visible: dict[str, str] = field(default_factory=dict)  # what -> why
    # "<namespace>/<name>" -> (positionInClusterQueue, positionInLocalQueue), Kueue's visibility API
    positions: dict[str, tuple[int, int]] = field(default_factory=dict)
    # "<namespace>/<name>" of a LocalQueue -> why its pending order is not Kueue's own
    order_unknown: dict[str, str] = field(default_factory=dict)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return self.objects.get(kind, [])

    def visible(self, kind: str) -> bool:
        return kind not in self.not_visible

    def others_visible(self, kind: str) -> bool:
        """Whether ``kind`` was read in every namespace, not only the user's."""
        return f"{kind} in {OTHER_NAMESPACES}" not in self.not_visible


def _wide_then_own(reader: Reader, snap: Snapshot, resource: str, kind: str, group: str) -> None:
    """Every namespace when allowed; else the user's namespaces, and other teams' are not visible."""
    try:
        snap.objects[kind] = reader.list(namespaced_read(resource, kind, None, group))
        return
    except NotServedError:
        snap.objects[kind] = []
        return
    except NotVisibleError as error:
        snap.not_visible[f"{kind} in {OTHER_NAMESPACES}"] = error.why
    found: list[dict[str, Any]] = []
    for ns in snap.namespaces:
        try:
            found += reader.list(namespaced_read(resource, kind, ns, group))
        except NotServedError:
            break
        except NotVisibleError as error:
            snap.not_visible[f"{kind} in namespace {ns}"] = error.why
    snap.objects[kind] = found


def _cluster(reader: Reader, snap: Snapshot, read: Read) -> None:
    try:
        snap.objects[read.kind] = reader.list(read)
    except NotServedError:
        snap.objects[read.kind] = []
    except NotVisibleError as error:
        snap.not_visible[read.kind] = error.why


def _positions(reader: Reader, snap: Snapshot) -> None:
    for lq in snap.of("LocalQueue"):
        meta = lq.get("metadata") or {}
        ns, name = str(meta.get("namespace")), str(meta.get("name"))
        if ns not in snap.namespaces:
            continue
        try:
            summary = reader.get(pending_read(ns, name))
        except (NotVisibleError, NotServedError) as error:
            why = error.why if isinstance(error, NotVisibleError) else "the visibility API is not served"
            snap.order_unknown[f"{ns}/{name}"] = why
            continue
        for item in summary.get("items") or []:
            m = item.get("metadata") or {}
            key = f"{m.get('namespace', ns)}/{m.get('name')}"
            snap.positions[key] = (
                int(item.get("positionInClusterQueue", 0)),
                int(item.get("positionInLocalQueue", 0)),
            )


def collect(reader: Reader, namespaces: Sequence[str]) -> Snapshot:
    snap = Snapshot(tuple(namespaces))
    for resource, kind in CLUSTER_KINDS:
        _cluster(reader, snap, cluster_read(resource, kind))
    _wide_then_own(reader, snap, "localqueues", "LocalQueue", "kueue.x-k8s.io")
    _wide_then_own(reader, snap, "workloads", "Workload", "kueue.x-k8s.io")
    _positions(reader, snap)
    # Kueue copies each request's state into the Workload's check (syncCheckStates), so these are
    # read for the request's own start and conditions only where the caller may read them
    _wide_then_own(reader, snap, "provisioningrequests", "ProvisioningRequest", AUTOSCALING)
    _wide_then_own(reader, snap, "podgroups", "PodGroup", KAI)
    _cluster(reader, snap, kai_queue_read())
    return snap
