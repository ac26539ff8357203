"""The stack as typed objects: the one entry point rules use to read resources.

``StackModel`` is built from ``StackValidationArgs.resources`` (planned outputs, with parent and
dependency links) or from any list of (type, props, urn, name) registrations; ``view()`` gives the
same typed object for a single resource in a ``ResourceValidationPolicy``.  Everything is keyed by
the wire type token, so the pack judges any program's resources (DESIGN.md): Kueue objects of both
served versions, KAI ``scheduling.run.ai/v2`` Queues, KubeRay ``ray.io/v1`` workloads, namespaces,
GKE clusters/node pools and Helm v3 releases.  The views live in this package's modules, one per
API family (``base``, ``gke``, ``helm``, ``kueue``, ``workloads``); rules import them from here.

Unknown values (preview) are :class:`Unknown` markers — see ``values.py`` — and a reference
lookup returns three states (found / missing / unknown) so a rule never reports a dangling
reference that merely is not known yet.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from ...primitives.tokens import (
    CORE_GROUP,
    GKE_CLUSTER,
    GKE_NODE_POOL,
    HELM_RELEASE,
    KAI_GROUP,
    KUEUE_GROUP,
    RAY_GROUP,
    TypeToken,
    parse_token,
)
from ...primitives.values import Unknown
from ..charts.release import ReleaseRender
from .base import DEFAULT_NAMESPACE, KubeObject, Resource, Subject, build_resource
from .gke import GkeCluster, NodePool, gke_cluster, node_pool
from .helm import KAI, KUBERAY, KUEUE, SKYPILOT, HelmRelease, helm_release
from .kueue import (
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
from .workloads import KaiQueue, Namespace, RayWorkload, kai_queue, ray_workload

RAY_KINDS = ("RayJob", "RayCluster", "RayService")
T = TypeVar("T")

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
    "view_class",
]


_KUEUE_VIEWS: dict[str, tuple[type, Callable[[Any], Any]]] = {
    "ClusterQueue": (ClusterQueue, cluster_queue),
    "Cohort": (Cohort, cohort),
    "LocalQueue": (LocalQueue, local_queue),
    "ResourceFlavor": (ResourceFlavor, resource_flavor),
    "AdmissionCheck": (AdmissionCheck, admission_check),
    "ProvisioningRequestConfig": (ProvisioningRequestConfig, provisioning_request_config),
    "WorkloadPriorityClass": (WorkloadPriorityClass, workload_priority_class),
}


def _view_factory(resource_type: str, token: TypeToken) -> tuple[type, Callable[[Any], Any] | None]:
    """The view class of a type token and the function that builds it (None: the bare
    Resource/KubeObject is the view).  One table for :func:`view` and :func:`view_class`."""
    if resource_type == GKE_CLUSTER:
        return GkeCluster, gke_cluster
    if resource_type == GKE_NODE_POOL:
        return NodePool, node_pool
    if resource_type == HELM_RELEASE:
        return HelmRelease, helm_release
    if not token.is_k8s_object:
        return Resource, None
    group, kind = token.group, token.kind
    if group == KUEUE_GROUP and kind in _KUEUE_VIEWS:
        return _KUEUE_VIEWS[kind]
    if group == KAI_GROUP and kind == "Queue":
        return KaiQueue, kai_queue
    if group == RAY_GROUP and kind in RAY_KINDS:
        return RayWorkload, ray_workload
    if group == CORE_GROUP and kind == "Namespace":
        return Namespace, Namespace
    return KubeObject, None


def view(res: Resource) -> Any:
    """The typed view of one resource, or the bare Resource/KubeObject if no view applies."""
    _, factory = _view_factory(res.type, res.token)
    return factory(res) if factory is not None else res


def view_class(resource_type: str) -> type:
    """The class :func:`view` returns for resources of this type token, without reading any
    property: a resource policy skips resources it does not judge before converting them."""
    return _view_factory(resource_type, parse_token(resource_type))[0]


def canonical_order(resource: Resource) -> tuple[bool, str]:
    """The model's one iteration order: declared resources by URN, then what releases render,
    grouped by their release's URN in the order Helm renders them (a stable sort keeps it).

    Why: ``AnalyzeStack`` sends resources in registration order, which follows how the program's
    outputs resolve (the SDK's executor threads) and changes from run to run of the same program
    (``tests/test_deterministic_output.py``).  Every rule that names "the first" object, lists
    objects, or stops after N findings reads the model in this order, so its text is the same on
    every run and every machine.  A URN is unique per registration (the engine refuses a
    duplicate), and a rendered object's ``urn`` is its release's, so declared resources come first:
    :meth:`StackModel.by_urn` of a release's URN finds the release.
    """
    return (getattr(resource, "rendered_from", None) is not None, resource.urn)


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
    """Typed, indexed access to every resource of a stack.

    Rules resolve references inside loops over the stack's objects, so every lookup here is a
    dict access built once in ``__init__`` (by URN, type token, group/kind and group/kind/name),
    and every view list is built once: a rule's cost stays linear in the number of resources.
    Derived per-stack tables (cohort totals, parsed chart values ...) live in :meth:`memo`.
    """

    def __init__(
        self, resources: Iterable[Resource], renders: Mapping[str, ReleaseRender] | None = None
    ) -> None:
        self.resources: list[Resource] = sorted(resources, key=canonical_order)
        # What each Helm release (by URN) renders to; its objects are among ``resources``.
        self.renders: dict[str, ReleaseRender] = dict(renders or {})
        self.objects: list[KubeObject] = [r for r in self.resources if isinstance(r, KubeObject)]
        self._views: dict[int, Any] = {}
        self._view_lists: dict[tuple[str, tuple[str, ...]], list[Any]] = {}
        self._memo: dict[str, Any] = {}
        self._by_urn: dict[str, Resource] = {}
        self._by_type: dict[str, list[Resource]] = {}
        for r in self.resources:
            self._by_urn.setdefault(r.urn, r)
            self._by_type.setdefault(r.type, []).append(r)
        self._by_kind: dict[tuple[str, str], list[KubeObject]] = {}
        self._by_name: dict[tuple[str, str, str], list[KubeObject]] = {}
        # Namespaced kinds by name *and* namespace: every team may have a LocalQueue "default".
        self._by_namespaced_name: dict[tuple[str, str, str, str | None], list[KubeObject]] = {}
        # (group, kind) with some object whose name/namespace is unknown until apply.
        self._identity_unknown: set[tuple[str, str]] = set()
        for o in self.objects:
            group, kind = o.group, o.kind
            self._by_kind.setdefault((group, kind), []).append(o)
            self._by_name.setdefault((group, kind, o.name), []).append(o)
            self._by_namespaced_name.setdefault((group, kind, o.name, o.namespace), []).append(o)
            if not o.identity_known:
                self._identity_unknown.add((group, kind))

    # --- construction ------------------------------------------------------------------------
    @classmethod
    def with_releases_rendered(cls, resources: Iterable[Resource], *, render: bool = True) -> StackModel:
        """The model of ``resources`` plus every object their Helm releases install (rendered
        with the real Helm engine, see :mod:`..charts`), so chart-created objects count as
        declared.  ``render=False`` judges the declared resources alone."""
        from ..charts.objects import render_releases  # charts.objects imports model.base

        declared = list(resources)
        if not render:
            return cls(declared)
        rendered, renders = render_releases(declared)
        return cls([*declared, *rendered], renders)

    @classmethod
    def from_policy_resources(cls, resources: Sequence[Any]) -> StackModel:
        """From ``StackValidationArgs.resources`` (``PolicyResource`` objects)."""
        return cls.with_releases_rendered(
            build_resource(r.resource_type, r.props, r.urn, r.name, source=r) for r in resources
        )

    @classmethod
    def from_args(cls, args: Any) -> StackModel:
        return cls.from_policy_resources(args.resources)

    @classmethod
    def from_plain(cls, items: Iterable[tuple[str, Any, str, str]], *, render: bool = True) -> StackModel:
        """From ``(type, props, urn, name)`` tuples (tests, other tools)."""
        return cls.with_releases_rendered((build_resource(t, p, u, n) for t, p, u, n in items), render=render)

    # --- generic access ----------------------------------------------------------------------
    def view(self, res: Resource) -> Any:
        key = id(res)
        if key not in self._views:
            self._views[key] = view(res)
        return self._views[key]

    def memo(self, key: str, build: Callable[[], T]) -> T:
        """``build()`` once per model: per-stack tables derived from many resources (e.g. cohort
        lending totals), so a rule that needs them per object does not recompute them."""
        if key not in self._memo:
            self._memo[key] = build()
        value: T = self._memo[key]
        return value

    def kube_objects(self, group: str | None = None, kind: str | None = None) -> list[KubeObject]:
        if group is not None and kind is not None:
            return list(self._by_kind.get((group, kind), ()))
        return [
            o
            for o in self.objects
            if (group is None or o.group == group) and (kind is None or o.kind == kind)
        ]

    def of_type(self, resource_type: str) -> list[Resource]:
        return list(self._by_type.get(resource_type, ()))

    def by_urn(self, urn: str) -> Resource | None:
        return self._by_urn.get(urn)

    def lookup(
        self,
        group: str,
        kind: str,
        name: str | Unknown | None,
        namespace: str | None = None,
        *,
        near: Any = None,
    ) -> Lookup:
        """Resolve ``name`` (in ``namespace`` for namespaced kinds) among objects of group/kind,
        across all API versions of the group.

        ``near``: the object (or view) that names it.  Each API server resolves names among its
        own objects only, so in a program reaching several clusters (a MultiKueue manager and its
        workers) a name that exists only on another cluster is missing here: candidates are kept
        when :meth:`cluster_key` matches ``near``'s.  An object sent through the default provider
        (no explicit provider) is taken to be on every cluster, and ``near`` on it sees every
        candidate: which cluster the ambient kubeconfig reaches is not in the program."""
        if isinstance(name, Unknown):
            return Lookup("unknown")
        if not isinstance(name, str):
            found: tuple[KubeObject, ...] = ()
        elif namespace is None:
            found = tuple(self._by_name.get((group, kind, name), ()))
        else:
            found = tuple(self._by_namespaced_name.get((group, kind, name, namespace), ()))
        if found and near is not None:
            here = self.cluster_key(getattr(near, "obj", None) or getattr(near, "res", None) or near)
            if here:
                found = tuple(o for o in found if self.cluster_key(o) in (here, ""))
                if not found:
                    return Lookup("missing")
        if found:
            return Lookup("found", found)
        if (group, kind) in self._identity_unknown:
            return Lookup("unknown")
        return Lookup("missing")

    # --- clusters (one per Kubernetes provider) --------------------------------------------------
    def provider_of(self, res: Resource) -> str:
        """The URN of the Kubernetes provider ``res`` is sent through ("" for the default
        provider); an object a Helm release renders goes where its release goes."""
        rendered_from = res.rendered_from if isinstance(res, KubeObject) else None
        if rendered_from is not None:
            release = self.by_urn(rendered_from)
            if release is not None:
                res = release
        urn = getattr(getattr(res.source, "provider", None), "urn", None)
        return urn if isinstance(urn, str) else ""

    def linked_gke_cluster(self, provider: str) -> GkeCluster | None:
        """The one GKE cluster the provider's kubeconfig (or ``dependsOn``) depends on, else None."""
        res = self.by_urn(provider) if provider else None
        if res is None:
            return None
        source = res.source
        urns = {getattr(d, "urn", None) for d in getattr(source, "dependencies", None) or ()}
        for deps in (getattr(source, "property_dependencies", None) or {}).values():
            urns.update(getattr(d, "urn", None) for d in deps or ())
        linked = [c for c in self.gke_clusters() if c.urn in urns]
        return linked[0] if len(linked) == 1 else None

    def node_pools_near(self, near: Any) -> list[NodePool]:
        """The node pools of ``near``'s cluster: those of the GKE cluster its provider reaches
        (``cluster_of``); every pool when that cluster is not known (the default provider, or a
        provider depending on no single GKE cluster of the program)."""
        key = self.cluster_key(getattr(near, "obj", None) or getattr(near, "res", None) or near)
        if not key or key not in {c.urn for c in self.gke_clusters()}:
            return self.node_pools()
        return [p for p in self.node_pools() if (c := self.cluster_of(p)) is not None and c.urn == key]

    def cluster_key(self, res: Resource) -> str:
        """Which cluster ``res`` goes to: the GKE cluster its provider depends on (two providers
        of one cluster -- e.g. one for retained CRDs -- are one cluster, as ``manifests.yaml``
        groups them), else its provider's URN; "" for the default provider."""
        provider = self.provider_of(res)
        if not provider:
            return ""
        keys: dict[str, str] = self.memo("cluster_keys", dict)
        if provider not in keys:
            gke = self.linked_gke_cluster(provider)
            keys[provider] = gke.urn if gke is not None else provider
        return keys[provider]

    def _views_of(self, group: str, kinds: Sequence[str]) -> list[Any]:
        key = (group, tuple(kinds))
        if key not in self._view_lists:
            self._view_lists[key] = [
                self.view(o) for o in self.objects if o.group == group and o.kind in kinds
            ]
        return list(self._view_lists[key])

    # --- Kueue -------------------------------------------------------------------------------
    def cluster_queues(self) -> list[ClusterQueue]:
        return self._views_of(KUEUE_GROUP, ("ClusterQueue",))

    def local_queues(self) -> list[LocalQueue]:
        return self._views_of(KUEUE_GROUP, ("LocalQueue",))

    def local_queues_in(self, namespace: str | None) -> list[LocalQueue]:
        """LocalQueues of one namespace (for "use one of these" fixes, without a scan per object)."""

        def build() -> dict[str, list[LocalQueue]]:
            out: dict[str, list[LocalQueue]] = {}
            for lq in self.local_queues():
                out.setdefault(lq.namespace, []).append(lq)
            return out

        if namespace is None:
            return []
        return list(self.memo("local_queues_by_namespace", build).get(namespace, ()))

    def local_queues_named(self, name: str) -> list[LocalQueue]:
        """LocalQueues of that name in any namespace."""

        def build() -> dict[str, list[LocalQueue]]:
            out: dict[str, list[LocalQueue]] = {}
            for lq in self.local_queues():
                out.setdefault(lq.name, []).append(lq)
            return out

        return list(self.memo("local_queues_by_name", build).get(name, ()))

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

    def find_cluster_queue(
        self, name: str | Unknown | None, *, near: Any = None
    ) -> tuple[Lookup, ClusterQueue | None]:
        found = self.lookup(KUEUE_GROUP, "ClusterQueue", name, near=near)
        return found, (self.view(found.found[0]) if found.ok else None)

    def find_local_queue(
        self, name: str | Unknown | None, namespace: str, *, near: Any = None
    ) -> tuple[Lookup, LocalQueue | None]:
        found = self.lookup(KUEUE_GROUP, "LocalQueue", name, namespace, near=near)
        return found, (self.view(found.found[0]) if found.ok else None)

    def find_resource_flavor(
        self, name: str | Unknown | None, *, near: Any = None
    ) -> tuple[Lookup, ResourceFlavor | None]:
        found = self.lookup(KUEUE_GROUP, "ResourceFlavor", name, near=near)
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
        return self.memo("gke_clusters", lambda: [self.view(r) for r in self.of_type(GKE_CLUSTER)])

    def node_pools(self) -> list[NodePool]:
        return self.memo("node_pools", lambda: [self.view(r) for r in self.of_type(GKE_NODE_POOL)])

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
        """Every release, or those of one chart; built once per model and chart, because rules
        ask per workload (e.g. which Kueue release governs it) and a stack has a release per
        team (SkyPilot), so a fresh scan per call would make the pack quadratic in teams."""

        def build() -> list[HelmRelease]:
            releases: list[HelmRelease] = [self.view(r) for r in self.of_type(HELM_RELEASE)]
            return [r for r in releases if chart_id is None or r.chart_id == chart_id]

        return self.memo(f"helm_releases:{chart_id}", build)

    def kueue_releases(self) -> list[HelmRelease]:
        return self.helm_releases(KUEUE)

    def kuberay_releases(self) -> list[HelmRelease]:
        return self.helm_releases(KUBERAY)

    def kai_releases(self) -> list[HelmRelease]:
        return self.helm_releases(KAI)

    def skypilot_releases(self) -> list[HelmRelease]:
        return self.helm_releases(SKYPILOT)
