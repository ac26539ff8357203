"""The stack's Kueue objects, as the simulator uses them, read through the pack's typed model.

Kueue objects (kubernetes-sigs/kueue@v0.19.2 ``apis/kueue/v1beta2``; v1beta1 accepted through the
pack's normalised views): ResourceFlavor, ClusterQueue, Cohort (hierarchical, with its own quota),
LocalQueue, WorkloadPriorityClass and AdmissionCheck.  Defaults follow ``pkg/cache/scheduler/
clusterqueue.go`` (``defaultFlavorFungibility``: whenCanBorrow MayStopSearch, whenCanPreempt
TryNextFlavor; v1beta1's ``Borrow``/``Preempt`` are the old names of ``MayStopSearch``) and the CRD
defaults (queueingStrategy BestEffortFIFO, preemption policies Never).

Fair sharing (Kueue's Configuration ``fairSharing``) is read here: its preemption strategies and
each ClusterQueue's and Cohort's ``spec.fairSharing.weight`` (``pkg/cache/scheduler/
fair_sharing.go`` ``parseFairWeight``).  So is admission fair sharing (the Configuration's
``admissionFairSharing``, each ClusterQueue's ``spec.admissionScope.admissionMode`` and each
LocalQueue's ``spec.fairSharing.weight``; :mod:`whatif.admission_fair_sharing`).  What the
simulator does not model is refused here, with one line (:class:`NotModelledError`): MultiKueue
admission checks.  Topology-Aware Scheduling is read, not refused: each flavor's ``topologyName``,
its Topology's levels and whether a ClusterQueue is TAS-only decide which flavors a pod set may
take (``whatif.flavors``); a pod set that TAS would place is refused there, when one is met.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from whatif.admission_fair_sharing.model import AdmissionFairSharing
from whatif.admission_fair_sharing.settings import admission_mode, afs_config
from whatif.amounts import to_amount
from whatif.capacity import CHECK_CAPACITY, QUEUED, Check, Pool, Retry
from whatif.errors import NotModelledError, WhatIfError
from whatif.pack import (
    DEFAULT_WHEN_CAN_BORROW,
    DEFAULT_WHEN_CAN_PREEMPT,
    MULTIKUEUE_CONTROLLER,
    PROVISIONING_REQUEST_CONTROLLER,
    Quantity,
    ResourceFlavor,
    ResourceGroup,
    StackModel,
    Unknown,
    feature_gate,
    quantity,
    tas_only,
    topology_levels,
)
from whatif.refusal import refuse_rejected
from whatif.tree import FlavorResource, Node, Quota, accumulate, flavor_resource

FUNGIBILITY_ALIASES = {"Borrow": "MayStopSearch", "Preempt": "MayStopSearch"}


@dataclass(frozen=True)
class Preemption:
    """``spec.preemption`` (kueue clusterqueue_types.go ``ClusterQueuePreemption``)."""

    within_cluster_queue: str = "Never"
    reclaim_within_cohort: str = "Never"
    borrow_within_cohort: str = "Never"
    max_priority_threshold: int | None = None


@dataclass(frozen=True)
class Group:
    covered: frozenset[str]
    flavors: tuple[str, ...]


@dataclass(eq=False)
class ClusterQueue:
    name: str
    node: Node
    groups: tuple[Group, ...]
    preemption: Preemption = Preemption()
    strategy: str = "BestEffortFIFO"
    when_can_borrow: str = DEFAULT_WHEN_CAN_BORROW
    when_can_preempt: str = DEFAULT_WHEN_CAN_PREEMPT
    preference: str | None = None
    # flavor -> its ProvisioningRequest check (queued provisioning or check-capacity)
    provisioning: dict[str, Check] = field(default_factory=dict)
    check_names: tuple[str, ...] = ()
    # the MultiKueue admission check it carries, when the cluster is simulated as a MultiKueue
    # manager (:mod:`whatif.multikueue`); what it reserves is dispatched to the workers
    multikueue_check: str | None = None
    # ``ClusterQueueSnapshot.IsTASOnly``: every flavor has a ``topologyName`` (None: cannot tell)
    tas_only: bool | None = False
    # set in __post_init__, not by a default factory: mypyc's dataclasses leave an init=False
    # field's default unset (whatif/compiled.py compiles this module)
    _group_index: dict[str, Group | None] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._group_index = {}

    @property
    def provisioning_flavors(self) -> frozenset[str]:
        return frozenset(self.provisioning)

    def group_of(self, resource: str) -> Group | None:
        """The resource group covering ``resource`` (``groups`` is fixed: the answer is kept)."""
        index = self._group_index
        if resource not in index:
            index[resource] = next((g for g in self.groups if resource in g.covered), None)
        return index[resource]

    @property
    def cohort(self) -> Node | None:
        return self.node.parent


@dataclass
class Cluster:
    """Everything the scheduler reads; built once per simulation."""

    cluster_queues: dict[str, ClusterQueue]
    cohorts: dict[str, Node]
    local_queues: dict[tuple[str, str], str]  # (namespace, name) -> ClusterQueue
    priority_classes: dict[str, int]
    flavors: frozenset[str]
    notes: list[str] = field(default_factory=list)
    # flavor -> the node pools behind it (what a ProvisioningRequest can grow); absent: unknown
    pools: dict[str, tuple[Pool, ...]] = field(default_factory=dict)
    fair_sharing: FairSharing | None = None  # Kueue's Configuration fairSharing, when simulated
    # Kueue's Configuration admissionFairSharing with its ledger, when a ClusterQueue uses it
    admission_fair_sharing: AdmissionFairSharing | None = None
    # name -> the ResourceFlavor as the pack reads it (taints, tolerations, nodeLabels), for
    # ``checkFlavorForPodSets`` (``whatif.flavors``); a flavor absent here matches every pod set
    resource_flavors: dict[str, ResourceFlavor] = field(default_factory=dict)
    # Topology name -> its levels' ``nodeLabel`` (``TASFlavorSnapshot.HasLevel``)
    topology_levels: dict[str, list[str]] = field(default_factory=dict)
    # the ``TopologyAwareScheduling`` gate (beta, on by default in 0.19.2): off, Kueue's flavor
    # assigner skips the TAS match and a flavor's ``topologyName`` plays no part
    # (``flavorassigner.go`` ``checkFlavorForPodSets``)
    tas_enabled: bool = True


def _known(value: Any, where: str) -> Any:
    if isinstance(value, Unknown):
        raise WhatIfError(f"{where}: value unknown until apply; the what-if needs it known")
    return value


def _amount(q: Quantity | None, where: str) -> int | None:
    if q is None:
        return None
    if q.unknown:
        raise WhatIfError(f"{where}: value unknown until apply; the what-if needs it known")
    if q.value is None:
        raise WhatIfError(f"{where}: {q.raw!r} is not a Kubernetes quantity")
    return to_amount(q.value)


def _quotas(groups: tuple[ResourceGroup, ...], where: str) -> dict[FlavorResource, Quota]:
    quotas: dict[FlavorResource, Quota] = {}
    for group in groups:
        for flavor in group.flavors:
            fname = _known(flavor.name, f"{where} {flavor.path}.name")
            for res in flavor.resources:
                rname = _known(res.name, f"{where} {res.path}.name")
                path = f"{where} {res.path}"
                nominal = _amount(res.nominal_quota, f"{path}.nominalQuota")
                quotas[flavor_resource(fname, rname)] = Quota(
                    nominal=nominal or 0,
                    borrowing_limit=_amount(res.borrowing_limit, f"{path}.borrowingLimit"),
                    lending_limit=_amount(res.lending_limit, f"{path}.lendingLimit"),
                )
    return quotas


def _preemption(raw: dict[str, Any]) -> Preemption:
    borrow = raw.get("borrowWithinCohort") or {}
    threshold = borrow.get("maxPriorityThreshold") if isinstance(borrow, dict) else None
    return Preemption(
        within_cluster_queue=str(raw.get("withinClusterQueue") or "Never"),
        reclaim_within_cohort=str(raw.get("reclaimWithinCohort") or "Never"),
        borrow_within_cohort=str((borrow.get("policy") if isinstance(borrow, dict) else None) or "Never"),
        max_priority_threshold=None if threshold is None else int(threshold),
    )


def kueue_configuration(model: StackModel) -> dict[str, Any] | None:
    """Kueue's controller Configuration: the Kueue Helm release's, or the chart's ConfigMap."""
    for release in model.helm_releases("kueue"):
        parsed = release.kueue_config()
        if parsed.present and isinstance(parsed.data, dict):
            return parsed.data
        return {}
    for obj in model.kube_objects("", "ConfigMap"):  # core group: ""
        data = obj.props.get("data")
        text = data.get("controller_manager_config.yaml") if isinstance(data, dict) else None
        if isinstance(text, str):
            loaded = yaml.safe_load(text)
            return loaded if isinstance(loaded, dict) else {}
    return None


