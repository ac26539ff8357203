"""Which cluster each object of a program goes to, and which clusters are MultiKueue's manager and workers.

A Pulumi program reaches each cluster through its own Kubernetes provider, so the provider a
resource is registered with *is* its cluster: objects are grouped by the provider's URN (the
default provider is one more cluster).  An object a Helm release renders goes where its release
goes.

The manager is a cluster holding MultiKueue's objects: a ``MultiKueueCluster``, a
``MultiKueueConfig`` or an AdmissionCheck whose controller is ``kueue.x-k8s.io/multikueue``
(``MultiKueueControllerName``, kubernetes-sigs/kueue v0.19.2
``apis/kueue/v1beta2/multikueue_types.go``).  Its workers, as far as this program declares them,
are the other clusters of the program that hold a ClusterQueue: a worker "acts like a standalone
Kueue cluster" (Kueue v0.19.2 ``site/content/en/docs/concepts/multikueue.md``).  A worker's
kubeconfig is usually unknown during preview, so which ``MultiKueueCluster`` points at which
provider cannot be read; every Kueue cluster of the program is judged as a worker instead, which
is what the published setups (one manager, N workers, one program or script) build.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...primitives.tokens import CORE_GROUP, HELM_RELEASE, KUEUE_GROUP
from ..model import (
    AdmissionCheck,
    ClusterQueue,
    GkeCluster,
    KubeObject,
    LocalQueue,
    Namespace,
    Resource,
    StackModel,
)

MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"
MULTIKUEUE_KINDS = ("MultiKueueCluster", "MultiKueueConfig")
DEFAULT_PROVIDER = ""


def provider_urn(model: StackModel, obj: Resource) -> str:
    """The URN of the provider ``obj`` is sent through ("" for the default provider)."""
    return model.provider_of(obj)


@dataclass(frozen=True)
class KueueCluster:
    """The objects one provider sends to its cluster."""

    provider: str
    objects: tuple[KubeObject, ...]

    @property
    def label(self) -> str:
        """The provider's Pulumi name (the URN's last segment), or "the default provider"."""
        return f"provider '{self.provider.rsplit('::', 1)[-1]}'" if self.provider else "the default provider"

    def of(self, group: str, kind: str) -> list[KubeObject]:
        return [o for o in self.objects if o.group == group and o.kind == kind]

    def find(self, group: str, kind: str, name: str, namespace: str | None = None) -> KubeObject | None:
        for o in self.of(group, kind):
            if o.name == name and (namespace is None or o.namespace == namespace):
                return o
        return None


@dataclass(frozen=True)
class Topology:
    """One manager and the program's other Kueue clusters (its workers)."""

    manager: KueueCluster
    workers: tuple[KueueCluster, ...]


def clusters(model: StackModel) -> list[KueueCluster]:
    def build() -> list[KueueCluster]:
        grouped: dict[str, list[KubeObject]] = {}
        for obj in model.objects:
            grouped.setdefault(provider_urn(model, obj), []).append(obj)
        return [KueueCluster(p, tuple(objs)) for p, objs in sorted(grouped.items())]

    return model.memo("multikueue:clusters", build)


def is_manager(model: StackModel, cluster: KueueCluster) -> bool:
    for obj in cluster.objects:
        if obj.group != KUEUE_GROUP:
            continue
        if obj.kind in MULTIKUEUE_KINDS:
            return True
        if obj.kind == "AdmissionCheck":
            check: AdmissionCheck = model.view(obj)
            if check.controller_name == MULTIKUEUE_CONTROLLER:
                return True
    return False


def topologies(model: StackModel) -> list[Topology]:
    """Every manager of the program with the program's other Kueue clusters as its workers."""

    def build() -> list[Topology]:
        all_clusters = clusters(model)
        managers = [c for c in all_clusters if is_manager(model, c)]
        workers = tuple(c for c in all_clusters if c not in managers and c.of(KUEUE_GROUP, "ClusterQueue"))
        return [Topology(m, workers) for m in managers]

    return model.memo("multikueue:topologies", build)


def multikueue_checks(model: StackModel, cluster: KueueCluster) -> set[str]:
    """Names of the cluster's AdmissionChecks run by the MultiKueue controller."""
    names: set[str] = set()
    for obj in cluster.of(KUEUE_GROUP, "AdmissionCheck"):
        check: AdmissionCheck = model.view(obj)
        if check.controller_name == MULTIKUEUE_CONTROLLER:
            names.add(obj.name)
    return names


def dispatching_queues(model: StackModel, manager: KueueCluster) -> list[ClusterQueue]:
    """The manager's ClusterQueues that carry a MultiKueue check: what they admit is dispatched."""
    checks = multikueue_checks(model, manager)
    out: list[ClusterQueue] = []
    for obj in manager.of(KUEUE_GROUP, "ClusterQueue"):
        cq: ClusterQueue = model.view(obj)
        if any(isinstance(ref.name, str) and ref.name in checks for ref in cq.admission_checks):
            out.append(cq)
    return out


def dispatched_local_queues(model: StackModel, manager: KueueCluster) -> list[LocalQueue]:
    """The manager's LocalQueues pointing at a dispatching ClusterQueue."""
    names = {cq.name for cq in dispatching_queues(model, manager)}
    out: list[LocalQueue] = []
    for obj in manager.of(KUEUE_GROUP, "LocalQueue"):
        lq: LocalQueue = model.view(obj)
        if isinstance(lq.cluster_queue, str) and lq.cluster_queue in names:
            out.append(lq)
    return out


def namespaces(model: StackModel, cluster: KueueCluster) -> Sequence[Namespace]:
    return [model.view(o) for o in cluster.of(CORE_GROUP, "Namespace")]


def gke_cluster_of(model: StackModel, cluster: KueueCluster) -> GkeCluster | None:
    """The GKE cluster the cluster's Kubernetes provider reaches: the one the provider's
    kubeconfig depends on (as ``preview/clusters.py`` groups ``manifests.yaml``); None when the
    provider is not among the program's resources or depends on no single GKE cluster."""
    return model.linked_gke_cluster(cluster.provider)


def cluster_model(model: StackModel, cluster: KueueCluster) -> StackModel | None:
    """The cluster alone: its objects, its GKE cluster and that cluster's node pools (``cluster_of``),
    so the single-cluster rules' pool logic judges one cluster's pools; None when which GKE
    cluster the provider reaches is not known."""

    def build() -> StackModel | None:
        gke = gke_cluster_of(model, cluster)
        if gke is None:
            return None
        pools = [
            p.res for p in model.node_pools() if (c := model.cluster_of(p)) is not None and c.urn == gke.urn
        ]
        return StackModel([*cluster.objects, gke.res, *pools])

    return model.memo(f"multikueue:cluster-model:{cluster.provider}", build)


def objects_model(model: StackModel, cluster: KueueCluster) -> StackModel:
    """The cluster's Kubernetes objects and the Helm releases sent through its provider: what
    rules that read the cluster's own Kueue install (its Configuration, feature gates) judge."""

    def build() -> StackModel:
        releases = [r for r in model.of_type(HELM_RELEASE) if model.provider_of(r) == cluster.provider]
        return StackModel([*cluster.objects, *releases])

    return model.memo(f"multikueue:objects-model:{cluster.provider}", build)
