"""The stack as typed objects: the one entry point rules use to read resources.

``StackModel`` is built from ``StackValidationArgs.resources`` (planned outputs, with parent and
dependency links) or from any list of (type, props, urn, name) registrations; ``view()`` gives the
same typed object for a single resource in a ``ResourceValidationPolicy``.  Everything is keyed by
the wire type token, so the pack judges any program's resources (DESIGN.md): Kueue objects of both
served versions, KAI ``scheduling.run.ai/v2`` Queues, KubeRay ``ray.io/v1`` workloads, namespaces,
GKE clusters/node pools and Helm v3 releases.

Unknown values (preview) are :class:`Unknown` markers — see ``values.py`` — and a reference
lookup returns three states (found / missing / unknown) so a rule never reports a dangling
reference that merely is not known yet.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .model_base import DEFAULT_NAMESPACE, KubeObject, Resource, Subject, build_resource
from .model_gke import GkeCluster, NodePool, gke_cluster, node_pool
from .model_helm import KAI, KUBERAY, KUEUE, SKYPILOT, HelmRelease, helm_release
from .model_kueue import (
    AdmissionCheck,
    ClusterQueue,
    Cohort,
    LocalQueue,
    ProvisioningRequestConfig,
    ResourceFlavor,
    WorkloadPriorityClass,
    admission_check,
    cluster_queue,
    cohort,
    local_queue,
    provisioning_request_config,
    resource_flavor,
    workload_priority_class,
)
from .model_workloads import KaiQueue, Namespace, RayWorkload, kai_queue, ray_workload
from .tokens import (
    CORE_GROUP,
    GKE_CLUSTER,
    GKE_NODE_POOL,
    HELM_RELEASE,
    KAI_GROUP,
    KUEUE_GROUP,
    RAY_GROUP,
)
from .values import Unknown

RAY_KINDS = ("RayJob", "RayCluster", "RayService")

__all__ = [
    "DEFAULT_NAMESPACE",
    "AdmissionCheck",
    "ClusterQueue",
    "Cohort",
    "GkeCluster",
    "HelmRelease",
    "KaiQueue",
    "KubeObject",
    "LocalQueue",
    "Lookup",
    "Namespace",
    "NodePool",
    "ProvisioningRequestConfig",
    "RayWorkload",
    "Resource",
    "ResourceFlavor",
    "StackModel",
    "Subject",
    "Unknown",
    "WorkloadPriorityClass",
    "build_resource",
    "view",
]


def view(res: Resource) -> Any:
    """The typed view of one resource, or the bare Resource/KubeObject if no view applies."""
    if res.type == GKE_CLUSTER:
        return gke_cluster(res)
    if res.type == GKE_NODE_POOL:
        return node_pool(res)
    if res.type == HELM_RELEASE:
        return helm_release(res)
    if not isinstance(res, KubeObject):
        return res
    if res.group == KUEUE_GROUP:
        factory = {
            "ClusterQueue": cluster_queue,
            "Cohort": cohort,
            "LocalQueue": local_queue,
            "ResourceFlavor": resource_flavor,
            "AdmissionCheck": admission_check,
            "ProvisioningRequestConfig": provisioning_request_config,
            "WorkloadPriorityClass": workload_priority_class,
        }.get(res.kind)
        return factory(res) if factory else res
    if res.group == KAI_GROUP and res.kind == "Queue":
        return kai_queue(res)
    if res.group == RAY_GROUP and res.kind in RAY_KINDS:
        return ray_workload(res)
    if res.group == CORE_GROUP and res.kind == "Namespace":
        return Namespace(res)
    return res


@dataclass(frozen=True)
class Lookup:
    """Result of resolving a reference by name.

    ``status`` is ``found``; ``missing`` (no object of that kind has the name); or ``unknown``
    (not found, but some object of that kind has a name not known until apply, so the reference
    may still resolve — "cannot check yet").
    """

    status: Literal["found", "missing", "unknown"]
    found: tuple[KubeObject, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == "found"


class StackModel:
    """Typed, indexed access to every resource of a stack."""

    def __init__(self, resources: Iterable[Resource]) -> None:
        self.resources: list[Resource] = list(resources)
        self.objects: list[KubeObject] = [r for r in self.resources if isinstance(r, KubeObject)]
        self._views: dict[int, Any] = {}

    # --- construction ------------------------------------------------------------------------
    @classmethod
    def from_policy_resources(cls, resources: Sequence[Any]) -> StackModel:
        """From ``StackValidationArgs.resources`` (``PolicyResource`` objects)."""
        return cls(build_resource(r.resource_type, r.props, r.urn, r.name, source=r) for r in resources)

    @classmethod
    def from_args(cls, args: Any) -> StackModel:
        return cls.from_policy_resources(args.resources)

    @classmethod
    def from_plain(cls, items: Iterable[tuple[str, Any, str, str]]) -> StackModel:
        """From ``(type, props, urn, name)`` tuples (tests, other tools)."""
        return cls(build_resource(t, p, u, n) for t, p, u, n in items)

    # --- generic access ----------------------------------------------------------------------
    def view(self, res: Resource) -> Any:
        key = id(res)
        if key not in self._views:
            self._views[key] = view(res)
        return self._views[key]

    def kube_objects(self, group: str | None = None, kind: str | None = None) -> list[KubeObject]:
        return [
            o
            for o in self.objects
            if (group is None or o.group == group) and (kind is None or o.kind == kind)
        ]

    def of_type(self, resource_type: str) -> list[Resource]:
        return [r for r in self.resources if r.type == resource_type]

    def by_urn(self, urn: str) -> Resource | None:
        for r in self.resources:
            if r.urn == urn:
                return r
        return None

    def lookup(
        self, group: str, kind: str, name: str | Unknown | None, namespace: str | None = None
    ) -> Lookup:
        """Resolve ``name`` (in ``namespace`` for namespaced kinds) among objects of group/kind,
        across all API versions of the group."""
        if isinstance(name, Unknown):
            return Lookup("unknown")
        candidates = self.kube_objects(group, kind)
        found = tuple(
            o for o in candidates if o.name == name and (namespace is None or o.namespace == namespace)
        )
        if found:
            return Lookup("found", found)
        if any(not o.identity_known for o in candidates):
            return Lookup("unknown")
        return Lookup("missing")

    def _views_of(self, group: str, kinds: Sequence[str]) -> list[Any]:
        return [self.view(o) for o in self.objects if o.group == group and o.kind in kinds]

    # --- Kueue -------------------------------------------------------------------------------
    def cluster_queues(self) -> list[ClusterQueue]:
        return self._views_of(KUEUE_GROUP, ("ClusterQueue",))

    def local_queues(self) -> list[LocalQueue]:
        return self._views_of(KUEUE_GROUP, ("LocalQueue",))

    def cohorts(self) -> list[Cohort]:
        return self._views_of(KUEUE_GROUP, ("Cohort",))

    def resource_flavors(self) -> list[ResourceFlavor]:
        return self._views_of(KUEUE_GROUP, ("ResourceFlavor",))

    def admission_checks(self) -> list[AdmissionCheck]:
        return self._views_of(KUEUE_GROUP, ("AdmissionCheck",))

    def provisioning_request_configs(self) -> list[ProvisioningRequestConfig]:
        return self._views_of(KUEUE_GROUP, ("ProvisioningRequestConfig",))

    def workload_priority_classes(self) -> list[WorkloadPriorityClass]:
        return self._views_of(KUEUE_GROUP, ("WorkloadPriorityClass",))

    def find_cluster_queue(self, name: str | Unknown | None) -> tuple[Lookup, ClusterQueue | None]:
        found = self.lookup(KUEUE_GROUP, "ClusterQueue", name)
        return found, (self.view(found.found[0]) if found.ok else None)

    def find_local_queue(
        self, name: str | Unknown | None, namespace: str
    ) -> tuple[Lookup, LocalQueue | None]:
        found = self.lookup(KUEUE_GROUP, "LocalQueue", name, namespace)
        return found, (self.view(found.found[0]) if found.ok else None)

    def find_resource_flavor(self, name: str | Unknown | None) -> tuple[Lookup, ResourceFlavor | None]:
        found = self.lookup(KUEUE_GROUP, "ResourceFlavor", name)
        return found, (self.view(found.found[0]) if found.ok else None)

    # --- KAI / Ray / namespaces --------------------------------------------------------------
    def kai_queues(self) -> list[KaiQueue]:
        return self._views_of(KAI_GROUP, ("Queue",))

    def ray_workloads(self) -> list[RayWorkload]:
        return self._views_of(RAY_GROUP, RAY_KINDS)

    def namespaces(self) -> list[Namespace]:
        return self._views_of(CORE_GROUP, ("Namespace",))

    # --- GKE ---------------------------------------------------------------------------------
    def gke_clusters(self) -> list[GkeCluster]:
        return [self.view(r) for r in self.of_type(GKE_CLUSTER)]

    def node_pools(self) -> list[NodePool]:
        return [self.view(r) for r in self.of_type(GKE_NODE_POOL)]

    def cluster_of(self, pool: NodePool) -> GkeCluster | None:
        """The pool's cluster: by the ``cluster`` property dependency (URN), else by name (also
        the last segment of a ``projects/…/clusters/<name>`` id), else the only cluster."""
        clusters = self.gke_clusters()
        source = pool.res.source
        deps = getattr(source, "property_dependencies", None) or {}
        for dep in deps.get("cluster", []):
            for c in clusters:
                if c.urn == getattr(dep, "urn", None):
                    return c
        ref = pool.cluster_ref
        if isinstance(ref, str) and ref:
            short = ref.rsplit("/", 1)[-1]
            for c in clusters:
                if c.name in (ref, short):
                    return c
        return clusters[0] if len(clusters) == 1 else None

    # --- Helm --------------------------------------------------------------------------------
    def helm_releases(self, chart_id: str | None = None) -> list[HelmRelease]:
        releases: list[HelmRelease] = [self.view(r) for r in self.of_type(HELM_RELEASE)]
        return [r for r in releases if chart_id is None or r.chart_id == chart_id]

    def kueue_releases(self) -> list[HelmRelease]:
        return self.helm_releases(KUEUE)

    def kuberay_releases(self) -> list[HelmRelease]:
        return self.helm_releases(KUBERAY)

    def kai_releases(self) -> list[HelmRelease]:
        return self.helm_releases(KAI)

    def skypilot_releases(self) -> list[HelmRelease]:
        return self.helm_releases(SKYPILOT)