IGNORED_FAIR_SHARING = (
    "fair sharing is enabled in Kueue's Configuration but NOT simulated (--ignore-fair-sharing): "
    "classical preemption and entry ordering were simulated instead, so preemptions and waits "
    "may differ from what Kueue does"
)
# ``parseStrategies`` (pkg/scheduler/preemption/preemption.go): the default when none is given.
DEFAULT_STRATEGIES = ("LessThanOrEqualToFinalShare", "LessThanInitialShare")
STRATEGIES = frozenset(DEFAULT_STRATEGIES)


@dataclass(frozen=True)
class FairSharing:
    """Kueue's Configuration ``fairSharing`` (apis/config/v1beta2 ``FairSharing``)."""

    strategies: tuple[str, ...] = DEFAULT_STRATEGIES


def fair_sharing_of(
    config: dict[str, Any] | None, *, ignore_fair_sharing: bool = False
) -> FairSharing | None:
    """Fair sharing: on when ``fairSharing`` is present (Configuration v1beta2) or has
    ``enable: true`` (v1beta1) -- kueue.md §4, ``fairsharing.Enabled``.  None when off, or on
    and explicitly ignored.
    """
    if not config:
        return None
    fair = config.get("fairSharing")
    v1beta1 = str(config.get("apiVersion", "")).endswith("v1beta1")
    enabled = isinstance(fair, dict) and (fair.get("enable") is True or not v1beta1)
    if not enabled or ignore_fair_sharing:
        return None
    assert isinstance(fair, dict)
    raw = fair.get("preemptionStrategies") or list(DEFAULT_STRATEGIES)
    if not isinstance(raw, list) or not all(isinstance(x, str) and x in STRATEGIES for x in raw):
        raise WhatIfError(
            f"Kueue Configuration fairSharing.preemptionStrategies: got {raw!r}, expected a list of "
            f"{sorted(STRATEGIES)}"
        )
    return FairSharing(tuple(raw))


