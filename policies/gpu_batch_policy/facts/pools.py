"""Which declared GKE node pools a node selector (a ResourceFlavor's ``nodeLabels``, a pod's
``nodeSelector``) can land on, and how many GPUs those pools can ever hold.

A Kueue ResourceFlavor reaches nodes only through ``nodeLabels``, which Kueue injects into the
admitted pods' node selector (kueue.md §3), so "which pools can serve this flavor" is exactly
"which pools' node labels satisfy those labels". GKE nodes carry the pool's ``nodeConfig.labels``
plus GKE's own: ``cloud.google.com/gke-nodepool=<pool>``, ``cloud.google.com/gke-accelerator=<type>``
on GPU nodes, ``node.kubernetes.io/instance-type``, ``cloud.google.com/gke-spot`` and
``cloud.google.com/gke-flex-start`` (the model's ``NodePool.node_labels``).

Matching is three-valued. A label GKE sets that the model does not reproduce (zone, arch, OS,
...) may well be on the node, so a selector using it is *undecided*, not a mismatch; a
user label absent from ``nodeConfig.labels`` is a mismatch, because nothing else puts it there.
Undecided pools are never used to prove a violation, only to withhold one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..primitives.values import Unknown, dig
from .model import GkeCluster, NodePool, StackModel
from .model.gke import (
    ACCELERATOR_LABEL,
    FLEX_START_LABEL,
    INSTANCE_TYPE_LABEL,
    NODEPOOL_LABEL,
    SPOT_LABEL,
)

# Keys the model derives completely from the pool: if it is not in node_labels(), no node has it.
_MODELLED_KEYS = frozenset(
    {NODEPOOL_LABEL, ACCELERATOR_LABEL, INSTANCE_TYPE_LABEL, SPOT_LABEL, FLEX_START_LABEL}
)
# Prefixes of labels the kubelet / GKE put on nodes by themselves (zone, arch, os, hostname, ...).
_SYSTEM_PREFIXES = (
    "cloud.google.com/",
    "kubernetes.io/",
    "node.kubernetes.io/",
    "topology.kubernetes.io/",
    "topology.gke.io/",
    "beta.kubernetes.io/",
    "failure-domain.beta.kubernetes.io/",
    "k8s.io/",
)


def pool_matches(pool: NodePool, selector: Mapping[str, str | Unknown]) -> bool | None:
    """Whether every label of ``selector`` is on the pool's nodes: True, False or None (undecided)."""
    labels = pool.node_labels()
    user_labels_unknown = isinstance(dig(pool.res.props, "nodeConfig", "labels"), Unknown)
    undecided = False
    for key, want in selector.items():
        have = labels.get(key)
        if isinstance(want, Unknown) or isinstance(have, Unknown):
            undecided = True
        elif have is not None:
            if have != want:
                return False
        elif (key == NODEPOOL_LABEL and not pool.name_known) or (
            key == ACCELERATOR_LABEL and not pool.accelerators_known
        ):
            undecided = True
        elif key in _MODELLED_KEYS:
            return False
        elif key.startswith(_SYSTEM_PREFIXES) or user_labels_unknown:
            undecided = True
        else:
            return False
    return None if undecided else True


@dataclass(frozen=True)
class Selection:
    """Pools a selector surely reaches (``matched``) and pools it may reach (``undecided``)."""

    matched: tuple[NodePool, ...] = ()
    undecided: tuple[NodePool, ...] = ()

    @property
    def possible(self) -> tuple[NodePool, ...]:
        return self.matched + self.undecided


def select(pools: Iterable[NodePool], selector: Mapping[str, str | Unknown]) -> Selection:
    matched: list[NodePool] = []
    undecided: list[NodePool] = []
    for pool in pools:
        verdict = pool_matches(pool, selector)
        if verdict is True:
            matched.append(pool)
        elif verdict is None:
            undecided.append(pool)
    return Selection(tuple(matched), tuple(undecided))


