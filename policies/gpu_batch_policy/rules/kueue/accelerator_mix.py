"""A ClusterQueue resource group whose flavors are different GPU types spills jobs onto the other.

Kueue assigns a pod set the flavors of a resource group in the order they are listed
(kubernetes-sigs/kueue v0.19.2 ``pkg/scheduler/flavorassigner/flavorassigner.go``
``findFlavorForPodSets``) and moves on to the next flavor when ``shouldTryNextFlavor`` says so:

- **always** when the flavor's representative mode is ``noFit`` (the request exceeds what the
  queue can ever get there) or ``noPreemptionCandidates`` (it would have to preempt, and the
  preemption oracle finds nothing to evict) -- whatever ``flavorFungibility`` says.  Upstream
  test case: "cannot preempt in cohort (oracle returns None) for the first flavor, tries the
  second flavor (which fits); using deprecated WhenCanBorrow=MayStopSearch,WhenCanPreempt=
  MayStopSearch" (``flavorassigner_test.go``);
- when it could preempt there and ``whenCanPreempt`` is ``TryNextFlavor`` -- the default
  (``pkg/cache/scheduler/clusterqueue.go`` ``defaultFlavorFungibility``; the CRDs'
  ``+kubebuilder:default="TryNextFlavor"`` in ``apis/kueue/v1beta1|v1beta2/clusterqueue_types.go``).
  Upstream cases "preempt try next flavor" (default) vs "preempt before try next flavor"
  (``MayStopSearch``);
- when it would have to borrow there and ``whenCanBorrow`` is ``TryNextFlavor`` (default
  ``MayStopSearch``; v1beta1's ``Borrow``/``Preempt`` are old names of ``MayStopSearch``).
  Upstream cases "borrow try next flavor, found the second flavor" vs "borrow before try next
  flavor".

So when the flavors of one group land on different accelerator types (GKE's
``cloud.google.com/gke-accelerator``, set on GPU nodes), a job sized for the first type is
admitted on the next one as soon as the first is full -- a 1-GPU job meant for an L4 gets a whole
``a3-highgpu-8g`` from a provisioning check.  No ``flavorFungibility`` value prevents it (the
first bullet), so the rule flags every such group and says which of the extra cases apply.

The fix is a ClusterQueue per accelerator type: the GPU resource cannot be split over two
resource groups of one queue, because a resource may be covered by only one group
(``pkg/webhooks/clusterqueue_webhook.go`` ``validateResourceGroups``: ``field.Duplicate`` on a
repeated covered resource; upstream case "resource in more than one resource group").  Or pods
pin a type: ``checkFlavorForPodSets`` skips a flavor whose own node labels the pod's node
selector / required affinity rules out.

Advisory: the stack works, it may cost more than intended.  A ClusterQueue annotated
``gpu-batch/accelerator-mixing: allowed`` says the mixing is intended (gpu-batch writes it for
``clusterQueues[].mixAcceleratorTypes: true``); any program may set it, or lower the rule in its
pack config.

Which accelerator a flavor reaches: its ``nodeLabels`` name it (``gke-accelerator``, or a GPU
machine type through ``node.kubernetes.io/instance-type``), else the declared node pools its labels
surely select (``pools.select``: the pool's guestAccelerators, or the machine type's built-in
GPUs).  A flavor reaching no GPU pool (the CPU flavor a Ray head takes) has no type and mixes
with nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, Policy

from ...facts.model import ClusterQueue, ResourceFlavor, StackModel
from ...facts.model.gke import ACCELERATOR_LABEL, INSTANCE_TYPE_LABEL, MACHINE_TYPE_GPUS
from ...facts.model.kueue import DEFAULT_WHEN_CAN_BORROW, DEFAULT_WHEN_CAN_PREEMPT, ResourceGroup
from ...primitives.accelerator_mix import mixes_accelerator_types
from ...primitives.values import Unknown
from ..kit.builders import stack_policy
from ..kit.report import Reporter
from .capacity import flavor_selection

MIXING_ANNOTATION = "gpu-batch/accelerator-mixing"
MIXING_ALLOWED = "allowed"
TRY_NEXT_FLAVOR = "TryNextFlavor"


def flavor_accelerators(model: StackModel, flavor: ResourceFlavor) -> frozenset[str] | Unknown:
    """Accelerator types the flavor's pods can land on; empty: no GPU type (a CPU flavor)."""
    if not flavor.node_labels_known:
        return Unknown(f"{flavor.describe()} spec.nodeLabels")
    named = flavor.node_labels.get(ACCELERATOR_LABEL)
    if named is not None:
        return named if isinstance(named, Unknown) else frozenset({named})
    machine = flavor.node_labels.get(INSTANCE_TYPE_LABEL)
    if isinstance(machine, str) and machine in MACHINE_TYPE_GPUS:
        return frozenset({MACHINE_TYPE_GPUS[machine][0]})
    types: set[str] = set()
    for pool in flavor_selection(model, flavor).matched:
        acc = pool.accelerator_type()
        if isinstance(acc, str):
            types.add(acc)
    return frozenset(types)


