"""Which CRDs custom resources are validated against: the stack's own, then the pinned charts'.

Order (the first CRD of a (group, kind) wins, :meth:`.crd.CrdCatalog.add_documents`):

1. the CRDs the stack itself declares (``apiextensions.k8s.io/v1`` CustomResourceDefinition
   resources) or that its Helm releases render -- a stack pinning another chart version is judged
   by that version's schemas;
2. the CRDs every chart of ``charts.lock.yaml`` (the repository's one pin list) installs at its
   default values, rendered by the real Helm engine (:mod:`..charts`);
3. the CRDs among its pinned plain manifests (``manifests:``, :mod:`..charts.manifests`): GKE's
   ``networking.gke.io`` Network and GKENetworkParamSet, which GKE itself installs on
   multi-networking clusters and no chart ships; and Google Cloud Managed Service for
   Prometheus' ``monitoring.googleapis.com`` kinds (PodMonitoring, ClusterPodMonitoring, Rules,
   ...), which GKE installs with managed collection on (``gmp-crds``: prometheus-engine
   ``charts/operator/crds/`` at a pinned commit).

The pack and the offline preview both build their catalogs here.  A pinned chart that cannot be
resolved is not an error of the stack: its groups are then "cannot check" (see
:func:`pinned_problems`), never silently passed.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import yaml

from ..charts import ChartReference, ChartUnavailableError, RenderError, default_resolver, render_chart
from ..charts.manifests import (
    ManifestLockError,
    ManifestUnavailableError,
    load_documents,
    locked_manifests,
    resolve_manifest,
)
from ..charts.resolver import REPO_ROOT
from .crd import CrdCatalog

LOCK_FILE: Final = REPO_ROOT / "charts.lock.yaml"
"""The repository's pin list (read by ``components/chart_lock.py`` for the program, here for the
pack); beside ``policies/``."""

_STACK_CATALOGS: dict[str, CrdCatalog] = {}
_STACK_CATALOG_LIMIT: Final = 8

CrdDocuments = tuple[tuple[Path, dict[str, Any]], ...]


def lock_references(path: Path = LOCK_FILE) -> tuple[ChartReference, ...]:
    """The charts of ``charts.lock.yaml``; entries of the wrong shape are skipped (the program's
    reader, ``components.chart_lock``, reports them), a missing file gives none."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return ()
    charts = data.get("charts") if isinstance(data, Mapping) else None
    found = []
    for entry in (charts or {}).values() if isinstance(charts, Mapping) else ():
        if not isinstance(entry, Mapping):
            continue
        name, version, source = (entry.get(k) for k in ("name", "version", "source"))
        if all(isinstance(v, str) and v.strip() for v in (name, version, source)):
            found.append(ChartReference(str(name).strip(), str(version).strip(), str(source).strip()))
    return tuple(found)


@functools.cache
def _pinned(references: tuple[ChartReference, ...]) -> tuple[CrdDocuments, tuple[str, ...]]:
    """(the CRDs the charts install at default values, one line per chart that failed)."""
    found: list[tuple[Path, dict[str, Any]]] = []
    problems: list[str] = []
    resolver = default_resolver()
    for reference in references:
        try:
            chart_dir = resolver.resolve(reference)
            rendered = render_chart(chart_dir, {}, release_name=reference.name, namespace=reference.name)
        except (ChartUnavailableError, RenderError, OSError) as error:
            problems.append(f"chart {reference}: {error}")
            continue
        for obj in rendered.objects:
            if obj.manifest.get("kind") == "CustomResourceDefinition":
                found.append((Path(reference.folder) / obj.source, obj.manifest))
    crds, manifest_problems = _manifest_crds()
    return tuple(found) + crds, tuple(problems) + manifest_problems


@functools.cache
def _manifest_crds() -> tuple[CrdDocuments, tuple[str, ...]]:
    """The CRDs among the pinned plain manifests; one line per file that cannot be had."""
    found: list[tuple[Path, dict[str, Any]]] = []
    problems: list[str] = []
    try:
        entries = locked_manifests(LOCK_FILE)
    except ManifestLockError as error:
        return (), (str(error),)
    for entry in entries.values():
        for path in entry.files:
            try:
                documents = load_documents(entry.key, path)
            except (ManifestUnavailableError, ManifestLockError, OSError, yaml.YAMLError) as error:
                problems.append(str(error))
                continue
            found.extend(
                (Path(entry.folder) / path, doc)
                for doc in documents
                if doc.get("kind") == "CustomResourceDefinition"
            )
    return tuple(found), tuple(problems)


