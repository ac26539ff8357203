"""A repo stack's Kubernetes objects, deployed to live clusters as ``pulumi up`` would send them.

:func:`stack_clusters` runs the stack's real program under the preview's mocks and renders its
Helm releases with the project's own Helm machinery (exactly what ``build/<stack>/manifests.yaml``
holds), grouped per cluster.  :func:`deploy` sends one cluster's objects to a fresh live cluster
by server-side apply, in dependency order:

1. the platform's CRDs GKE installs itself (Managed Prometheus, GKE networking, Gateway API from
   ``../shared/schemas``; ProvisioningRequest from the cluster-autoscaler API module Kueue's
   pinned go.mod requires), then the stack's Namespaces and CustomResourceDefinitions;
2. each Helm release's objects (Helm's install order), the Kueue release's webhook
   configurations and the Kueue CRDs' conversion webhooks pointed at Kueue's manager, which is
   then started with the stack's own Kueue configuration and waited on until its webhooks serve;
   admission webhook configurations of releases whose operator does not run here (KAI, the GPU
   Operator, ...) are held back to step 4, so that they are applied and validated but call no
   absent server for the stack's own objects;
3. every other declared object in the program's registration order (Pulumi creates nothing
   before what it depends on, so this order is a dependency order); a ``<Kind>Patch`` is applied
   with a field manager of its own, as pulumi-kubernetes does, so it merges into its target;
4. the held-back webhook configurations.

Values the preview cannot know -- ``(unknown)`` (known only after deploy) and ``[secret]``
(a Pulumi secret) -- are replaced by stand-ins (:func:`stand_ins`) and counted.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from tests.live import toolchain
from tests.live.cluster import FIELD_MANAGER, Applied, Cluster, ControlPlane, LiveError
from tests.live.kueue import KueueManager, chart_config, webhook_services

if TYPE_CHECKING:
    from preview.harness import RunResult

ROOT = toolchain.ROOT
SCHEMAS = ROOT.parent / "shared" / "schemas"
# the CRDs GKE itself installs, as ../shared/schemas mirrors them (each folder's SOURCE.txt)
PLATFORM_CRD_FOLDERS = ("gmp", "gke-networking", "gke-gateway-api", "gateway-api")
UNKNOWN = "(unknown)"
SECRET = "[secret]"
WEBHOOK_KINDS = ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")
# Helm's InstallOrder (pkg/release/util/kind_sorter.go); kinds it does not list go last
HELM_INSTALL_ORDER = [
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
]


@dataclass(frozen=True)
class Release:
    title: str
    chart: str
    namespace: str
    objects: tuple[dict[str, Any], ...]
    create_namespace: bool = False  # the release's createNamespace (helm install --create-namespace)


@dataclass(frozen=True)
class ClusterObjects:
    """One cluster's objects: declared (registration order, patches marked) and per release."""

    title: str
    declared: tuple[dict[str, Any], ...]
    patches: frozenset[int]  # indexes into declared of <Kind>Patch objects
    releases: tuple[Release, ...]
    urns: tuple[str, ...] = ()  # the URN of each declared object (the plan's key for it)


@dataclass
class Deployment:
    """What :func:`deploy` did: every answer, in order, and the Kueue manager it started."""

    cluster: Cluster
    objects: ClusterObjects
    results: list[Applied] = field(default_factory=list)
    kueue: KueueManager | None = None
    stand_ins: int = 0

    @property
    def refused(self) -> list[Applied]:
        return [r for r in self.results if not r.accepted]


@cache
def stack_run(stack: str) -> RunResult:
    """The stack's program run under the preview's mocks (its plan and its objects): this
    module's own copy of the test process's shared run (``tests.stack_runner.unedited_run``), so a
    worker that has run the stack for another file does not run it again here."""
    from tests.stack_runner import unedited_run

    return unedited_run(stack)


@cache
def stack_clusters(stack: str) -> tuple[ClusterObjects, ...]:
    """The stack's objects per cluster, as ``python -m preview --stack <stack>`` renders them."""
    return clusters_of(stack_run(stack), stack)


def clusters_of(result: RunResult, stack: str) -> tuple[ClusterObjects, ...]:
    """A program run's objects per cluster (``stack`` names it in errors): the declared ones in
    registration order with their URNs, and each Helm release rendered."""
    from preview.charts import render_recorded_releases
    from preview.clusters import cluster_groups
    from preview.manifests import is_kubernetes_object, render_manifests
    from preview.ssa_patches import is_patch

    releases = render_recorded_releases(result.resources, ROOT)
    out: list[ClusterObjects] = []
    for group in cluster_groups(result.resources, releases):
        records = [r for r in group.resources if is_kubernetes_object(r)]
        # render_manifests sorts for a stable file; here each record keeps its registration place
        declared = [render_manifests([r])[0] for r in records]
        patches = frozenset(i for i, r in enumerate(records) if is_patch(r))
        rels = []
        for release in group.releases:
            if not release.objects:
                raise LiveError(f"{stack}: {release.title} rendered no objects: {release.render}")
            rels.append(
                Release(
                    release.title,
                    str(getattr(release.render.reference, "name", "")),
                    str(release.render.namespace or ""),
                    tuple(copy.deepcopy(o) for o in release.objects),
                    bool(release.resource.inputs.get("createNamespace")),
                )
            )
        urns = tuple(r.urn for r in records)
        out.append(ClusterObjects(group.title, tuple(declared), patches, tuple(rels), urns))
    return tuple(out)


