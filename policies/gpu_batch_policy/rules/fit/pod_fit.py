"""pod-template-fits-a-node: every pod template fits one node of a pool it may schedule on.

A pod whose requests exceed every candidate node's allocatable stays Pending forever
(kube-scheduler NodeResourcesFit: "Insufficient cpu"), and a chart that refuses smaller values
(SkyPilot chart 0.13.0: ``values.yaml`` ``apiService.resources`` requests 4 CPU / 8Gi, and
``templates/_helpers.tpl`` fails the render below "at least 4 CPU cores and 8 GiB memory" unless
``apiService.skipResourceCheck``) cannot be fixed by the user after install.  Candidates and allocatable come from
``placement.py`` (taints/tolerations, nodeSelector, required node affinity; GKE's reserved
CPU/memory).  DaemonSet pods run on *every* node of the pools they target, so they must fit each
of those pools.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.fit.placement import (
    KUEUE_QUEUE_LABEL,
    QUEUED_NODE_TAINT,
    Placement,
    admission_tolerations,
    placement,
    pod_requests,
    pool_allocatable,
)
from ...facts.fit.resources import Resources
from ...facts.model import KubeObject, NodePool, RayWorkload, StackModel
from ...facts.pod_templates import OwnedTemplate, owned_templates
from ...facts.pools import auto_provisioning, known_pool_names
from ...primitives.values import Unknown
from ..kit.builders import stack_policy
from ..kit.report import Reporter


def template_placement(model: StackModel, owned: OwnedTemplate) -> Placement:
    """Placement of one owned template, with the tolerations admission adds to it."""
    owner = owned.owner.obj if isinstance(owned.owner, RayWorkload) else owned.owner
    labels = {**owner.labels, **owned.template.labels}
    return placement(
        model, owned.template, admission_tolerations(model, labels), kueue_queued=KUEUE_QUEUE_LABEL in labels
    )


def is_daemonset(owned: OwnedTemplate) -> bool:
    return isinstance(owned.owner, KubeObject) and owned.owner.kind == "DaemonSet"


def _subject(owned: OwnedTemplate) -> str:
    return "" if owned.name == "pod" else f"group '{owned.name}': "


def _allocatable(pool: NodePool, reporter: Reporter, owned: OwnedTemplate) -> Resources | None:
    room = pool_allocatable(pool)
    if isinstance(room, Unknown):
        reporter.cannot_check(owned.owner, f"machine type or GPUs of {pool.describe()} unknown until apply")
        return None
    if room is None:
        reporter.cannot_check(
            owned.owner,
            f"machine type {pool.machine_type!r} of {pool.describe()} is not in the pack's machine table",
        )
    return room


def _no_pool(model: StackModel, owned: OwnedTemplate, where: Placement, reporter: Reporter) -> None:
    names, complete = known_pool_names(model)
    if not complete or auto_provisioning(model) is not False or not where.rejected:
        return
    if "default-pool" in names:
        return  # GKE's default pool is not declared: its taints/labels are unknown
    why = "; ".join(f"{pool.describe()}: {reason}" for pool, reason in where.rejected)
    reporter.violation(
        owned.owner,
        f"{_subject(owned)}no node pool accepts its pods ({why})",
        "add the missing toleration/nodeSelector, or a pool whose labels and taints admit it",
    )


def _unsettled_queued_taint(owned: OwnedTemplate, where: Placement, reporter: Reporter) -> None:
    """Advisory: the pod may need the queued-provisioning toleration, or GKE may supply it."""
    pools = ", ".join(pool.describe() for pool in where.unsettled)
    reporter.cannot_check(
        owned.owner,
        f"{_subject(owned)}its pods do not tolerate {QUEUED_NODE_TAINT.describe()}, the taint of "
        f"queued-provisioning {pools}; whether GKE lets pods that consume a ProvisioningRequest "
        "(Kueue annotates them autoscaling.x-k8s.io/consume-provisioning-request) past it is not "
        "established upstream: Kueue v0.19.2 adds no toleration, GKE's DWS sample (ai-on-gke "
        "dws-examples/job.yaml) has none, cluster-toolkit's DWS README requires one. A GKE document "
        "or a run on GKE settles it; adding the toleration is safe either way",
    )


def _check_template(model: StackModel, owned: OwnedTemplate, reporter: Reporter) -> None:
    requests = pod_requests(owned.template)
    if isinstance(requests, Unknown):
        reporter.cannot_check(owned.owner, f"{_subject(owned)}resource requests ({requests.path})")
        return
    where = template_placement(model, owned)
    if where.unsettled and not where.matched:
        _unsettled_queued_taint(owned, where, reporter)
    if not where.possible:
        _no_pool(model, owned, where, reporter)
        return
    rooms = [(pool, _allocatable(pool, reporter, owned)) for pool in where.possible]
    if is_daemonset(owned):
        for pool, room in rooms:
            if room is not None and not requests.fits_in(room) and pool in where.matched:
                reporter.violation(
                    owned.owner,
                    f"its DaemonSet pods request {requests.describe()} but a node of {pool.describe()} "
                    f"({pool.machine_type}) has allocatable {room.describe()} "
                    f"({', '.join(requests.short_of(room))})",
                    "lower the requests, or keep the DaemonSet off that pool with a nodeSelector",
                )
        return
    if any(room is None or requests.fits_in(room) for _, room in rooms) or where.undecided:
        return
    best = max(rooms, key=lambda pr: (pr[1].cpu, pr[1].memory) if pr[1] else (0, 0))
    pool, room = best
    assert room is not None
    reporter.violation(
        owned.owner,
        f"{_subject(owned)}one pod requests {requests.describe()}, more than one node of any pool it "
        f"may schedule on offers; the largest is {pool.describe()} ({pool.machine_type}) with "
        f"allocatable {room.describe()} ({', '.join(requests.short_of(room))})",
        "use a larger machine type for that pool (allocatable is capacity minus GKE's reservations), "
        "or lower the pod's requests",
    )


def check_pod_fit(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    if not model.node_pools():
        return
    for owned in owned_templates(model):
        _check_template(model, owned, reporter)


POLICIES: list[Policy] = [
    stack_policy(
        "pod-template-fits-a-node",
        "Every pod template (declared or rendered by a chart) fits one node of a GKE pool it may "
        "schedule on: taints vs tolerations, nodeSelector, required node affinity, and allocatable "
        "= machine capacity minus GKE's reserved CPU/memory; DaemonSet pods fit every node they target.",
        check_pod_fit,
    ),
]