def intersect(a: Selection, b: Selection) -> Selection:
    """Pools both selections reach (surely only if both surely do)."""
    in_b = {id(p) for p in b.possible}
    sure_b = {id(p) for p in b.matched}
    matched = tuple(p for p in a.matched if id(p) in sure_b)
    undecided = tuple(p for p in a.possible if id(p) in in_b and p not in matched)
    return Selection(matched, undecided)


@dataclass(frozen=True)
class PoolCapacity:
    """GPUs per node and the most nodes a pool can have; None where not knowable yet."""

    pool: NodePool
    gpus_per_node: int | None
    max_nodes: int | None
    unknown: list[str] = field(default_factory=list)

    @property
    def max_gpus(self) -> int | None:
        if self.gpus_per_node is None or self.max_nodes is None:
            return None
        return self.gpus_per_node * self.max_nodes


def capacity(pool: NodePool, cluster: GkeCluster | None) -> PoolCapacity:
    unknown: list[str] = []
    gpus = pool.gpus_per_node()
    if isinstance(gpus, Unknown):
        unknown.append(f"GPUs per node of {pool.describe()}")
        gpus_value: int | None = None
    else:
        gpus_value = gpus
    nodes = pool.max_nodes(cluster)
    if isinstance(nodes, Unknown) or nodes is None:
        unknown.append(f"maximum node count of {pool.describe()}")
        nodes_value: int | None = None
    else:
        nodes_value = nodes
    return PoolCapacity(pool, gpus_value, nodes_value, unknown)


def pool_capacity(model: StackModel, pool: NodePool) -> PoolCapacity:
    return capacity(pool, model.cluster_of(pool))


def known_pool_names(model: StackModel) -> tuple[set[str], bool]:
    """Names of the pools the stack's clusters will have, and whether that list is complete.

    Incomplete when a pool's name is left to auto-naming or unknown. A cluster keeps GKE's
    ``default-pool`` unless ``removeDefaultNodePool`` is true.
    """
    names: set[str] = set()
    complete = True
    for pool in model.node_pools():
        if pool.name_known:
            names.add(pool.name)
        else:
            complete = False
    for cluster in model.gke_clusters():
        remove = cluster.res.get("removeDefaultNodePool")
        if isinstance(remove, Unknown):
            complete = False
        elif remove is not True:
            names.add("default-pool")
    return names, complete


def auto_provisioning(model: StackModel) -> bool | None:
    """Whether GKE node auto-provisioning may create pools the program does not declare.

    With ``clusterAutoscaling.enabled`` GKE creates node pools on demand -- queued-provisioning
    ones included -- so "no declared pool fits" stops being proof, unless a selector pins an
    existing pool by ``cloud.google.com/gke-nodepool``. None when the setting is unknown.
    """
    verdict: bool | None = False
    for cluster in model.gke_clusters():
        enabled = cluster.res.get("clusterAutoscaling", "enabled")
        if isinstance(enabled, Unknown):
            verdict = None
        elif enabled is True:
            return True
    return verdict


def pins_pool(selector: Mapping[str, str | Unknown]) -> bool:
    """A selector naming a pool by ``cloud.google.com/gke-nodepool``: auto-provisioning cannot
    satisfy it with a new pool."""
    return NODEPOOL_LABEL in selector


def node_label(pool: NodePool, key: str) -> str | Unknown | None:
    """The value of label ``key`` on the pool's nodes: the value, None when surely absent, or
    :class:`Unknown` when GKE may set it without the model knowing (same three-valued logic as
    :func:`pool_matches`, for node-affinity expressions)."""
    have = pool.node_labels().get(key)
    if have is not None:
        return have
    if (key == NODEPOOL_LABEL and not pool.name_known) or (
        key == ACCELERATOR_LABEL and not pool.accelerators_known
    ):
        return Unknown(key)
    if key in _MODELLED_KEYS:
        return None
    if key.startswith(_SYSTEM_PREFIXES) or isinstance(dig(pool.res.props, "nodeConfig", "labels"), Unknown):
        return Unknown(key)
    return None
