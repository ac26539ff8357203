"""``build/<stack>/manifests.yaml``: everything that would land in the cluster, ready for ``kubectl diff``.

First the program's own objects, rendered from the recorded registrations, so exactly what the
program sends: any resource whose type token is ``kubernetes:<group>/<version>:<Kind>`` --
Namespaces, RBAC, and every custom resource.  Then, grouped under one comment line per release,
what each Helm release installs, rendered from its pinned chart with its values by the real Helm
engine (``preview.charts``): the chart's CRDs, then its templates, namespaced objects placed in
the release namespace as Helm places them.  Providers are not objects and are left out.  Values not known
before deploy read ``(unknown)`` and secrets ``[secret]`` (``preview.records.for_display``), so
the file never holds a secret and can be attached to a pull request.

:func:`validate_manifests` checks every object strictly: custom resources against the upstream CRD
schemas and their CEL rules (``preview.crd_validation``), everything else against the Kubernetes
OpenAPI schema of the cluster's minor version (``gpu_batch_policy.facts.schema.core``).  A field the schema
does not declare is an error, because the API server would prune it silently (a v1beta1
``cohort`` on a v1beta2 ClusterQueue) or reject it; an object neither knows is reported as not
validated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from gpu_batch_policy.facts.schema.core import CoreValidator, KubernetesMinor, kubernetes_minor
from gpu_batch_policy.facts.schema.patches import is_patch
from gpu_batch_policy.facts.schema.pinned import pinned_but_unavailable

from preview import validation_cache
from preview.charts import ReleaseManifests
from preview.crd_validation import CrdCatalog, Outcome, ValidationResult, get_catalog
from preview.dump_cache import cached_dump
from preview.records import RecordedResource, for_display, shown_inputs

_GKE_CLUSTER = "gcp:container/cluster:Cluster"

_NOT_OBJECTS = ("kubernetes:helm.sh/",)
# Top-level keys first, in the order kubectl prints them.
_LEADING = ("apiVersion", "kind", "metadata")


def is_kubernetes_object(resource: RecordedResource) -> bool:
    """A registration that is itself a Kubernetes object (not a provider or a Helm release)."""
    return (
        resource.custom
        and resource.type.startswith("kubernetes:")
        and not resource.type.startswith(_NOT_OBJECTS)
        and "apiVersion" in resource.inputs
        and "kind" in resource.inputs
    )


def render_manifests(resources: Iterable[RecordedResource]) -> list[dict[str, Any]]:
    """The Kubernetes objects among ``resources``, in display form, in a stable order.

    Registration order depends on how the program's outputs resolve, so objects are sorted:
    Namespaces first (``kubectl apply -f`` needs them before what lives in them), then by
    apiVersion, kind, namespace and name -- the file diffs cleanly from one run to the next.
    """
    objects = []
    for resource in resources:
        if not is_kubernetes_object(resource):
            continue
        shown = shown_inputs(resource)
        ordered = {key: shown[key] for key in _LEADING if key in shown}
        ordered.update({key: value for key, value in shown.items() if key not in _LEADING})
        objects.append(ordered)
    return sorted(objects, key=_order)


def patch_identities(resources: Iterable[RecordedResource]) -> frozenset[tuple[str, str, str, str]]:
    """(apiVersion, kind, namespace, name) of each pulumi-kubernetes ``<Kind>Patch`` registration.

    ``manifests.yaml`` shows a patch as the object it patches (its inputs carry the patched kind);
    :func:`validate_manifests` judges these as partial objects, as the pack does
    (``gpu_batch_policy.facts.schema.patches``).  A program that declares an object and also patches it
    has both judged as a patch: the identity is all ``manifests.yaml`` keeps."""
    return frozenset(
        object_identity(for_display(resource.inputs))
        for resource in resources
        if is_kubernetes_object(resource)
        and is_patch(resource.type.rsplit(":", 1)[-1], resource.inputs.get("kind"))
    )


def object_identity(obj: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """(apiVersion, kind, namespace, name): what server-side apply matches a patch to its target."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    return (
        str(obj.get("apiVersion", "")),
        str(obj.get("kind", "")),
        str(meta.get("namespace") or ""),
        str(meta.get("name", "")),
    )


def _order(obj: Mapping[str, Any]) -> tuple[int, str, str, str, str]:
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    return (
        0 if obj.get("kind") == "Namespace" else 1,
        str(obj.get("apiVersion", "")),
        str(obj.get("kind", "")),
        str(meta.get("namespace", "")),
        str(meta.get("name", "")),
    )


def stack_kubernetes_minor(resources: Iterable[RecordedResource]) -> KubernetesMinor:
    """The Kubernetes minor of the stack's GKE cluster: its ``minMasterVersion``, else GKE's newest."""
    for resource in resources:
        if resource.type == _GKE_CLUSTER:
            version = for_display(resource.inputs.get("minMasterVersion"))
            return kubernetes_minor(version if isinstance(version, str) else None)
    return kubernetes_minor(None)


