"""``kueue-flavor-eligible``: some flavor of the ClusterQueue can take each pod set, as Kueue's
flavor assigner decides it (issue 18 item 4).

kubernetes-sigs/kueue v0.19.2 ``pkg/scheduler/flavorassigner/flavorassigner.go``: for every
resource a pod set requests, ``findFlavorForPodSets`` walks the flavors of the resource group that
covers it and ``checkFlavorForPodSets`` rejects a flavor when

* TAS does not match (``tas_flavorassigner.go`` ``checkPodSetAndFlavorMatchForTAS``, the shared
  :func:`gpu_batch_policy.facts.tas.flavor_match.tas_mismatch`, with the
  ``TopologyAwareScheduling`` gate, beta and on by default): a pod set that asks for a topology
  (``kueue.x-k8s.io/podset-required-topology`` / ``podset-preferred-topology`` /
  ``podset-unconstrained-topology`` / ``podset-slice-required-topology`` on its pod template,
  ``apis/kueue/v1beta2/topology_types.go``) on a flavor without ``topologyName`` ("Flavor %q does
  not support TopologyAwareScheduling"), a level its Topology lacks ("Flavor %q does not contain
  the requested level", ``TASFlavorSnapshot.HasLevel``), or a pod set that asks for none on a TAS
  flavor of a ClusterQueue that is not TAS-only ("Flavor %q supports only
  TopologyAwareScheduling");
taints and node affinity are :func:`gpu_batch_policy.facts.fit.flavor_match.flavor_rejects`, shared with
the what-if simulator (one decision, no copy):

* a ``NoSchedule``/``NoExecute`` ``nodeTaints`` entry of the flavor is tolerated neither by the
  pod's tolerations nor by the flavor's own ``tolerations`` ("untolerated taint %s in flavor %s");
* the pod's ``nodeSelector`` and required node affinity, cut down to the keys of the flavor's own
  ``nodeLabels`` (``flavorSelector``: other keys are ignored, a term left empty matches
  everything), do not match those labels ("flavor %s doesn't match node affinity").

When every flavor of the group is rejected the pod set never gets a flavor, so the workload is
never admitted: mandatory.  Anything unknown before apply, a flavor or Topology the stack does not
hold, or a configuration the pack cannot read leaves that flavor possible: no finding is guessed.
Which Kueue configuration applies (gates, transformations, integrations): :mod:`kueue_install`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_policy import Policy, PolicyConfigSchema

from ...facts.demand import PodSet
from ...facts.fit.flavor_match import flavor_rejects
from ...facts.kueue_install import INSTALL_PROPERTIES, KueueInstall, kueue_install, requested
from ...facts.model import ClusterQueue, ResourceFlavor, StackModel
from ...facts.model.base import ObjectView
from ...facts.model.kueue import ResourceGroup
from ...facts.tas.flavor_match import tas_mismatch, tas_only
from ...facts.workload_kinds import Counted, kueue_gangs
from ...primitives.tokens import KUEUE_GROUP
from ...primitives.values import as_list, as_str, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter
from .capacity import workload_queue

UNDECIDED = None  # a flavor verdict: None = may fit, str = Kueue's reason it never does


@dataclass(frozen=True)
class FlavorContext:
    """What Kueue's flavor assigner judges a ClusterQueue's flavors with: the stack, the queue,
    the Kueue install (its gates) and whether the queue is TAS-only (``IsTASOnly``)."""

    model: StackModel
    cq: ClusterQueue
    install: KueueInstall
    tas_only: bool


def flavor_context(model: StackModel, cq: ClusterQueue, install: KueueInstall) -> FlavorContext | None:
    """The context to judge ``cq``'s flavors in; None when whether it is TAS-only is unknown."""
    tas_only = _tas_only(model, cq)
    return None if tas_only is None else FlavorContext(model, cq, install, tas_only)


def _topology_levels(model: StackModel, name: str) -> list[str] | None:
    """``spec.levels[].nodeLabel`` of the stack's Topology ``name``; None when unknown/absent."""
    found = [o for o in model.kube_objects(KUEUE_GROUP, "Topology") if o.name == name]
    if len(found) != 1:
        return None
    levels = as_list(dig(found[0].spec, "levels"))
    if not isinstance(levels, list):
        return None
    labels = [as_str(dig(level, "nodeLabel")) for level in levels]
    return [x for x in labels if isinstance(x, str)] if all(isinstance(x, str) for x in labels) else None


