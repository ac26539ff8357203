"""Chart-rendered objects as ordinary model objects, so every rule sees what a release installs.

KAI's chart creates its scheduler's queues and priority classes, Kueue's its webhooks and
Deployments, SkyPilot's its API server: a rule that asks "does this queue exist?" or "does this
pod fit a node?" must count them exactly like objects the program declares (issue: "the rendered
objects also feed the existing rules").  Each rendered manifest becomes a
:class:`~..model.base.KubeObject` with the type token a program declaring it would register
(``kubernetes:<group>/<version>:<Kind>``), placed in the release's namespace when the kind is
namespaced and the chart left ``metadata.namespace`` empty (Helm installs it there), and marked
``rendered_from`` the release's URN -- which is also its ``urn``, because findings must name a
resource the engine knows.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from ...primitives.tokens import HELM_RELEASE, type_token
from ..model.base import KubeObject, Resource, build_resource, is_namespaced
from ..model.helm import helm_release
from .operator_runtime import operand_manifests, runtime_manifests
from .release import ReleaseRender, render_release
from .resolver import ChartResolver, default_resolver


def crd_cluster_scoped(renders: Iterable[ReleaseRender]) -> set[tuple[str, str]]:
    """(group, kind) of every cluster-scoped CRD the releases install."""
    scoped: set[tuple[str, str]] = set()
    for outcome in renders:
        for rendered in outcome.objects:
            doc = rendered.manifest
            if doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc.get("spec") if isinstance(doc.get("spec"), dict) else {}
            assert isinstance(spec, dict)
            names = spec.get("names") if isinstance(spec.get("names"), dict) else {}
            assert isinstance(names, dict)
            if spec.get("scope") == "Cluster":
                scoped.add((str(spec.get("group", "")), str(names.get("kind", ""))))
    return scoped


def with_release_namespace(
    manifest: dict[str, Any], namespace: str, cluster_scoped: set[tuple[str, str]]
) -> dict[str, Any]:
    """The manifest as it lands: namespaced kinds in the release namespace (Helm puts them there),
    cluster-scoped kinds without one."""
    api_version = str(manifest.get("apiVersion", ""))
    group = api_version.rpartition("/")[0]
    kind = str(manifest.get("kind", ""))
    meta = manifest.get("metadata")
    if (group, kind) in cluster_scoped or not is_namespaced(group, kind):
        if isinstance(meta, dict) and "namespace" in meta:
            # The API server clears a cluster-scoped object's namespace on create
            # (k8s.io/apiserver pkg/registry/rest/create.go BeforeCreate); so does this.
            cleared = copy.copy(manifest)
            cleared["metadata"] = {k: v for k, v in meta.items() if k != "namespace"}
            return cleared
        return manifest
    if isinstance(meta, dict) and meta.get("namespace"):
        return manifest
    placed = copy.copy(manifest)
    placed["metadata"] = {**(meta if isinstance(meta, dict) else {}), "namespace": namespace}
    return placed


def render_releases(
    resources: Iterable[Resource], resolver: ChartResolver | None = None
) -> tuple[list[KubeObject], dict[str, ReleaseRender]]:
    """Render every Helm v3 release among ``resources``: the objects, and each release's outcome."""
    resolver = resolver or default_resolver()
    renders: dict[str, ReleaseRender] = {}
    for res in resources:
        if res.type != HELM_RELEASE:
            continue
        release = helm_release(res)
        renders[res.urn] = render_release(
            chart=release.chart,
            version=release.version,
            repo=release.repo,
            release_name=release.release_name,
            namespace=release.namespace if release.namespace is not None else "default",
            values=release.values,
            resolver=resolver,
            skip_crds=release.skip_crds,
        )
    scoped = crd_cluster_scoped(renders.values())
    objects: list[KubeObject] = []
    for urn, outcome in renders.items():
        # Plus what an operator the release installs creates at run time (the GPU Operator's
        # RuntimeClasses and operand DaemonSets, charts/operator_runtime.py): they exist on the
        # cluster just the same.
        manifests = [
            *(r.manifest for r in outcome.objects),
            *runtime_manifests(outcome.objects),
            *operand_manifests(outcome.objects),
        ]
        for raw in manifests:
            manifest = with_release_namespace(raw, outcome.namespace, scoped)
            token = type_token(str(manifest.get("apiVersion", "")), str(manifest.get("kind", "")))
            obj = build_resource(token, manifest, urn, outcome.release_name)
            if isinstance(obj, KubeObject):
                obj.rendered_from = urn
                objects.append(obj)
    return objects, renders
