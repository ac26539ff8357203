"""Topology-aware scheduling on GKE: what Kueue v0.19.2 refuses or never admits.

- ``kueue-tas-podset-annotations`` (mandatory): the job webhooks run
  ``jobframework.ValidateTASPodSetRequest`` and ``ValidateSliceSizeAnnotationUpperBound``
  (``pkg/controller/jobframework/tas_validation.go``) on every pod template, so a template failing
  them is refused at create (:mod:`..tas.annotations`, a port); and ``findTopologyAssignment``
  (``pkg/cache/scheduler/tas_flavor_snapshot.go``) refuses a slice level above the pod-set level.
- ``kueue-tas-topology-domains`` (mandatory): a TAS flavor (``topologyName``) whose nodes are a pool
  of a machine type GKE never labels with ``cloud.google.com/gce-topology-*`` has no domain at that
  level: Kueue's "no topology domains at level: <label>" (``findLevelWithFitDomains``), so nothing
  is ever admitted on it.  Which machine types GKE labels: :mod:`..tas.levels`.
- ``kueue-tas-gang-fits-domain`` (mandatory): a pod set with ``podset-required-topology`` must fit
  one domain of that level (``findLevelWithFitDomains``: with ``state.required`` a too small top
  domain is ``notFitReason``, never a spread).  Domain sizes known from the machine type alone: a
  host / hostname is one node (its GPUs); an A4X ``gke-nodepool`` domain is one NVLink domain of 72
  GPUs, an A4X sub-block 18 nodes.  Blocks and sub-blocks otherwise from the reservation sizes the
  rule's ``reservations`` config declares (:mod:`..tas.reservations`); undeclared: not judged.
- ``kueue-tas-required-with-provisioning`` (advisory): KEP-2724 (``keps/2724-topology-aware-scheduling``
  @ v0.19.2, "Provisioning request and required mode"): with a ProvisioningRequest check, Kueue
  reserves quota first and assigns the topology in a second pass after the nodes arrive; nodes the
  provider scattered fail a ``required`` request, the booking expires and the workload is retried
  and finally deactivated.  A risk, not a certainty (the provider may place compactly).
- ``kueue-tas-sparse-capacity`` (advisory): Google Cloud AI Hypercomputer, "Schedule GKE workloads
  with Topology Aware Scheduling (TAS)": "TAS works best with densely placed capacity, which can be
  obtained through reservations. With Flex-start VMs or Spot VMs, your capacity is less likely to
  allocated close together, so TAS might not work well in this scenario."  A TAS flavor whose
  Topology has a block or sub-block level, on a pool of spot / flex-start (DWS queued provisioning
  runs flex-start VMs) or on-demand VMs that consume no reservation (``NO_RESERVATION``), without a
  COMPACT placement policy (GKE "Define compact placement for GKE nodes"), gets nodes scattered
  over blocks: a required block / sub-block request may wait long.  Advisory: GKE still labels the
  nodes and Kueue still admits what fits; a stack's config may raise it.
- ``gke-compact-placement-flex-start`` (mandatory): cluster-toolkit v1.95.0
  ``modules/compute/gke-node-pool/main.tf`` precondition "Compact placement with DWS Flex start is
  only supported for A3 Ultra, A4, and H4D machine types" (``^(a3-ultragpu-|a4-|h4d-)``).  COMPACT on
  a queued pool is ``gke-queued-provisioning-pool``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from pulumi_policy import EnforcementLevel, Policy, PolicyConfigSchema

from ...facts.model import ClusterQueue, NodePool, StackModel
from ...facts.model.base import ObjectView
from ...facts.tas.annotations import TOPOLOGY_ANNOTATIONS, level_problems, request_of, webhook_problems
from ...facts.tas.domains import domain_gpus, flavor_pools, tas_flavors, topology_levels
from ...facts.tas.levels import GKE_TOPOLOGY_LABELS, labelled
from ...facts.tas.placement import COMPACT_FLEX_MACHINES
from ...facts.tas.reservations import SCHEMA as RESERVATIONS_SCHEMA
from ...facts.tas.reservations import ReservationSize, declared_sizes
from ...facts.workload_kinds import kueue_gangs
from ...primitives.values import Unknown
from ..kit.builders import resource_policy, stack_policy
from ..kit.report import Reporter
from .capacity import workload_queue

GPU = "nvidia.com/gpu"


def check_annotations(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    all_levels = list(topology_levels(model).values())
    for counted in kueue_gangs(model):
        for gang in counted.gangs:
            for pod_set in gang.pod_sets:
                notes = pod_set.template.annotations
                if not any(k in notes for k in TOPOLOGY_ANNOTATIONS):
                    continue
                if any(isinstance(notes.get(k), Unknown) for k in TOPOLOGY_ANNOTATIONS):
                    reporter.cannot_check(gang.subject, f"{pod_set.path} topology annotations")
                    continue
                problems = webhook_problems(notes, pod_set.count)
                request = request_of(notes)
                # The slice-above-level refusal needs a Topology holding both levels.
                problems += [
                    p
                    for levels in all_levels
                    for p in level_problems(request, levels)
                    if p.startswith("podset slice topology")
                ][:1]
                for problem in problems:
                    reporter.violation(
                        gang.subject,
                        f"pod set {pod_set.name} ({pod_set.path}): Kueue refuses its topology request: {problem}",
                        "fix the kueue.x-k8s.io/podset-*-topology annotations (Kueue's TAS webhook rules)",
                    )


def check_domains(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for flavor, levels in tas_flavors(model):
        if levels is None:
            continue
        gke_levels = [level for level in levels if level in GKE_TOPOLOGY_LABELS]
        if not gke_levels:
            continue
        for pool in flavor_pools(model, flavor):
            machine = pool.machine_type
            if isinstance(machine, str) and not labelled(machine):
                reporter.violation(
                    flavor,
                    f"TAS flavor on pool {pool.name} ({machine}): GKE labels only its dense GPU machine types "
                    f"with {gke_levels[0]}, so Kueue finds no topology domains at level: {gke_levels[0]}",
                    "use a Topology without GKE's gce-topology-* levels for this pool (e.g. only "
                    "kubernetes.io/hostname), or a machine type GKE labels (A3 High/Mega/Ultra, A4, A4X)",
                )


def _largest_domain(model: StackModel, level: str, reservations: Mapping[str, ReservationSize]) -> int | None:
    """The largest domain of ``level`` over the stack's TAS flavors; None when any is unknown."""
    sizes = []
    for flavor, levels in tas_flavors(model):
        if levels is None or level not in levels:
            continue
        size = domain_gpus(model, flavor, level, reservations)
        if size is None:
            return None
        sizes.append(size)
    return max(sizes) if sizes else None