def fair_sharing_enabled(config: dict[str, Any] | None) -> bool:
    """Whether Kueue's Configuration turns fair sharing on (whether or not it is simulated)."""
    return fair_sharing_of(config) is not None


def fair_weight(spec: Any, where: str) -> float:
    """``parseFairWeight``: ``spec.fairSharing.weight`` as a float, 1 when absent."""
    fair = spec.get("fairSharing") if isinstance(spec, dict) else None
    raw = fair.get("weight") if isinstance(fair, dict) else None
    if raw is None:
        return 1.0
    q = quantity(str(raw))
    if q.value is None or q.value < 0:
        raise WhatIfError(f"{where} spec.fairSharing.weight: got {raw!r}, expected a non-negative quantity")
    return float(q.value)


def build_cluster(
    model: StackModel, *, ignore_fair_sharing: bool = False, multikueue: bool = False
) -> Cluster:
    """The simulator's view of ``model``; raises a one-line error for what it cannot simulate.

    ``multikueue``: ``model`` is a MultiKueue manager's objects, simulated by
    :mod:`whatif.multikueue` (its MultiKueue checks are kept, not refused)."""
    refuse_rejected(model)
    config = kueue_configuration(model)
    notes: list[str] = []
    fair = fair_sharing_of(config, ignore_fair_sharing=ignore_fair_sharing)
    if ignore_fair_sharing and fair_sharing_enabled(config):
        notes.append(IGNORED_FAIR_SHARING)
    flavors: set[str] = set()
    views: dict[str, ResourceFlavor] = {}
    for rf in model.resource_flavors():
        flavors.add(rf.name)
        views[rf.name] = rf
    cohorts: dict[str, Node] = {}
    for co in model.cohorts():
        where = f"Cohort {co.name}"
        cohorts[co.name] = Node(
            co.name,
            False,
            _quotas(co.resource_groups, where),
            fair_weight=fair_weight(co.obj.props.get("spec") or {}, where),
        )
    parents = {co.name: co.parent for co in model.cohorts()}

    def cohort_node(name: str) -> Node:
        if name not in cohorts:  # implicit cohort: named by a ClusterQueue, no object
            cohorts[name] = Node(name, False)
        return cohorts[name]

    for name, parent in list(parents.items()):
        if isinstance(parent, str) and parent:
            child, up = cohort_node(name), cohort_node(parent)
            child.parent = up
            up.children.append(child)

    cqs: dict[str, ClusterQueue] = {}
    for view in sorted(model.cluster_queues(), key=lambda c: c.name):
        cq = _cluster_queue(view, model, config, notes, fair is not None, multikueue=multikueue)
        if isinstance(view.cohort, str) and view.cohort:
            parent_node = cohort_node(view.cohort)
            cq.node.parent = parent_node
            parent_node.children.append(cq.node)
        cq.tas_only = tas_only(views[f].topology_name for g in cq.groups for f in g.flavors if f in views)
        cqs[view.name] = cq
    for root in {n.root() for n in cohorts.values()}:
        accumulate(root)
    for cq in cqs.values():
        if cq.node.parent is None:
            accumulate(cq.node)
    local_queues: dict[tuple[str, str], str] = {}
    for lq in model.local_queues():
        if isinstance(lq.cluster_queue, str):
            local_queues[(lq.namespace, lq.name)] = lq.cluster_queue
    priorities = {
        pc.name: int(pc.value) for pc in model.workload_priority_classes() if isinstance(pc.value, int)
    }
    return Cluster(
        cqs,
        cohorts,
        local_queues,
        priorities,
        frozenset(flavors),
        notes,
        fair_sharing=fair,
        admission_fair_sharing=_admission_fair_sharing(model, config, cqs, local_queues, notes),
        resource_flavors=views,
        topology_levels=topology_levels(model),
        tas_enabled=feature_gate(model, None, "TopologyAwareScheduling") is not False,
    )