def validation_results(
    objects: Sequence[Mapping[str, Any]],
    schema_dir: Path | None = None,
    catalog: CrdCatalog | None = None,
    kubernetes: KubernetesMinor | None = None,
    patches: frozenset[tuple[str, str, str, str]] = frozenset(),
) -> list[ValidationResult]:
    """Each object's verdict: by its CRD, or, for built-in API groups, by the Kubernetes schema
    (as a partial object when ``patches``, from :func:`patch_identities`, holds its identity)."""
    chosen = catalog if catalog is not None else get_catalog(schema_dir)
    core = CoreValidator(kubernetes or kubernetes_minor(None))
    results = []
    for obj in objects:
        patch = bool(patches) and isinstance(obj, Mapping) and object_identity(obj) in patches
        result = chosen.validate(obj, patch=patch)
        if result.outcome is Outcome.NOT_CUSTOM_RESOURCE and isinstance(obj, Mapping):
            result = validation_cache.validate(core, obj, patch=patch)
        results.append(result)
    return results


def validate_manifests(
    objects: Sequence[Mapping[str, Any]],
    schema_dir: Path | None = None,
    catalog: CrdCatalog | None = None,
    kubernetes: KubernetesMinor | None = None,
    patches: frozenset[tuple[str, str, str, str]] = frozenset(),
) -> list[str]:
    """One line per problem: schema violations, and objects with no schema to check them by.

    Custom resources are judged by their CRD; built-in kinds (``v1``, ``apps/v1``,
    ``rbac.authorization.k8s.io/v1``, ...) by the Kubernetes OpenAPI schema of ``kubernetes``
    (default: the newest minor GKE serves).  A kind neither knows is an error: it could not be
    checked.
    """
    errors: list[str] = []
    for result in validation_results(objects, schema_dir, catalog, kubernetes, patches):
        if result.outcome is Outcome.INVALID:
            errors.extend(result.messages())
        elif result.outcome is Outcome.NO_SCHEMA and pinned_but_unavailable(result.api_version, result.kind):
            continue  # listed by unvalidated_pinned: the pin's file is missing here, not the stack's fault
        elif result.outcome in (Outcome.NO_SCHEMA, Outcome.TOO_DEEP):
            errors.append(f"{result.ref}: not validated: {result.note}")
    return errors


def unvalidated_pinned(objects: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per object left unvalidated because its CRD is pinned (charts.lock.yaml
    ``manifests:``) in a file this machine cannot have: no cache, no ../shared mirror, no network.
    Shown by the preview, never counted as valid (the pack calls them "cannot check yet")."""
    lines = []
    for obj in objects:
        api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
        if pinned_but_unavailable(api_version, kind):
            meta = obj.get("metadata") or {}
            where = "/".join(str(p) for p in (meta.get("namespace"), meta.get("name")) if p)
            lines.append(
                f"{kind}/{where}: not validated: its pinned CRD ({api_version}) is not available here"
            )
    return lines


def write_manifests(
    path: Path, objects: Sequence[Mapping[str, Any]], releases: Sequence[ReleaseManifests] = ()
) -> None:
    """Multi-document YAML, one object per document: the program's objects, then each release's
    under a ``# --- Helm release <ns>/<name> (<chart> <version>) ---`` comment, in install order."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(manifests_text(objects, releases))


def manifests_text(objects: Sequence[Mapping[str, Any]], releases: Sequence[ReleaseManifests] = ()) -> str:
    """What :func:`write_manifests` writes (one cluster's section of a multi-cluster file)."""
    parts = [_dump_cached(objects)] if objects else []
    for release in sorted(releases, key=lambda r: r.title):
        header = f"# --- {release.title} ---\n"
        if release.render.status != "rendered":
            header += f"# not rendered ({release.render.status}): {release.render.message}\n"
        body = _dump_cached(release.objects) if release.objects else ""
        parts.append(header + body)
    return "---\n".join(parts)


def rendered_objects(releases: Sequence[ReleaseManifests]) -> list[dict[str, Any]]:
    """Every object the releases install, in :func:`write_manifests` order."""
    return [obj for release in sorted(releases, key=lambda r: r.title) for obj in release.objects]


def _dump_cached(objects: Sequence[Mapping[str, Any]]) -> str:
    """:func:`_dump`, read back from the render cache when these objects were dumped before
    (:mod:`preview.dump_cache`): PyYAML's representer is pure Python, and a one-team stack's
    declared CRDs and KubeRay's rendered ones are megabytes (~1 s each per preview otherwise)."""
    return cached_dump("manifests.yaml", list(objects), _dump)


def _dump(objects: Sequence[Mapping[str, Any]]) -> str:
    # libyaml's emitter when PyYAML has it: ~10x faster than the pure-Python one on big stacks.
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump_all([dict(o) for o in objects], Dumper=dumper, sort_keys=False, default_flow_style=False)
