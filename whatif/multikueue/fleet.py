"""A program's registrations split into its clusters: a MultiKueue manager and its named workers.

The split is the policy pack's, so the what-if and the pack agree on which object goes where
(``gpu_batch_policy.facts.multikueue.clusters``): each Kubernetes object goes to the cluster of the
Kubernetes provider it is registered with (a Helm release's objects where the release goes),
the manager is the cluster holding MultiKueue's objects and its workers are the program's other
clusters with ClusterQueues (``topologies``); a worker's node pools are those of the GKE cluster
its provider's kubeconfig depends on (``cluster_model``).  The registrations' providers and
dependencies are handed to the pack's model as each resource's source, as the engine does.

Which worker a MultiKueueCluster of the MultiKueueConfig reaches is in its kubeconfig, unknown
until apply, so it is read from the names: the one worker whose Kubernetes provider (or GKE
cluster) Pulumi name contains the MultiKueueCluster's name as ``-``-separated parts.  When none
or several do, the what-if refuses in one line rather than guess.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from whatif.errors import NotModelledError, WhatIfError
from whatif.pack import (
    HELM_RELEASE,
    MULTIKUEUE_CONTROLLER,
    KueueCluster,
    StackModel,
    build_resource,
    cluster_model,
    gke_cluster_of,
    provider_urn,
    topologies,
)
from whatif.sources import Record


@dataclass(frozen=True)
class _Ref:
    urn: str


@dataclass(frozen=True)
class _Source:
    """What the pack reads of a registration's source: its provider and dependencies."""

    provider: _Ref | None
    dependencies: list[_Ref] = field(default_factory=list)
    property_dependencies: dict[str, list[_Ref]] = field(default_factory=dict)


@dataclass(frozen=True)
class Member:
    """One cluster of the program: its Pulumi names and its objects (with its node pools)."""

    names: tuple[str, ...]  # Pulumi names of its provider and GKE cluster
    model: StackModel


@dataclass(frozen=True)
class Fleet:
    manager: Member
    workers: tuple[tuple[str, Member], ...]  # MultiKueueConfig order: (MultiKueueCluster name, cluster)
    check: str  # the MultiKueue AdmissionCheck's name


def program_model(records: Iterable[Record]) -> StackModel:
    """The pack's model of the registrations, each with its provider and dependencies."""
    resources = []
    for t, props, urn, name, provider, deps in records:
        purn = provider.rsplit("::", 1)[0] if provider else ""
        source = _Source(_Ref(purn) if purn else None, [_Ref(d) for d in deps])
        resources.append(build_resource(t, props, urn, name, source=source))
    return StackModel.with_releases_rendered(resources)


def _member(model: StackModel, cluster: KueueCluster) -> Member:
    names = [cluster.provider.rsplit("::", 1)[-1]]
    gke = gke_cluster_of(model, cluster)
    if gke is not None:
        names.append(gke.res.pulumi_name)
    releases = [r for r in model.of_type(HELM_RELEASE) if provider_urn(model, r) == cluster.provider]
    sub = cluster_model(model, cluster)
    base = list(sub.resources) if sub is not None else list(cluster.objects)
    return Member(tuple(names), StackModel([*base, *releases]))


def _config_clusters(manager: Member, check: str) -> list[str]:
    view = next(c for c in manager.model.admission_checks() if c.name == check)
    config_name = getattr(view.parameters, "name", None)
    for obj in manager.model.kube_objects("kueue.x-k8s.io", "MultiKueueConfig"):
        if obj.name == config_name:
            clusters: Any = (obj.props.get("spec") or {}).get("clusters")
            if isinstance(clusters, list) and all(isinstance(c, str) for c in clusters):
                return list(clusters)
            raise WhatIfError(
                f"MultiKueueConfig {obj.name} spec.clusters: got {clusters!r}, expected a list of names"
            )
    raise WhatIfError(
        f"AdmissionCheck {check}: its MultiKueueConfig {config_name!r} is not among the manager's objects"
    )


def _matches(cluster: str, member: Member) -> bool:
    want = cluster.split("-")
    for name in member.names:
        parts = name.split("-")
        if any(parts[i : i + len(want)] == want for i in range(len(parts) - len(want) + 1)):
            return True
    return False


def fleet(records: Iterable[Record]) -> Fleet | None:
    """The manager and its workers, or None when no cluster holds a MultiKueue check."""
    model = program_model(records)
    topos = topologies(model)
    if not topos:
        return None
    if len(topos) > 1:
        raise NotModelledError("the program has several MultiKueue managers: only one is modelled")
    manager = _member(model, topos[0].manager)
    check = next(
        (c.name for c in manager.model.admission_checks() if c.controller_name == MULTIKUEUE_CONTROLLER), None
    )
    if check is None:
        return None  # a manager by its MultiKueueCluster/Config objects alone dispatches nothing
    others = [_member(model, w) for w in topos[0].workers]
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