def _fungibility(cq: ClusterQueue, key: str, default: str) -> str | Unknown:
    value = cq.flavor_fungibility.get(key)
    if isinstance(value, Unknown):
        return value
    return str(value) if value else default


def _spill_cases(cq: ClusterQueue) -> str:
    """When Kueue leaves an earlier flavor for a later one, under this queue's fungibility."""
    cases = ["whenever it has no room and nothing to preempt (any flavorFungibility)"]
    preempt = _fungibility(cq, "whenCanPreempt", DEFAULT_WHEN_CAN_PREEMPT)
    borrow = _fungibility(cq, "whenCanBorrow", DEFAULT_WHEN_CAN_BORROW)
    if isinstance(preempt, Unknown) or preempt == TRY_NEXT_FLAVOR:
        shown = "unknown until apply" if isinstance(preempt, Unknown) else f"whenCanPreempt {preempt}"
        cases.append(f"also when it could preempt there ({shown})")
    if isinstance(borrow, Unknown) or borrow == TRY_NEXT_FLAVOR:
        shown = "unknown until apply" if isinstance(borrow, Unknown) else f"whenCanBorrow {borrow}"
        cases.append(f"also when it would have to borrow there ({shown})")
    return "; ".join(cases)


def _mixed_flavors(
    model: StackModel, cq: ClusterQueue, group: ResourceGroup, reporter: Reporter
) -> list[tuple[str, frozenset[str]]] | None:
    """The group's typed flavors in order when a later one reaches a type an earlier typed one
    does not (a spill changes the GPU type); None otherwise."""
    typed: list[tuple[str, frozenset[str]]] = []
    for fq in group.flavors:
        if not isinstance(fq.name, str):
            reporter.cannot_check(cq, "a flavor name is unknown until apply")
            continue
        flavor = model.find_resource_flavor(fq.name, near=cq)[1]
        if flavor is None:
            continue  # kueue-clusterqueue-references reports it
        types = flavor_accelerators(model, flavor)
        if isinstance(types, Unknown):
            reporter.cannot_check(cq, f"the accelerator type of flavor {fq.name} ({types.path})")
            continue
        if types:
            typed.append((fq.name, types))
    return typed if mixes_accelerator_types([types for _, types in typed]) else None


def check_accelerator_mix(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for cq in model.cluster_queues():
        opted_in = cq.obj.annotations.get(MIXING_ANNOTATION)
        for group in cq.resource_groups:
            if not group.flavors_known:
                reporter.cannot_check(cq, f"{group.path}.flavors is unknown until apply")
                continue
            mixed = _mixed_flavors(model, cq, group, reporter)
            if mixed is None:
                continue
            if isinstance(opted_in, Unknown) or not cq.obj.annotations_known:
                reporter.cannot_check(cq, f"metadata.annotations[{MIXING_ANNOTATION}]")
                continue
            if opted_in == MIXING_ALLOWED:
                continue
            listed = ", ".join(f"{name} ({'/'.join(sorted(types))})" for name, types in mixed)
            first, first_types = mixed[0]
            others = sorted({t for _, types in mixed[1:] for t in types} - first_types)
            reporter.violation(
                cq,
                f"{group.path} lists flavors of different accelerator types: {listed}. Kueue "
                f"moves a workload on from flavor {first} to the next {_spill_cases(cq)}, so a job sized "
                f"for {'/'.join(sorted(first_types))} is admitted on {'/'.join(others)} without asking",
                "give each accelerator type its own ClusterQueue (a resource may be in only one resource "
                "group of a ClusterQueue) with a LocalQueue per type for teams to pick from, or have jobs "
                "pin a type with a nodeSelector on a label the flavors set; if the mixing is intended, "
                f"annotate the ClusterQueue {MIXING_ANNOTATION}: {MIXING_ALLOWED}",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "kueue-flavors-mix-accelerator-types",
        "A ClusterQueue resource group does not list flavors of different GPU types: Kueue spills "
        "jobs that do not fit the first onto the next (e.g. from L4 onto H100).",
        check_accelerator_mix,
        # A cost risk, not a stack that cannot work (policies/README.md, levels); a stack raises it.
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
]
