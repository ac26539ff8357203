"""Which node pools a pod may land on, and what one node of a pool offers: the reusable API.

``placement(model, template)`` answers "which declared pools may this pod schedule on", the way
kube-scheduler's filters do (kubernetes/kubernetes ``pkg/scheduler/framework/plugins``):

- **TaintToleration**: every ``NoSchedule``/``NoExecute`` taint of the node must be tolerated
  (``k8s.io/api/core/v1`` ``Toleration.ToleratesTaint``: empty effect matches every effect,
  ``Exists`` ignores the value, an empty key with ``Exists`` tolerates everything).  A pool's
  taints are its ``nodeConfig.taints`` plus those GKE adds itself: ``nvidia.com/gpu=present:
  NoSchedule`` on GPU pools when the cluster has a non-GPU pool (GKE doc "Run GPUs in GKE
  Standard node pools", reference/kueue.md §8) and ``cloud.google.com/gke-queued=true:
  NoSchedule`` on queued-provisioning pools (GKE doc "Deploy GPUs for batch workloads with
  ProvisioningRequest"; cluster-toolkit ``modules/compute/gke-node-pool/main.tf``).  Pods that
  request ``nvidia.com/gpu`` get a matching toleration from the ExtendedResourceToleration
  admission plugin GKE enables.
- **NodeAffinity**: ``nodeSelector`` (``pools.select``) and *required* node affinity
  (``nodeSelectorTerms`` ORed, ``matchExpressions`` ANDed, operators In/NotIn/Exists/
  DoesNotExist/Gt/Lt), with the same three-valued label knowledge as ``pools.py``.

Kueue injects its ResourceFlavor's ``tolerations`` into the pods it admits (kueue.md §3), so a
template labelled ``kueue.x-k8s.io/queue-name`` is judged with every flavor's tolerations added
(lenient: any flavor might be chosen).

Unsettled premise (issue 18 item 7): whether a pod Kueue admits through a ProvisioningRequest
must tolerate ``cloud.google.com/gke-queued`` itself is not established upstream.  Kueue v0.19.2
adds only annotations (``autoscaling.x-k8s.io/consume-provisioning-request``, the class name) and
the ProvisioningRequestConfig's nodeSelector to such pods, never a toleration
(``pkg/controller/admissionchecks/provisioning/controller.go`` ``podSetUpdates``); GKE's own DWS
sample (ai-on-gke ``tutorials-and-examples/workflow-orchestration/dws-examples/job.yaml``) has no
toleration, while cluster-toolkit's DWS README says workloads need one.  Only GKE's behaviour
for that annotation settles it, so for a Kueue-queued pod an untolerated queued taint leaves
the pool *undecided* and is listed in :attr:`Placement.unsettled`, never rejected.

``pool_allocatable(pool)`` is one node's allocatable (``allocatable.py``), or None for a machine
type the pack does not know.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import partial
from typing import Any

from ...primitives.values import Unknown, as_list, as_str, dig, str_map
from ..model import NodePool, StackModel
from ..model.gke import QUEUED_TAINT_KEY
from ..model.workloads import GPU_RESOURCE, PodTemplate
from ..pools import node_label, pool_matches
from .allocatable import node_allocatable
from .machines import machine_shape
from .resources import Resources

GPU_TAINT = ("nvidia.com/gpu", "present", "NoSchedule")
QUEUED_TAINT = (QUEUED_TAINT_KEY, "true", "NoSchedule")
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "PREFER_NO_SCHEDULE": "PreferNoSchedule", "NO_EXECUTE": "NoExecute"}
_BLOCKING = frozenset({"NoSchedule", "NoExecute"})
# Path of required node affinity's terms under a pod spec.
REQUIRED_NODE_TERMS = (
    "affinity",
    "nodeAffinity",
    "requiredDuringSchedulingIgnoredDuringExecution",
    "nodeSelectorTerms",
)


@dataclass(frozen=True)
class NodeTaint:
    key: str
    value: str
    effect: str

    def describe(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"


QUEUED_NODE_TAINT = NodeTaint(*QUEUED_TAINT)


@dataclass(frozen=True)
class Placement:
    """Pools the pod surely may use, pools it may use (undecided), and why the rest are out."""

    matched: tuple[NodePool, ...]
    undecided: tuple[NodePool, ...]
    rejected: tuple[tuple[NodePool, str], ...]
    # Undecided pools whose only doubt is the queued-provisioning taint (see the module docstring).
    unsettled: tuple[NodePool, ...] = ()

    @property
    def possible(self) -> tuple[NodePool, ...]:
        return self.matched + self.undecided


def pool_taints(model: StackModel, pool: NodePool) -> tuple[NodeTaint, ...] | Unknown:
    """Scheduling-relevant taints on the pool's nodes (declared plus GKE's own), once per pool."""
    return model.memo(f"fit.taints.{pool.urn}", lambda: _pool_taints(model, pool))


def _pool_taints(model: StackModel, pool: NodePool) -> tuple[NodeTaint, ...] | Unknown:
    raw = as_list(pool.res.get("nodeConfig", "taints"))
    if isinstance(raw, Unknown):
        return raw
    taints: list[NodeTaint] = []
    for item in raw or []:
        key, value, effect = (as_str(dig(item, k)) for k in ("key", "value", "effect"))
        if isinstance(key, Unknown) or isinstance(value, Unknown) or isinstance(effect, Unknown):
            return Unknown(f"{pool.res.pulumi_name}.nodeConfig.taints")
        if key:
            taints.append(NodeTaint(key, value or "", _EFFECTS.get(effect or "", effect or "")))
    keys = {t.key for t in taints}
    gpus = pool.gpus_per_node()
    if isinstance(gpus, int) and gpus > 0 and GPU_TAINT[0] not in keys and _has_cpu_pool(model):
        taints.append(NodeTaint(*GPU_TAINT))
    if pool.is_queued and QUEUED_TAINT[0] not in keys:
        taints.append(NodeTaint(*QUEUED_TAINT))
    return tuple(t for t in taints if t.effect in _BLOCKING)


def _has_cpu_pool(model: StackModel) -> bool:
    return model.memo("fit.has_cpu_pool", lambda: any(p.gpus_per_node() == 0 for p in model.node_pools()))


def tolerates(tolerations: Sequence[Any], taint: NodeTaint) -> bool | None:
    """Whether some toleration tolerates ``taint``; None when a toleration is unknown."""
    undecided = False
    for tol in tolerations:
        if isinstance(tol, Unknown):
            undecided = True
            continue
        key, operator, value, effect = (as_str(dig(tol, k)) for k in ("key", "operator", "value", "effect"))
        if any(isinstance(x, Unknown) for x in (key, operator, value, effect)):
            undecided = True
            continue
        if effect and effect != taint.effect:
            continue
        if operator == "Exists":
            if not key or key == taint.key:
                return True
            continue
        if key == taint.key and (value or "") == taint.value:
            return True
    return None if undecided else False


LabelLookup = Callable[[str], "str | Unknown | None"]


def _expression(lookup: LabelLookup, expr: Any) -> bool | None:
    key, operator = as_str(dig(expr, "key")), as_str(dig(expr, "operator"))
    values = as_list(dig(expr, "values"))
    if not isinstance(key, str) or not isinstance(operator, str) or isinstance(values, Unknown):
        return None
    wanted = [v for v in values or [] if isinstance(v, str)]
    if len(wanted) != len(values or []):
        return None
    have = lookup(key)
    if isinstance(have, Unknown):
        return None
    if operator == "In":
        return have in wanted
    if operator == "NotIn":
        return have not in wanted
    if operator == "Exists":
        return have is not None
    if operator == "DoesNotExist":
        return have is None
    if operator in ("Gt", "Lt") and have is not None and len(wanted) == 1:
        try:
            a, b = int(have), int(wanted[0])
        except ValueError:
            return False
        return a > b if operator == "Gt" else a < b
    return None if operator in ("Gt", "Lt") else False


def _all(verdicts: Iterable[bool | None]) -> bool | None:
    """Three-valued AND: False if any is False, else None if any is undecided, else True."""
    result: bool | None = True
    for verdict in verdicts:
        if verdict is False:
            return False
        if verdict is None:
            result = None
    return result


def _any(verdicts: Iterable[bool | None]) -> bool | None:
    """Three-valued OR: True if any is True, else None if any is undecided, else False."""
    negated = _all(None if v is None else not v for v in verdicts)
    return None if negated is None else not negated


def _term(lookup: LabelLookup, term: Any) -> bool | None:
    if not isinstance(term, dict) or dig(term, "matchFields"):
        return None if term else False
    exprs = dig(term, "matchExpressions")
    if not isinstance(exprs, list) or not exprs:
        return False  # an empty term matches no node (k8s NodeSelectorTerm docs)
    return _all(_expression(lookup, expr) for expr in exprs)


def affinity_matches(lookup: LabelLookup, terms: Any) -> bool | None:
    """Required node affinity (``nodeSelectorTerms``) against one node's labels, given by
    ``lookup`` (a pool's three-valued labels, or a ResourceFlavor's ``nodeLabels``)."""
    if terms is None:
        return True
    if not isinstance(terms, list):
        return None
    return _any(_term(lookup, term) for term in terms)


def admission_tolerations(model: StackModel, labels: Mapping[str, object]) -> list[Any]:
    """Tolerations an admission step adds: every ResourceFlavor's, for Kueue-managed pods."""
    if KUEUE_QUEUE_LABEL not in labels:
        return []

    def build() -> list[Any]:
        out: list[Any] = []
        for flavor in model.resource_flavors():
            raw = dig(flavor.obj.props, "spec", "tolerations")
            out.extend(raw if isinstance(raw, list) else ([raw] if isinstance(raw, Unknown) else []))
        return out

    return model.memo("fit.flavor_tolerations", build)