def _tas(ctx: FlavorContext, pod_set: PodSet, flavor: ResourceFlavor, group: ResourceGroup) -> str | None:
    notes = pod_set.template.annotations
    topology = flavor.topology_name
    covered = {r for r in group.covered_resources if isinstance(r, str)}
    return tas_mismatch(
        flavor.name,
        topology,
        notes,
        queue_tas_only=ctx.tas_only,
        overlaps=bool(requested([pod_set]) & covered),
        levels=_topology_levels(ctx.model, topology) if isinstance(topology, str) else None,
    )


def flavor_verdict(ctx: FlavorContext, pod_set: PodSet, flavor_name: Any, group: ResourceGroup) -> str | None:
    """Kueue's reason the flavor never takes the pod set (``checkFlavorForPodSets``: the TAS
    match, then taints and node affinity), or None when it may; one decision for this rule and
    ``kueue-cpu-podset-on-queued-gpu``."""
    flavor = ctx.model.find_resource_flavor(flavor_name, near=ctx.cq)[1]
    if flavor is None:
        return UNDECIDED  # missing flavors are kueue-clusterqueue-references' finding
    if ctx.install.gate("TopologyAwareScheduling"):
        tas = _tas(ctx, pod_set, flavor, group)
        if tas is not None:
            return tas
    return flavor_rejects(dig(pod_set.template.raw, "spec"), flavor)


def _tas_only(model: StackModel, cq: ClusterQueue) -> bool | None:
    """``ClusterQueueSnapshot.IsTASOnly`` (:func:`...facts.tas.flavor_match.tas_only`); None when a
    flavor is missing or unknown."""
    flavors = [model.find_resource_flavor(n, near=cq)[1] for n in cq.flavor_names()]
    if any(f is None for f in flavors):
        return None
    return tas_only(f.topology_name for f in flavors if f is not None)


def _judge(ctx: FlavorContext, view: ObjectView, counted: Counted, reporter: Reporter) -> None:
    for gang in counted.gangs:
        for pod_set in gang.pod_sets:
            if pod_set.count <= 0:
                continue
            wanted = ctx.install.as_kueue_sees(requested([pod_set]))
            for group in ctx.cq.resource_groups:
                if not group.covered_known or not group.flavors_known or not group.flavors:
                    continue
                covering = sorted(r for r in group.covered_resources if isinstance(r, str) and r in wanted)
                if not covering:
                    continue
                reasons = [flavor_verdict(ctx, pod_set, f.name, group) for f in group.flavors]
                if any(r is None for r in reasons):
                    continue
                reporter.violation(
                    view,
                    f"couldn't assign flavors to pod set {pod_set.name}: every flavor of {ctx.cq.describe()} "
                    f"for {', '.join(covering)} is rejected by Kueue's flavor assigner ("
                    + "; ".join(str(r) for r in reasons)
                    + "), so it is never admitted"
                    + ctx.install.suffix(),
                    "tolerate the flavor's taints, match its nodeLabels with nodeSelector/affinity, request a "
                    "topology level its Topology has, or add a flavor that fits",
                )
                break  # Kueue stops at the first resource it cannot place


def check_flavor_eligible(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    install = kueue_install(model, config)
    if install.unknown is not None:
        return
    for counted in kueue_gangs(model):
        if counted.error is not None or not install.manages(counted.obj):
            continue
        subject = counted.subject
        view = subject if isinstance(subject, ObjectView) else ObjectView(counted.obj)
        cq = workload_queue(model, view, Reporter(lambda *_: None, stack=True))
        if cq is None:
            continue
        ctx = flavor_context(model, cq, install)
        if ctx is None:
            continue
        _judge(ctx, view, counted, reporter)


POLICIES: list[Policy] = [
    stack_policy(
        "kueue-flavor-eligible",
        "Some flavor of its ClusterQueue can take each pod set of a Kueue workload (taints vs tolerations, "
        "nodeSelector/affinity vs nodeLabels, TAS levels), as Kueue's flavor assigner decides it.",
        check_flavor_eligible,
        config_schema=PolicyConfigSchema(properties=INSTALL_PROPERTIES),
    ),
]