def check_gang_fits(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    reservations = declared_sizes(config)
    for counted in kueue_gangs(model):
        for gang in counted.gangs:
            for pod_set in gang.pod_sets:
                request = request_of(pod_set.template.annotations)
                level = request.required
                if level is None:
                    continue
                size = _largest_domain(model, level, reservations)
                per_pod = pod_set.template.request(GPU)
                if size is None or isinstance(per_pod, Unknown) or per_pod <= 0:
                    continue
                needed = per_pod * pod_set.count
                if needed > Decimal(size):
                    reporter.violation(
                        gang.subject,
                        f"pod set {pod_set.name} needs {needed} GPUs within one {level} domain "
                        f"(podset-required-topology), but the largest such domain holds {size}: never admitted",
                        "use podset-preferred-topology, a wider level, or split the gang with podset-slice-required-topology",
                    )


def _provisioning_checks(model: StackModel, cq: ClusterQueue) -> list[str]:
    checks = {c.name: c for c in model.admission_checks()}
    names = [ref.name for ref in cq.admission_checks if isinstance(ref.name, str)]
    return [n for n in names if n in checks and checks[n].is_provisioning_request]


def check_required_with_provisioning(
    model: StackModel, reporter: Reporter, _config: Mapping[str, Any]
) -> None:
    for counted in kueue_gangs(model):
        for gang in counted.gangs:
            required = [p for p in gang.pod_sets if request_of(p.template.annotations).required]
            if not required:
                continue
            view = gang.subject if isinstance(gang.subject, ObjectView) else ObjectView(gang.obj)
            cq = workload_queue(model, view, reporter)
            checks = _provisioning_checks(model, cq) if cq is not None else []
            if cq is not None and checks:
                reporter.violation(
                    gang.subject,
                    f"pod set(s) {', '.join(p.name for p in required)} require a topology, but ClusterQueue "
                    f"'{cq.name}' provisions nodes through ProvisioningRequest check(s) {', '.join(checks)}: Kueue "
                    "assigns the topology only after the nodes arrive (KEP-2724 second pass), and nodes placed "
                    "apart make the request fail until the workload is deactivated",
                    "use podset-preferred-topology, or provision compactly (a reservation or compact placement)",
                )


def _sparse_capacity(pool: NodePool) -> str | None:
    """Why GCE is unlikely to place the pool's nodes densely; None: a reservation, COMPACT, or unknown."""
    if pool.placement_policy_type == "COMPACT" or pool.reservation_affinity == "SPECIFIC_RESERVATION":
        return None
    if pool.spot is True or pool.preemptible is True:
        return "Spot VMs"
    if pool.flex_start is True or pool.is_queued:
        return "flex-start VMs (DWS)"
    if pool.reservation_affinity == "NO_RESERVATION":
        return "on-demand VMs with no reservation"
    return None


def check_sparse_capacity(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    wide = {GKE_TOPOLOGY_LABELS[0], GKE_TOPOLOGY_LABELS[1]}  # block, sub-block
    for flavor, levels in tas_flavors(model):
        above_host = [level for level in levels or [] if level in wide]
        if not above_host:
            continue
        for pool in flavor_pools(model, flavor):
            machine = pool.machine_type
            why = _sparse_capacity(pool) if isinstance(machine, str) and labelled(machine) else None
            if why is not None:
                reporter.violation(
                    flavor,
                    f"TAS flavor on pool {pool.name} ({machine}) places gangs by {above_host[0]}, but the pool "
                    f"runs {why} without COMPACT placement: GCE is less likely to place them close together, "
                    "so block / sub-block requests may wait long (GKE: TAS works best with dense capacity)",
                    "consume a (dense) reservation or set placementPolicy COMPACT where GKE allows it, or "
                    "request podset-preferred-topology / a host-level Topology",
                )


def check_compact_flex(pool: NodePool, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    if pool.flex_start is not True or pool.is_queued or pool.placement_policy_type != "COMPACT":
        return
    machine = pool.machine_type
    if isinstance(machine, Unknown):
        reporter.cannot_check(pool, "nodeConfig.machineType")
        return
    if isinstance(machine, str) and not COMPACT_FLEX_MACHINES.match(machine):
        reporter.violation(
            pool,
            f"COMPACT placement with DWS flex-start is only supported for A3 Ultra, A4 and H4D, not {machine}",
            "remove `placementPolicy`, or use an a3-ultragpu-/a4- machine type",
        )


POLICIES: list[Policy] = [
    stack_policy(
        "kueue-tas-podset-annotations",
        "Pod-set topology annotations pass Kueue's TAS webhook validation and its slice-level order.",
        check_annotations,
    ),
    stack_policy(
        "kueue-tas-topology-domains",
        "A TAS flavor using GKE's gce-topology-* levels selects only machine types GKE labels with them.",
        check_domains,
    ),
    stack_policy(
        "kueue-tas-gang-fits-domain",
        "A pod set with a required topology fits one domain of that level.",
        check_gang_fits,
        config_schema=PolicyConfigSchema(properties=RESERVATIONS_SCHEMA),
    ),
    stack_policy(
        "kueue-tas-required-with-provisioning",
        "A required topology behind a ProvisioningRequest check may never be satisfied (KEP-2724).",
        check_required_with_provisioning,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
    stack_policy(
        "kueue-tas-sparse-capacity",
        "A TAS flavor with block / sub-block levels runs on dense capacity (a reservation or compact placement).",
        check_sparse_capacity,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
    resource_policy(
        "gke-compact-placement-flex-start",
        "COMPACT placement on a flex-start pool only for A3 Ultra, A4 and H4D machine types.",
        NodePool,
        check_compact_flex,
    ),
]
