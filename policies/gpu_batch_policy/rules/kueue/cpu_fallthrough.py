"""``kueue-cpu-podset-on-queued-gpu`` (advisory): a CPU-only pod set (a Ray head, a submitter, a
launcher) whose only flavors with room are GPU flavors behind a ProvisioningRequest waits forever.

kubernetes-sigs/kueue v0.19.2:

- ``pkg/scheduler/flavorassigner/flavorassigner.go`` ``findFlavorForPodSets``: the flavors of the
  resource group covering ``cpu`` are tried in order; one without room (``NoFit``) is skipped, and
  with ``flavorFungibility.whenCanPreempt: TryNextFlavor`` (the default,
  ``pkg/cache/scheduler/clusterqueue.go`` ``defaultFlavorFungibility``) so is one that would need a
  preemption.  So a pod set bigger than the ``cpu`` flavor's quota plus what it may borrow takes
  the next flavor that fits: a GPU flavor;
- ``pkg/controller/admissionchecks/provisioning/controller.go`` ``requiredPodSets`` (and
  ``reqIsNeeded``): a pod set that uses none of the ProvisioningRequestConfig's
  ``managedResources`` (``nvidia.com/gpu``) is left out of the ProvisioningRequest.  A queued (DWS)
  pool gets nodes only for ProvisioningRequests, so that pod set's pod, pinned to the GPU pool by the
  flavor's ``nodeLabels``, gets no node of its own and stays Pending unless it fits beside the GPU pods.

Judged per pod set of each Kueue workload the stack declares: which flavors of its ClusterQueue
Kueue may take (``checkFlavorForPodSets``: the TAS match, taints and node affinity, one decision
with ``kueue-flavor-eligible``, :func:`.flavors.flavor_verdict`; a TAS flavor is never taken by a
pod set that requests no topology on a queue that is not TAS-only, so it is no fall-through) and
have room for the whole pod set (nominal quota plus what the cohort lends, :mod:`...facts.kueue_capacity`);
a finding when there are some and every one is a flavor with GPU quota and a ProvisioningRequest
check.  Anything unknown: no finding.

Advisory, not mandatory: the pod set's pods are not in the ProvisioningRequest, so no node is ever
added for them, but kube-scheduler may still place them on spare room of the nodes provisioned for
the workload's GPU pod sets (the booking binds the autoscaler, not the scheduler; the flavor's
tolerations cover the queued taint).  Whether that room exists depends on the GPU pods' requests
and the machine, which the rule does not decide; a stack whose GPU pods fill their nodes may raise
the level (``policies/config.<stack>.json``).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from pulumi_policy import EnforcementLevel, Policy, PolicyConfigSchema

from ...facts.demand import CannotTellError, PodSet
from ...facts.kueue_capacity import InvalidQuotaError, borrowable, provisioning_checks, value_of
from ...facts.kueue_install import INSTALL_PROPERTIES, kueue_install
from ...facts.model import ClusterQueue, StackModel
from ...facts.model.base import ObjectView
from ...facts.workload_kinds import kueue_gangs
from ...primitives.values import Unknown
from ..kit.builders import stack_policy
from ..kit.report import Reporter
from .capacity import workload_queue
from .flavors import FlavorContext, flavor_context, flavor_verdict

GPU = "nvidia.com/gpu"
CHECKED = ("cpu", "memory")


def _room(model: StackModel, cq: ClusterQueue, flavor: str, resource: str) -> Decimal | None:
    entry = cq.quota_entry(flavor, resource)
    if entry is None:
        return Decimal(0)
    try:
        nominal = value_of(entry.nominal_quota, "nominal")
        return nominal + (borrowable(model, cq, flavor, resource) if cq.cohort else Decimal(0))
    except (CannotTellError, InvalidQuotaError):
        return None


def _fits(model: StackModel, cq: ClusterQueue, flavor: str, pod_set: PodSet) -> bool | None:
    for resource in CHECKED:
        per_pod = pod_set.template.request(resource)
        room = _room(model, cq, flavor, resource)
        if isinstance(per_pod, Unknown) or room is None:
            return None
        if per_pod * pod_set.count > room:
            return False
    return True


def _queued_gpu(model: StackModel, cq: ClusterQueue, flavor: str) -> bool | None:
    entry = cq.quota_entry(flavor, GPU)
    try:
        gpus = value_of(entry.nominal_quota, "nominal") if entry is not None else Decimal(0)
        return gpus > 0 and bool(provisioning_checks(model, cq, flavor))
    except (CannotTellError, InvalidQuotaError):
        return None


def _judge(ctx: FlavorContext, view: ObjectView, pod_set: PodSet, reporter: Reporter) -> None:
    model, cq = ctx.model, ctx.cq
    group = next((g for g in cq.resource_groups if "cpu" in g.covered_resources), None)
    if group is None or not group.flavors_known:
        return
    fitting: list[str] = []
    for quotas in group.flavors:
        name = quotas.name
        if not isinstance(name, str) or not name:
            return
        flavor = model.find_resource_flavor(name, near=cq)[1]
        if flavor is None:
            return
        if flavor_verdict(ctx, pod_set, name, group) is not None:
            continue
        fits = _fits(model, cq, name, pod_set)
        if fits is None:
            return
        if fits:
            fitting.append(name)
    verdicts = [_queued_gpu(model, cq, name) for name in fitting]
    if not fitting or not all(v is True for v in verdicts):
        return
    cpu, memory = (pod_set.template.request(r) for r in CHECKED)
    reporter.violation(
        view,
        f"CPU-only pod set {pod_set.name} ({pod_set.count} x {cpu} CPU / {memory} memory) fits no flavor of "
        f"{cq.describe()} but GPU flavor(s) {', '.join(fitting)} behind a ProvisioningRequest check: Kueue "
        "takes the next flavor that fits, leaves a pod set without GPUs out of the ProvisioningRequest "
        "(requiredPodSets), and the queued pool never gets a node for it: it runs only if it fits next to "
        "the GPU pods on their nodes",
        "size the CPU flavor's quota (plus borrowing) for the CPU-only pod sets that land on it, or shrink "
        "the pod set",
    )


def check_cpu_podsets(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    install = kueue_install(model, config)
    if install.unknown is not None:
        return
    silent = Reporter(lambda *_: None, stack=True)
    for counted in kueue_gangs(model):
        if counted.error is not None or not install.manages(counted.obj):
            continue
        subject = counted.subject
        view = subject if isinstance(subject, ObjectView) else ObjectView(counted.obj)
        cq = workload_queue(model, view, silent)
        ctx = flavor_context(model, cq, install) if cq is not None else None
        if ctx is None:
            continue
        for gang in counted.gangs:
            for pod_set in gang.pod_sets:
                gpus = pod_set.template.request(GPU)
                if pod_set.count <= 0 or isinstance(gpus, Unknown) or gpus > 0:
                    continue
                _judge(ctx, view, pod_set, reporter)


POLICIES: list[Policy] = [
    stack_policy(
        "kueue-cpu-podset-on-queued-gpu",
        "A CPU-only pod set has a non-GPU flavor with room: one whose only fitting flavors are GPU flavors behind a "
        "ProvisioningRequest check never gets a node.",
        check_cpu_podsets,
        enforcement_level=EnforcementLevel.ADVISORY,
        config_schema=PolicyConfigSchema(properties=INSTALL_PROPERTIES),
    ),
]
