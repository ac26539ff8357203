"""The preview's chart stage: resolve every pinned chart, render every release, gather CRDs.

Three jobs, all through the policy pack's own chart code (``gpu_batch_policy.facts.charts``), so the
preview and the pack resolve and render identically:

- :func:`resolve_locked` -- before the program runs, resolve every chart of ``charts.lock.yaml``
  (cache, mirror, upstream).  A machine that can reach none of them stops here with the one-line
  :class:`ChartUnavailableError` (the CLI exits 2), not half-way through a plan.
- :func:`render_recorded_releases` -- render each recorded ``kubernetes:helm.sh/v3:Release`` with
  its chart, version, values, release name and namespace, in display form: a secret value is
  rendered as ``[secret]`` and never reaches ``manifests.yaml``; an unknown one as ``(unknown)``.
- :func:`locked_crd_catalog` / :func:`crd_catalog_for` -- the CRD schemas strict validation uses:
  the CRDs the stack's own releases install first, then those of every pinned chart at its
  default values, never ``../shared/schemas``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpu_batch_policy.facts.charts import (
    ChartReference,
    ChartUnavailableError,
    default_resolver,
)
from gpu_batch_policy.facts.charts.objects import crd_cluster_scoped, with_release_namespace
from gpu_batch_policy.facts.charts.release import ReleaseRender, render_release
from gpu_batch_policy.facts.schema.crd import CrdCatalog
from gpu_batch_policy.facts.schema.markers import UNKNOWN_DISPLAY
from gpu_batch_policy.facts.schema.pinned import catalog_with, pinned_catalog
from gpu_batch_policy.primitives.values import Unknown

from components.chart_lock import locked_charts
from preview.manifest_resources import HELM_RELEASE_TYPE
from preview.postrender import post_render
from preview.project import PROJECT_DIR
from preview.records import RecordedResource, for_display

__all__ = [
    "ChartUnavailableError",
    "ReleaseManifests",
    "crd_catalog_for",
    "default_resolver",
    "locked_crd_catalog",
    "render_recorded_releases",
    "resolve_locked",
]


@dataclass(frozen=True)
class ReleaseManifests:
    """One recorded release and what it installs (display form), or why it did not render."""

    resource: RecordedResource
    render: ReleaseRender
    objects: tuple[dict[str, Any], ...]

    @property
    def title(self) -> str:
        chart = str(self.render.reference) if self.render.reference else "chart ?"
        return f"Helm release {self.render.namespace or '?'}/{self.render.release_name or self.resource.name} ({chart})"


def locked_references() -> list[ChartReference]:
    """Every chart of ``charts.lock.yaml`` as a resolvable reference."""
    return [ChartReference(c.name, c.version, c.source) for c in locked_charts().values()]


def resolve_locked() -> dict[ChartReference, Path]:
    """Resolve every pinned chart; raises :class:`ChartUnavailableError` for the first that fails."""
    resolver = default_resolver()
    return {reference: resolver.resolve(reference) for reference in locked_references()}


def _markers_as_unknown(value: Any, path: str = "") -> Any:
    """Display form with ``(unknown)`` back as :class:`Unknown` (the render counts stand-ins)."""
    if value == UNKNOWN_DISPLAY:
        return Unknown(path)
    if isinstance(value, dict):
        return {k: _markers_as_unknown(v, f"{path}.{k}" if path else k) for k, v in value.items()}
    if isinstance(value, list):
        return [_markers_as_unknown(v, f"{path}[{i}]") for i, v in enumerate(value)]
    return value


def render_recorded_releases(
    resources: Iterable[RecordedResource], project_dir: Path = PROJECT_DIR
) -> list[ReleaseManifests]:
    """Every release among ``resources`` rendered as ``helm install`` would, in display form:
    through its ``postrender`` executable when it has one (:mod:`preview.postrender`; a relative
    path from ``project_dir``)."""
    out: list[tuple[RecordedResource, ReleaseRender]] = []
    for resource in resources:
        if resource.type != HELM_RELEASE_TYPE:
            continue
        inputs = _markers_as_unknown(for_display(resource.inputs))
        repo = inputs.get("repositoryOpts")
        name = inputs.get("name")
        render = render_release(
            chart=inputs.get("chart"),
            version=inputs.get("version"),
            repo=repo.get("repo") if isinstance(repo, dict) else None,
            release_name=name if name is not None else resource.name,
            namespace=inputs.get("namespace") or "default",
            values=inputs.get("values") or {},
            resolver=default_resolver(),
            skip_crds=inputs.get("skipCrds"),
            secrets=(),  # display form: every secret already reads [secret]
        )
        command = inputs.get("postrender")
        if isinstance(command, str) and command:
            render = post_render(render, command, project_dir)
        out.append((resource, render))
    scoped = crd_cluster_scoped(render for _, render in out)
    return [
        ReleaseManifests(
            resource,
            render,
            tuple(with_release_namespace(o.manifest, render.namespace, scoped) for o in render.objects),
        )
        for resource, render in out
    ]


def locked_crd_catalog() -> CrdCatalog:
    """A catalog of the CRDs the pinned charts ship (resolving them on first use); the pack's
    own (:func:`gpu_batch_policy.facts.schema.pinned.pinned_catalog`) for the references of
    ``charts.lock.yaml`` as the program reads them."""
    return pinned_catalog(locked_references())


def _name(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata")
    return str(meta.get("name", "?")) if isinstance(meta, dict) else "?"


def crd_catalog_for(
    releases: Sequence[ReleaseManifests], declared: Sequence[dict[str, Any]] = ()
) -> CrdCatalog:
    """The CRDs the program declares and its releases install, then the pinned charts' for every
    other group: a stack pinning another chart version is validated against that version's
    schemas (the pack's :func:`gpu_batch_policy.facts.schema.pinned.catalog_with`, as the pack's
    custom-resource-schema rule builds it)."""
    own: list[tuple[Path, dict[str, Any]]] = [
        (Path(f"resource {_name(obj)}"), obj)
        for obj in declared
        if obj.get("kind") == "CustomResourceDefinition"
    ]
    for release in releases:
        for rendered, obj in zip(release.render.objects, release.objects, strict=True):
            if obj.get("kind") == "CustomResourceDefinition":
                reference = release.render.reference
                folder = reference.folder if reference else "chart"
                own.append((Path(folder) / rendered.source, obj))
    return catalog_with(own, locked_references())