def _cli_gates(model: StackModel) -> dict[str, bool]:
    """The Kueue chart's ``controllerManager.featureGates`` (``--feature-gates``), where known."""
    gates: dict[str, bool] = {}
    for release in model.helm_releases("kueue"):
        found = release.kueue_cli_feature_gates()
        for gate in () if isinstance(found, Unknown) else found:
            if isinstance(gate.name, str) and isinstance(gate.enabled, bool):
                gates[gate.name] = gate.enabled
    return gates


def _admission_fair_sharing(
    model: StackModel,
    config: dict[str, Any] | None,
    cqs: dict[str, ClusterQueue],
    local_queues: dict[tuple[str, str], str],
    notes: list[str],
) -> AdmissionFairSharing | None:
    """Admission fair sharing when enabled (``afs.Enabled``) and some ClusterQueue is usage based."""
    settings = afs_config(config, _cli_gates(model))
    usage_based = sorted(
        view.name
        for view in model.cluster_queues()
        if admission_mode(view.obj.props.get("spec") or {}, f"ClusterQueue {view.name}") and view.name in cqs
    )
    if settings is None and usage_based:
        notes.append(
            f"ClusterQueue(s) {', '.join(usage_based)}: admissionScope UsageBasedAdmissionFairSharing is ignored, "
            "as Kueue ignores it: admission fair sharing is not enabled in Kueue's Configuration"
        )
    if settings is None or not usage_based:
        return None
    weights = {
        f"{lq.namespace}/{lq.name}": fair_weight(
            lq.obj.props.get("spec") or {}, f"LocalQueue {lq.namespace}/{lq.name}"
        )
        for lq in model.local_queues()
    }
    covered = {name: frozenset(r for g in cq.groups for r in g.covered) for name, cq in cqs.items()}
    lqs = {f"{ns}/{name}": cq for (ns, name), cq in local_queues.items()}
    return AdmissionFairSharing(settings, usage_based, lqs, weights, covered)


def _int_field(raw: Any, default: int, where: str) -> int:
    if raw is None:
        return default
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
        raise WhatIfError(f"{where}: got {raw!r}, expected a non-negative integer")
    return raw


def _provisioning_check(name: str, cfg: Any) -> Check:
    """A ProvisioningRequestConfig as the simulator uses it (retryStrategy with the CRD defaults)."""
    where = f"ProvisioningRequestConfig {cfg.name} spec"
    spec = cfg.obj.props.get("spec") or {}
    retry = spec.get("retryStrategy") or {}
    run = cfg.parameters.get("maxRunDurationSeconds")
    max_run: float | None = None
    if isinstance(run, str) and run:
        try:
            max_run = float(run)
        except ValueError:
            raise WhatIfError(
                f"{where}.parameters.maxRunDurationSeconds: got {run!r}, expected a number of seconds"
            ) from None
    return Check(
        name=name,
        provisioning_class=str(cfg.provisioning_class_name),
        retry=Retry(
            _int_field(retry.get("backoffLimitCount"), 3, f"{where}.retryStrategy.backoffLimitCount"),
            _int_field(retry.get("backoffBaseSeconds"), 60, f"{where}.retryStrategy.backoffBaseSeconds"),
            _int_field(retry.get("backoffMaxSeconds"), 1800, f"{where}.retryStrategy.backoffMaxSeconds"),
        ),
        max_run_seconds=max_run,
        managed=frozenset(str(m) for m in cfg.managed_resources),
    )


