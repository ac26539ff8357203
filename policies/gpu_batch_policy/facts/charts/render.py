"""Render a resolved chart with the real Helm engine, as ``helm install`` would, offline.

``helm_python.Chart.render`` runs Helm's own install rendering (values coalescing, the chart's
``values.schema.json``, ``fail``/``required``, subcharts and their conditions) with no cluster:
``lookup`` returns nothing and ``Capabilities`` are Helm's defaults.  What an install creates is
the chart's ``crds/`` folders (chart and subcharts; Helm installs them first unless
``--skip-crds``) plus every rendered template, minus ``NOTES.txt`` and test hooks
(``helm.sh/hook: test`` objects run only under ``helm test``).  Both are returned here as plain
objects, in a stable order (CRDs, then templates by path, then document order), each with the
file it came from.

Parsing what Helm prints is the slow part (KubeRay's ``crds/`` are 4 MB of YAML: ~3 s), and the
same chart is rendered with the same values on every preview and by every pack run, so each
outcome is also kept on disk, keyed by everything that decides it (:mod:`.render_cache`: chart
content, values, release name, namespace, render options, engine), when the caller knows the
inputs hold no secret.

A chart that refuses its values fails the whole render: a ``fail`` call (SkyPilot's "requires at
least 4 CPU cores and 8 GiB memory"), a ``required`` value, or a ``values.schema.json`` violation.
That is :class:`RenderError`, with Helm's message folded onto one line.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import helm_python
import yaml

from ...primitives.bounded import BoundedCache
from ...primitives.yaml_loader import SAFE_LOADER
from . import render_cache

_HOOK_ANNOTATION = "helm.sh/hook"

ErrorKind = Literal["values-schema", "chart-refused", "template", "manifest"]
# What every render asks of the engine besides values, name and namespace (part of the cache key).
RENDER_OPTIONS: dict[str, Any] = {"is_install": True}


@dataclass(frozen=True)
class RenderedObject:
    """One object an install would create, and the chart file that produced it."""

    source: str
    manifest: dict[str, Any]


@dataclass(frozen=True)
class RenderedChart:
    """Everything one release installs, in install order."""

    objects: tuple[RenderedObject, ...]


class RenderError(ValueError):
    """The chart refused the values, or produced something that is not Kubernetes YAML.

    ``kind``: ``values-schema`` (values.schema.json), ``chart-refused`` (the chart's own ``fail`` /
    ``required``), ``template`` (any other template error), ``manifest`` (output that does not
    parse as objects).  ``str()`` is one line.
    """

    def __init__(self, kind: ErrorKind, message: str) -> None:
        self.kind = kind
        self.message = " ".join(message.split())
        super().__init__(self.message)


# Rendered charts kept in memory by their disk key (:func:`.render_cache.entry_key`): a stack
# renders a handful of releases; a program that varies values per call must not grow the process.
_RENDERS: BoundedCache[str, RenderedChart | RenderError] = BoundedCache(16)


def render_chart(
    chart_dir: Path,
    values: Mapping[str, Any],
    *,
    release_name: str,
    namespace: str,
    secrets: Collection[str] | None = None,
) -> RenderedChart:
    """What ``helm install <release_name> <chart_dir> -n <namespace> --values <values>`` creates.

    ``values`` must be plain JSON values (see :func:`helm_values`).  Results are memoised by
    their cache key: the preview and several rules ask for the same render.  ``secrets``: the
    secret texts the caller knows of (``None``: unknown); the outcome is written to the disk
    cache only when that set is known and none of them is among the inputs
    (:func:`.render_cache.may_store`).  Raises :class:`RenderError`.
    """
    plain_values = helm_values(values)
    key = render_cache.entry_key(
        chart_dir, plain_values, release_name=release_name, namespace=namespace, options=RENDER_OPTIONS
    )
    cached = _RENDERS.get(key)
    if cached is None:
        cached = _from_document(render_cache.read(key))
        if cached is None:
            # A fresh chart object per render: Helm's dependency processing removes disabled
            # subcharts from the loaded chart in place (chartutil ProcessDependencies), so a chart
            # object reused after a render with ``ingress-nginx.enabled: false`` would silently
            # render without ingress-nginx ever after.
            with helm_python.Chart.load(chart_dir) as chart:
                cached = _render(chart, plain_values, release_name, namespace)
            if render_cache.may_store(secrets, plain_values, release_name, namespace):
                render_cache.write(key, _document(cached))
        _RENDERS.put(key, cached)
    if isinstance(cached, RenderError):
        raise cached
    return cached


def _render(
    chart: helm_python.Chart, values: dict[str, Any], release_name: str, namespace: str
) -> RenderedChart | RenderError:
    try:
        templates = chart.render(values, name=release_name, namespace=namespace, **RENDER_OPTIONS)
    except helm_python.HelmValuesError as error:
        return RenderError("values-schema", str(error))
    except helm_python.HelmRenderError as error:
        text = str(error)
        kind: ErrorKind = "chart-refused" if "execution error" in text else "template"
        return RenderError(kind, text)
    except helm_python.HelmError as error:
        return RenderError("template", str(error))
    objects: list[RenderedObject] = []
    try:
        for crd in sorted(chart.crds, key=lambda c: c.get("filename", "")):
            objects.extend(_documents(crd.get("filename", "crds"), crd.get("data", "")))
        for path in sorted(templates):
            if path.endswith("NOTES.txt"):
                continue
            objects.extend(o for o in _documents(path, templates[path]) if not _is_test_hook(o.manifest))
    except yaml.YAMLError as error:
        return RenderError("manifest", f"the chart rendered YAML that does not parse: {error}")
    return RenderedChart(tuple(objects))


def _from_document(data: Any) -> RenderedChart | RenderError | None:
    """A stored outcome, or None when it does not have the shape :func:`_document` writes."""
    try:
        if "error" in data:
            return RenderError(data["error"], data["message"])
        return RenderedChart(tuple(RenderedObject(str(s), dict(m)) for s, m in data["objects"]))
    except (ValueError, KeyError, TypeError):
        return None


def _document(outcome: RenderedChart | RenderError) -> dict[str, Any]:
    if isinstance(outcome, RenderError):
        return {"error": outcome.kind, "message": outcome.message}
    return {"objects": [[o.source, o.manifest] for o in outcome.objects]}


def _documents(source: str, text: str) -> list[RenderedObject]:
    return [
        RenderedObject(source, doc)
        for doc in yaml.load_all(text, Loader=SAFE_LOADER)
        if isinstance(doc, dict) and doc.get("kind")
    ]


def in_crds_dir(source: str) -> bool:
    """Whether a rendered object came from a chart's ``crds/`` folder (of the chart or a subchart),
    not from its templates.

    Helm names a ``crds/`` file ``<chart path>/crds/<file>`` (helm/helm v3.20.2
    ``pkg/chart/chart.go`` ``CRDObjects``: files whose name starts with ``crds/``, under
    ``ChartFullPath()``) and a template ``<chart path>/templates/<file>``.  The two differ in what
    Helm does with them: ``crds/`` is created once on install, skipped by ``--skip-crds``, and never
    upgraded (``pkg/action/install.go`` ``installCRDs``; ``pkg/action/upgrade.go`` renders with
    ``includeCrds`` false), while templates are ordinary release objects."""
    parts = source.split("/")
    return "crds" in parts[:-1] and "templates" not in parts


def helm_hooks(manifest: Mapping[str, Any]) -> frozenset[str]:
    """The hooks an object's ``helm.sh/hook`` annotation names (comma-separated), none when absent."""
    annotations = (manifest.get("metadata") or {}).get("annotations") or {}
    hooks = str(annotations.get(_HOOK_ANNOTATION, "")) if isinstance(annotations, Mapping) else ""
    return frozenset(h.strip() for h in hooks.split(",") if h.strip())


def _is_test_hook(manifest: Mapping[str, Any]) -> bool:
    return "test" in helm_hooks(manifest)


def helm_values(value: Any) -> Any:
    """Values as Helm should see them: integral floats back to ints.

    The Pulumi wire protocol carries every number as a double; Helm would otherwise print
    ``replicas: 1`` as ``1`` but ``port: 8080.0`` may reach a template's ``printf "%v"`` as
    ``8080`` or ``8.08e+03`` depending on size.  Integers are what the user wrote.
    """
    if isinstance(value, Mapping):
        return {str(k): helm_values(v) for k, v in value.items()}
    if isinstance(value, list):
        return [helm_values(v) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value