def kueue_objects(stack: str = "dev") -> ClusterObjects:
    """The Kueue parts of ``stack``: its Kueue CRDs, its Kueue Helm release and their Namespace."""
    (objects,) = stack_clusters(stack)
    releases = tuple(r for r in objects.releases if r.chart == "kueue")
    namespaces = {r.namespace for r in releases}
    kueue = tuple(
        o
        for o in objects.declared
        if (
            o.get("kind") == "CustomResourceDefinition"
            and str(o["metadata"]["name"]).endswith(".kueue.x-k8s.io")
        )
        or (o.get("kind") == "Namespace" and o["metadata"]["name"] in namespaces)
    )
    return ClusterObjects(f"Kueue of the {stack} stack", kueue, frozenset(), releases)


def stand_ins(obj: Any) -> tuple[Any, int]:
    """``obj`` with every value the preview cannot know replaced; returns it and how many.

    ``(unknown)`` becomes ``unknown-until-deploy``; a ``[secret]`` string becomes
    ``secret-stand-in``; a whole ``data``/``stringData`` map that is one secret becomes ``{}``."""
    count = 0

    def walk(value: Any, key: str = "") -> Any:
        nonlocal count
        if value == SECRET and key in ("data", "stringData"):
            count += 1
            return {}
        if value == UNKNOWN:
            count += 1
            return "unknown-until-deploy"
        if value == SECRET:
            count += 1
            return "c2VjcmV0LXN0YW5kLWlu" if key == "data-value" else "secret-stand-in"
        if isinstance(value, dict):
            return {k: walk(v, "data-value" if key == "data" else k) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return walk(obj), count


@cache
def platform_crds() -> tuple[dict[str, Any], ...]:
    """The CRDs a GKE cluster has before anything of ours is applied."""
    crds: list[dict[str, Any]] = []
    for folder in PLATFORM_CRD_FOLDERS:
        for path in sorted((SCHEMAS / folder).glob("*.yaml")):
            crds.extend(
                d
                for d in yaml.safe_load_all(path.read_text())
                if d and d.get("kind") == "CustomResourceDefinition"
            )
    crds.append(provisioning_request_crd())
    return tuple(crds)


def provisioning_request_crd() -> dict[str, Any]:
    """GKE's ProvisioningRequest CRD, from the k8s.io/autoscaler/cluster-autoscaler/apis module at
    the version Kueue's pinned go.mod requires (downloaded by name from the Go module proxy)."""
    env = {**os.environ, "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod"}

    def download(module: str) -> dict[str, Any]:
        proc = subprocess.run(
            ["go", "mod", "download", "-json", module], capture_output=True, text=True, env=env, check=False
        )
        info = json.loads(proc.stdout) if proc.stdout.strip() else {}
        if proc.returncode != 0 or "Error" in info:
            raise LiveError(f"`go mod download -json {module}`: {info.get('Error') or proc.stderr.strip()}")
        return info

    kueue = download(f"sigs.k8s.io/kueue@{toolchain.kueue_version()}")
    gomod = Path(kueue["GoMod"]).read_text()
    (version,) = [
        line.split()[1]
        for line in gomod.splitlines()
        if line.strip().startswith("k8s.io/autoscaler/cluster-autoscaler/apis ")
    ]
    apis = download(f"k8s.io/autoscaler/cluster-autoscaler/apis@{version}")
    path = Path(apis["Dir"]) / "config" / "crd" / "autoscaling.x-k8s.io_provisioningrequests.yaml"
    loaded = yaml.safe_load(path.read_text())
    assert isinstance(loaded, dict)
    return loaded


def _helm_rank(obj: Mapping[str, Any]) -> int:
    kind = str(obj.get("kind"))
    return HELM_INSTALL_ORDER.index(kind) if kind in HELM_INSTALL_ORDER else len(HELM_INSTALL_ORDER)


def _is_kueue(release: Release) -> bool:
    return release.chart == "kueue"


def deploy(plane: ControlPlane, objects: ClusterObjects, *, name: str, platform: bool = True) -> Deployment:
    """``objects`` applied to a new cluster of ``plane`` (see the module doc for the order).

    The caller stops ``deployment.cluster``; if deploying raises, the cluster is stopped here."""
    cluster = plane.cluster(name)
    try:
        return deploy_to(cluster, objects, platform=platform)
    except BaseException:
        cluster.stop()
        raise


def deploy_clusters(
    plane: ControlPlane, sections: Sequence[ClusterObjects], *, name: str
) -> list[Deployment]:
    """Each of ``sections`` deployed by :func:`deploy` to a cluster of its own (``<name>-<n>``),
    all at once: the clusters of a stack are independent (a MultiKueue manager reaches its
    workers only once a test writes their kubeconfigs, ``queue_live.connect_workers``), and each
    deploy mostly waits on its API server and Kueue's manager, so one after the other a
    three-cluster stack waited three times as long.

    Returns the deployments in ``sections``' order; the caller stops their clusters.  If any
    deploy raises, the clusters that did start are stopped here and the first error is raised
    (every cluster is also in ``plane.clusters``, which the session stops in any case)."""
    platform_crds()  # read (and downloaded) once, before the threads share it
    with ThreadPoolExecutor(max_workers=max(1, len(sections)), thread_name_prefix=f"deploy-{name}") as pool:
        futures = [
            pool.submit(deploy, plane, objects, name=f"{name}-{n}") for n, objects in enumerate(sections)
        ]
    deployments: list[Deployment] = []
    errors: list[BaseException] = []
    for future in futures:
        error = future.exception()
        if error is None:
            deployments.append(future.result())
        else:
            errors.append(error)
    if errors:
        for deployment in deployments:
            deployment.cluster.stop()
        raise errors[0]
    return deployments


def deploy_to(cluster: Cluster, objects: ClusterObjects, *, platform: bool = True) -> Deployment:
    """``objects`` applied to a running ``cluster``, in :func:`deploy`'s order (a cluster that
    already runs Kueue gets objects without a Kueue release: nothing is started twice).
    ``platform=False``: without GKE's own CRDs, for objects that need none (RBAC, policies)."""
    deployment = Deployment(cluster, objects)

    def replaced(obj: Mapping[str, Any]) -> dict[str, Any]:
        out, count = stand_ins(obj)
        deployment.stand_ins += count
        assert isinstance(out, dict)
        return out

    kueue_release = next((r for r in objects.releases if _is_kueue(r)), None)
    services: set[tuple[str, str]] = set()
    if kueue_release is not None:
        # prepared now (ports, certificates), started once its CRDs and release objects are in
        deployment.kueue = KueueManager(cluster, chart_config(kueue_release.objects))
        services = webhook_services(kueue_release.objects)

    def pointed(objs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        out = [replaced(o) for o in objs]
        return deployment.kueue.point_webhooks(out, services) if deployment.kueue else out

    # 1. platform CRDs, then the stack's Namespaces and CRDs (declared, then from releases)
    first_kinds = ("Namespace", "CustomResourceDefinition")
    release_objects = [o for r in objects.releases for o in r.objects]
    stack_crds = {
        (o.get("metadata") or {}).get("name")
        for o in [*objects.declared, *release_objects]
        if o.get("kind") == "CustomResourceDefinition"
    }
    if platform:
        deployment.results += cluster.apply(
            [c for c in platform_crds() if c["metadata"]["name"] not in stack_crds]
        )
    first = [
        i for i, o in enumerate(objects.declared) if o.get("kind") in first_kinds and i not in objects.patches
    ]
    deployment.results += cluster.apply(pointed(objects.declared[i] for i in first))
    release_first = [o for o in release_objects if o.get("kind") in first_kinds]
    # what `helm install --create-namespace` creates, unless the program declares it
    declared_ns = {
        (o.get("metadata") or {}).get("name") for o in objects.declared if o.get("kind") == "Namespace"
    }
    release_first[:0] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": r.namespace}}
        for r in objects.releases
        if r.create_namespace and r.namespace not in declared_ns
    ]
    deployment.results += cluster.apply(pointed(release_first))
    _wait_established(cluster, [*(objects.declared[i] for i in first), *release_first])

    # 2. the releases (Kueue's first); Kueue's manager serving before any other object goes in
    held_back: list[dict[str, Any]] = []
    for release in sorted(objects.releases, key=lambda r: not _is_kueue(r)):
        rest = sorted((o for o in release.objects if o.get("kind") not in first_kinds), key=_helm_rank)
        if not _is_kueue(release):
            held_back += [o for o in rest if o.get("kind") in WEBHOOK_KINDS]
            rest = [o for o in rest if o.get("kind") not in WEBHOOK_KINDS]
        deployment.results += cluster.apply(pointed(rest))
        if _is_kueue(release) and deployment.kueue is not None:
            deployment.kueue.start().wait_ready()

    # 3. the rest of the declared objects, in registration order; a patch as its own manager
    for i, obj in enumerate(objects.declared):
        if i in first:
            continue
        manager = f"{FIELD_MANAGER}-patch-{i}" if i in objects.patches else FIELD_MANAGER
        deployment.results += cluster.apply(pointed([obj]), field_manager=manager)

    # 4. the webhook configurations of operators that do not run here
    deployment.results += cluster.apply(pointed(held_back))
    return deployment


def _wait_established(cluster: Cluster, objects: Sequence[Mapping[str, Any]]) -> None:
    names = [
        (o.get("metadata") or {}).get("name") for o in objects if o.get("kind") == "CustomResourceDefinition"
    ]

    def established() -> bool:
        for name in names:
            crd = cluster.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", str(name))
            if crd is None:
                continue  # refused: reported by its Applied
            conditions = (crd.get("status") or {}).get("conditions") or []
            if not any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions):
                return False
        return True

    cluster.wait_for(established, 60, "the CRDs to be Established")