def _checks(
    view: Any, model: StackModel, groups: tuple[Group, ...], notes: list[str], multikueue: bool = False
) -> tuple[dict[str, Check], tuple[str, ...]]:
    """Flavor -> its ProvisioningRequest check (queued provisioning or check-capacity), and the
    check names; MultiKueue is refused unless the cluster is simulated as a MultiKueue manager
    (``multikueue``: the check's name is kept in the names, :mod:`whatif.multikueue` reads it)."""
    where = f"ClusterQueue {view.name}"
    checks = {ac.name: ac for ac in model.admission_checks()}
    configs = {p.name: p for p in model.provisioning_request_configs()}
    provisioning: dict[str, Check] = {}
    names: list[str] = []
    all_flavors = {f for g in groups for f in g.flavors}
    for ref in view.admission_checks:
        check = checks.get(str(ref.name))
        if check is None:
            raise WhatIfError(
                f"{where}: admission check {ref.name} does not exist (the ClusterQueue would be inactive)"
            )
        if check.controller_name == MULTIKUEUE_CONTROLLER and multikueue:
            names.append(check.name)
            continue
        if check.controller_name == MULTIKUEUE_CONTROLLER:
            raise NotModelledError(
                f"{where} uses the MultiKueue admission check {check.name}: MultiKueue is not modelled from "
                "these objects alone (it is from a program, --stack, where each object's cluster is known)"
            )
        names.append(check.name)
        on = {str(f) for f in ref.on_flavors} or all_flavors
        if check.controller_name == PROVISIONING_REQUEST_CONTROLLER:
            params = check.parameters
            config_name = params.name if params is not None and not isinstance(params, Unknown) else None
            cfg = configs.get(str(config_name)) if config_name else None
            if cfg is not None and cfg.provisioning_class_name in (QUEUED, CHECK_CAPACITY):
                simulated = _provisioning_check(check.name, cfg)
                provisioning.update(dict.fromkeys(sorted(on), simulated))
                continue
        notes.append(
            f"{where}: admission check {check.name} ({check.controller_name}) is taken as Ready at once"
        )
    return provisioning, tuple(names)


def _fungibility(raw: Any, default: str) -> str:
    value = str(raw) if raw else default
    return FUNGIBILITY_ALIASES.get(value, value)


def _cluster_queue(
    view: Any,
    model: StackModel,
    config: dict[str, Any] | None,
    notes: list[str],
    fair: bool,
    *,
    multikueue: bool = False,
) -> ClusterQueue:
    where = f"ClusterQueue {view.name}"
    spec = view.obj.props.get("spec") or {}
    if view.unknowns:
        raise WhatIfError(f"{where}: some fields are unknown until apply; the what-if needs them known")
    groups = tuple(
        Group(frozenset(str(r) for r in g.covered_resources), tuple(str(f.name) for f in g.flavors))
        for g in view.resource_groups
    )
    provisioning, names = _checks(view, model, groups, notes, multikueue)
    mk_checks = {ac.name for ac in model.admission_checks() if ac.controller_name == MULTIKUEUE_CONTROLLER}
    fung = spec.get("flavorFungibility") or {}
    if spec.get("fairSharing") and not fair and IGNORED_FAIR_SHARING not in notes:
        if config is None:
            raise NotModelledError(
                f"{where} sets fairSharing but the objects carry no Kueue Configuration (Helm release "
                "values or the kueue-manager-config ConfigMap), so whether fair sharing is enabled cannot "
                "be told; include it, or pass --ignore-fair-sharing"
            )
        notes.append(
            f"{where}: fairSharing.weight is ignored, as Kueue ignores it: fair sharing is not enabled "
            "in Kueue's Configuration"
        )
    return ClusterQueue(
        name=view.name,
        node=Node(
            view.name, True, _quotas(view.resource_groups, where), fair_weight=fair_weight(spec, where)
        ),
        groups=groups,
        preemption=_preemption(spec.get("preemption") or {}),
        strategy=str(spec.get("queueingStrategy") or "BestEffortFIFO"),
        when_can_borrow=_fungibility(fung.get("whenCanBorrow"), DEFAULT_WHEN_CAN_BORROW),
        when_can_preempt=_fungibility(fung.get("whenCanPreempt"), DEFAULT_WHEN_CAN_PREEMPT),
        preference=fung.get("preference"),
        provisioning=provisioning,
        check_names=names,
        multikueue_check=next((n for n in names if n in mk_checks), None),
    )