def _taints_verdict(
    model: StackModel, pool: NodePool, tolerations: Sequence[Any], kueue_queued: bool
) -> tuple[bool | None, str, bool]:
    """(whether the pod tolerates every blocking taint of the pool, why not, whether the only
    doubt is the queued-provisioning taint on a Kueue-queued pod: see the module docstring)."""
    taints = pool_taints(model, pool)
    if isinstance(taints, Unknown):
        return None, "", False
    verdict: bool | None = True
    doubt = False
    for taint in taints:
        got = tolerates(tolerations, taint)
        if got is False and kueue_queued and pool.is_queued and taint == QUEUED_NODE_TAINT:
            got, doubt = None, True  # an unsettled premise, not a rejection
        if got is False:
            return False, f"taint {taint.describe()} is not tolerated", False
        if got is None:
            verdict = None
    return verdict, "", doubt


def placement(
    model: StackModel,
    template: PodTemplate,
    extra_tolerations: Iterable[Any] = (),
    *,
    kueue_queued: bool = False,
) -> Placement:
    """Pools a pod of ``template`` may schedule on (see the module docstring); ``kueue_queued``:
    the pod is admitted by Kueue, so it may consume a ProvisioningRequest."""
    spec = dig(template.raw, "spec")
    selector_raw = dig(spec, "nodeSelector")
    terms = dig(spec, *REQUIRED_NODE_TERMS)
    tolerations_raw = dig(spec, "tolerations")
    unknown_spec = any(isinstance(x, Unknown) for x in (spec, selector_raw, terms, tolerations_raw))
    tolerations: list[Any] = list(tolerations_raw) if isinstance(tolerations_raw, list) else []
    tolerations.extend(extra_tolerations)
    gpus = template.gpus()
    if isinstance(gpus, Unknown) or gpus > 0:
        # ExtendedResourceToleration: pods requesting nvidia.com/gpu tolerate its taint.
        tolerations.append({"key": GPU_RESOURCE, "operator": "Exists"})
    selector = str_map(selector_raw)
    matched: list[NodePool] = []
    undecided: list[NodePool] = []
    rejected: list[tuple[NodePool, str]] = []
    unsettled: list[NodePool] = []
    for pool in model.node_pools():
        if unknown_spec:
            undecided.append(pool)
            continue
        verdict, reason, doubt = _taints_verdict(model, pool, tolerations, kueue_queued)
        verdicts: list[bool | None] = [verdict]
        if doubt and not reason:
            unsettled.append(pool)
        if not reason:
            by_selector = pool_matches(pool, selector)
            verdicts.append(by_selector)
            if by_selector is False:
                reason = f"nodeSelector {dict(selector)} does not match its node labels"
        if not reason:
            by_affinity = affinity_matches(partial(node_label, pool), terms)
            verdicts.append(by_affinity)
            if by_affinity is False:
                reason = "required node affinity does not match its node labels"
        if reason:
            rejected.append((pool, reason))
            if unsettled and unsettled[-1] is pool:
                unsettled.pop()  # rejected for another reason after all
        elif all(v is True for v in verdicts):
            matched.append(pool)
        else:
            undecided.append(pool)
    return Placement(tuple(matched), tuple(undecided), tuple(rejected), tuple(unsettled))


def pool_allocatable(pool: NodePool) -> Resources | Unknown | None:
    """One node's allocatable; Unknown if the machine type or GPUs are unknown until apply;
    None if the machine type is not in the pack's table (the caller says "cannot check")."""
    machine = pool.machine_type
    if isinstance(machine, Unknown):
        return machine
    gpus = pool.gpus_per_node()
    if isinstance(gpus, Unknown):
        return gpus
    shape = machine_shape(machine or "e2-medium")  # GKE's default machine type is e2-medium
    return None if shape is None else node_allocatable(shape, gpus)


def pod_requests(template: PodTemplate) -> Resources | Unknown:
    """One pod's requests as the scheduler counts them (``PodTemplate.request``: kubernetes/
    component-helpers ``resource/helpers.go`` ``PodRequests``, sidecars, pod-level resources and
    ``spec.overhead`` included)."""
    amounts: list[Decimal] = []
    for name in ("cpu", "memory", GPU_RESOURCE):
        amount = template.request(name)
        if isinstance(amount, Unknown):
            return amount
        amounts.append(amount)
    return Resources(*amounts)