@functools.cache
def unavailable_crd_files() -> frozenset[str]:
    """Base names of the pinned plain-manifest files that could not be had here (no cache, no
    mirror, no network), e.g. ``gateway.networking.k8s.io_gateways.yaml``."""
    missing: set[str] = set()
    try:
        entries = locked_manifests(LOCK_FILE)
    except ManifestLockError:
        return frozenset()
    for entry in entries.values():
        for path in entry.files:
            try:
                resolve_manifest(entry.key, path)
            except (ManifestUnavailableError, ManifestLockError, OSError):
                missing.add(path.rsplit("/", 1)[-1])
    return frozenset(missing)


def pinned_but_unavailable(api_version: str, kind: str) -> bool:
    """Whether a kind's CRD is pinned (``manifests:`` of charts.lock.yaml) in a file that could not
    be had here.  controller-gen names a CRD file ``<group>_<plural>.yaml``; the plural is the
    kind lower-cased with the regular English plural (consonant + ``y`` -> ``ies``, ``...s`` ->
    ``...ses``, else ``...s``: Gateway -> gateways, HealthCheckPolicy -> healthcheckpolicies), which is what every pinned CRD file uses.  Such an object is not
    validated, and the reason is the pin's, not the stack's (as for an unresolvable chart)."""
    group = api_version.split("/", maxsplit=1)[0] if "/" in api_version else ""
    lower = kind.lower()
    if lower.endswith("y") and lower[-2:-1] not in ("a", "e", "i", "o", "u"):
        plural = lower[:-1] + "ies"
    elif lower.endswith("s"):
        plural = lower + "es"
    else:
        plural = lower + "s"
    return f"{group}_{plural}.yaml" in unavailable_crd_files()


def pinned_crd_documents(references: Sequence[ChartReference] | None = None) -> CrdDocuments:
    """The CRDs every pinned chart installs, each with ``<chart folder>/<file>`` as its source."""
    return _pinned(tuple(lock_references() if references is None else references))[0]


def pinned_problems(references: Sequence[ChartReference] | None = None) -> tuple[str, ...]:
    """Why some pinned charts' CRDs are missing (unresolvable or unrenderable charts)."""
    return _pinned(tuple(lock_references() if references is None else references))[1]


@functools.cache
def _pinned_catalog(references: tuple[ChartReference, ...]) -> CrdCatalog:
    catalog = CrdCatalog(None, label="the pinned charts' CRDs (charts.lock.yaml)")
    for source, document in _pinned(references)[0]:
        catalog.add_documents((document,), source)
    return catalog


def pinned_catalog(references: Sequence[ChartReference] | None = None) -> CrdCatalog:
    """One cached catalog of the pinned charts' CRDs (resolving and rendering them on first use)."""
    return _pinned_catalog(tuple(lock_references() if references is None else references))


def catalog_with(
    stack_crds: Iterable[tuple[Path, Mapping[str, Any]]],
    references: Sequence[ChartReference] | None = None,
) -> CrdCatalog:
    """The stack's own CRDs first, then the pinned charts'.

    With no CRD of its own a stack shares the pinned catalog (and its compiled validators); else
    the catalog is cached by the content of the stack's CRDs, so repeated analyzer calls on the
    same stack compile each schema node once.
    """
    own = [(source, doc) for source, doc in stack_crds if doc.get("kind") == "CustomResourceDefinition"]
    pinned = pinned_catalog(references)
    if not own:
        return pinned
    digest = hashlib.sha256()
    for source, doc in own:
        digest.update(str(source).encode())
        digest.update(json.dumps(doc, sort_keys=True, default=str).encode())
    refs = tuple(lock_references() if references is None else references)
    digest.update(repr(refs).encode())
    key = digest.hexdigest()
    catalog = _STACK_CATALOGS.get(key)
    if catalog is None:
        catalog = CrdCatalog(None, label="the CRDs of the stack and the pinned charts")
        for source, doc in own:
            catalog.add_documents((doc,), source)
        for source, document in _pinned(refs)[0]:
            catalog.add_documents((document,), source)
        if len(_STACK_CATALOGS) >= _STACK_CATALOG_LIMIT:
            _STACK_CATALOGS.clear()
        _STACK_CATALOGS[key] = catalog
    return catalog
