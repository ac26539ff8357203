"""The clusters a program's Kubernetes objects go to: one per Kubernetes provider.

A program with one cluster (every single-cluster stack) has one group and ``manifests.yaml`` is
written exactly as before.  A program reaching several clusters (a MultiKueue manager and its
workers) gets one section per cluster, each validated by its own catalog (the CRDs that cluster's
releases and objects install) and its own Kubernetes minor (the GKE cluster its provider's
kubeconfig depends on), because each API server judges only what it is sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpu_batch_policy.facts.schema.core import KubernetesMinor

from preview.charts import ReleaseManifests
from preview.manifests import stack_kubernetes_minor
from preview.records import RecordedResource

_PROVIDER = "pulumi:providers:kubernetes"
_GKE_CLUSTER = "gcp:container/cluster:Cluster"


def provider_urn(resource: RecordedResource) -> str:
    """The URN of the provider reference ``<urn>::<id>`` ("" for the default provider)."""
    return resource.provider.rsplit("::", 1)[0] if resource.provider else ""


@dataclass(frozen=True)
class ClusterGroup:
    provider: str  # the provider's URN, "" for the default provider
    resources: tuple[RecordedResource, ...]
    releases: tuple[ReleaseManifests, ...]
    kubernetes: KubernetesMinor

    @property
    def title(self) -> str:
        name = self.provider.rsplit("::", 1)[-1] if self.provider else "default provider"
        return f"cluster of Kubernetes provider '{name}' ({self.kubernetes})"


def _cluster_minor(
    provider: RecordedResource | None, resources: Sequence[RecordedResource]
) -> KubernetesMinor:
    clusters = {r.urn: r for r in resources if r.type == _GKE_CLUSTER}
    if provider is not None:
        deps = set(provider.dependencies)
        for urns in provider.property_dependencies.values():
            deps.update(urns)
        linked = [clusters[u] for u in sorted(deps) if u in clusters]
        if linked:
            return stack_kubernetes_minor(linked[:1])
    return stack_kubernetes_minor(resources)


def _cluster_key(provider: RecordedResource | None, urn: str, clusters: set[str]) -> str:
    """The GKE cluster a provider's kubeconfig depends on (its URN), else the provider's URN: two
    providers of one cluster (e.g. one for retained CRDs) are one cluster."""
    if provider is not None:
        deps = set(provider.dependencies)
        for urns in provider.property_dependencies.values():
            deps.update(urns)
        linked = sorted(deps & clusters)
        if linked:
            return linked[0]
    return urn


def cluster_groups(
    resources: Sequence[RecordedResource], releases: Sequence[ReleaseManifests]
) -> list[ClusterGroup]:
    """The program's resources and releases per cluster (providers grouped by the GKE cluster they
    reach), in provider-name order."""
    providers = {r.urn: r for r in resources if r.type == _PROVIDER}
    gke = {r.urn for r in resources if r.type == _GKE_CLUSTER}
    keys: dict[str, str] = {}
    for r in resources:
        if r.type.startswith("kubernetes:"):
            urn = provider_urn(r)
            keys[urn] = _cluster_key(providers.get(urn), urn, gke)
    grouped: dict[str, list[str]] = {}
    for urn, key in keys.items():
        grouped.setdefault(key, []).append(urn)
    groups = []
    for urns in grouped.values():
        main = sorted(urns, key=lambda u: u.rsplit("::", 1)[-1])[0]
        groups.append(
            ClusterGroup(
                provider=main,
                resources=tuple(r for r in resources if provider_urn(r) in urns),
                releases=tuple(rel for rel in releases if provider_urn(rel.resource) in urns),
                kubernetes=_cluster_minor(providers.get(main), resources),
            )
        )
    return sorted(groups, key=lambda g: g.provider.rsplit("::", 1)[-1])
