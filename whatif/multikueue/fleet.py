"""A program's registrations split into its clusters: a MultiKueue manager and its named workers.

Each Kubernetes object goes to the cluster of the Kubernetes provider it is registered with, as
the pack groups them (``gpu_batch_policy.multikueue.clusters``) and ``manifests.yaml`` does
(``preview/clusters.py``): two providers whose kubeconfig depends on one GKE cluster (e.g. one
for retained CRDs) are one cluster, and that GKE cluster's node pools (a node pool depends on its
cluster) go with it, so each worker's flavors find their own pools.

The manager is the cluster holding an AdmissionCheck of the MultiKueue controller.  Its
MultiKueueConfig lists the workers by MultiKueueCluster name, in order; which cluster of the
program a MultiKueueCluster reaches is in its kubeconfig, unknown until apply, so it is read from
the names: the one cluster whose Kubernetes provider (or GKE cluster) Pulumi name contains the
MultiKueueCluster's name as a ``-``-separated part.  When none or several do, the what-if refuses
in one line rather than guess.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from whatif.errors import NotModelledError, WhatIfError
from whatif.pack import MULTIKUEUE_CONTROLLER, StackModel
from whatif.sources import Record

PROVIDER = "pulumi:providers:kubernetes"
GKE_CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"


@dataclass(frozen=True)
class Member:
    """One cluster of the program: its key, its Pulumi names and its objects."""

    key: str
    names: tuple[str, ...]  # Pulumi names of its providers and GKE cluster
    model: StackModel


@dataclass(frozen=True)
class Fleet:
    manager: Member
    workers: tuple[tuple[str, Member], ...]  # MultiKueueConfig order: (MultiKueueCluster name, cluster)
    check: str  # the MultiKueue AdmissionCheck's name


def _name_of(urn: str) -> str:
    return urn.rsplit("::", 1)[-1]


def members(records: Sequence[Record]) -> list[Member]:
    """The program's clusters, each with its objects and node pools."""
    clusters = {r[2] for r in records if r[0] == GKE_CLUSTER}
    key_of_provider: dict[str, str] = {}
    for t, _props, urn, _name, _prov, deps in records:
        if t.startswith(PROVIDER):
            linked = sorted(d for d in deps if d in clusters)
            key_of_provider[urn] = linked[0] if linked else urn
    grouped: dict[str, list[Record]] = {}
    for r in records:
        t, _props, urn, _name, provider, deps = r
        if t.startswith("kubernetes:"):
            purn = provider.rsplit("::", 1)[0] if provider else ""
            grouped.setdefault(key_of_provider.get(purn, purn), []).append(r)
        elif t == NODE_POOL:
            linked = sorted(d for d in deps if d in clusters)
            if linked:
                grouped.setdefault(linked[0], []).append(r)
        elif t == GKE_CLUSTER:
            grouped.setdefault(urn, []).append(r)
    out = []
    for key, recs in sorted(grouped.items()):
        names = {_name_of(key)} | {_name_of(p) for p, k in key_of_provider.items() if k == key}
        plain = [(t, props, urn, name) for t, props, urn, name, _p, _d in recs]
        out.append(Member(key, tuple(sorted(names)), StackModel.from_plain(plain)))
    return out


def _is_manager(member: Member) -> str | None:
    for check in member.model.admission_checks():
        if check.controller_name == MULTIKUEUE_CONTROLLER:
            return check.name
    return None


def _config_clusters(manager: Member, check: str) -> list[str]:
    view = next(c for c in manager.model.admission_checks() if c.name == check)
    params = view.parameters
    config_name = getattr(params, "name", None)
    for obj in manager.model.kube_objects("kueue.x-k8s.io", "MultiKueueConfig"):
        if obj.name == config_name:
            clusters = (obj.props.get("spec") or {}).get("clusters")
            if isinstance(clusters, list) and all(isinstance(c, str) for c in clusters):
                return list(clusters)
            raise WhatIfError(
                f"MultiKueueConfig {obj.name} spec.clusters: got {clusters!r}, expected a list of names"
            )
    raise WhatIfError(
        f"AdmissionCheck {check}: its MultiKueueConfig {config_name!r} is not among the manager's objects"
    )


def _matches(cluster: str, member: Member) -> bool:
    for name in member.names:
        parts = name.split("-")
        want = cluster.split("-")
        if any(parts[i : i + len(want)] == want for i in range(len(parts) - len(want) + 1)):
            return True
    return False


def fleet(records: Iterable[Record]) -> Fleet | None:
    """The manager and its workers, or None when no cluster holds a MultiKueue check."""
    found = members(list(records))
    managers = [(m, c) for m in found if (c := _is_manager(m)) is not None]
    if not managers:
        return None
    if len(managers) > 1:
        raise NotModelledError("the program has several MultiKueue managers: only one is modelled")
    manager, check = managers[0]
    others = [m for m in found if m is not manager and m.model.cluster_queues()]
    workers: list[tuple[str, Member]] = []
    for cluster in _config_clusters(manager, check):
        hits = [m for m in others if _matches(cluster, m)]
        if len(hits) != 1:
            seen = ", ".join(n for m in others for n in m.names) or "none"
            raise NotModelledError(
                f"MultiKueueCluster {cluster}: which of the program's clusters its kubeconfig reaches is "
                f"unknown until apply, and {len(hits)} of the Kueue clusters' provider names ({seen}) "
                f"contain '{cluster}' (one is needed)"
            )
        workers.append((cluster, hits[0]))
    return Fleet(manager, tuple(workers), check)
