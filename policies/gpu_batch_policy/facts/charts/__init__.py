"""Upstream Helm charts as real inputs: where a release's chart comes from, and what it renders.

The pack (and the offline preview, which imports this package) never trusts a Release's values
alone: it resolves the exact chart version the release names into a local cache and renders it
with the real Helm engine (``helm-python-sdk``, Helm's own Go SDK), so chart-side ``fail`` /
``required`` checks, ``values.schema.json`` and every object the chart creates are judged as
``helm install`` would produce them.

- :mod:`.reference` -- which chart a Release names (OCI reference or repository + name);
- :mod:`.resolver` -- cache, offline mirror, upstream pull; one clear error when all fail;
- :mod:`.render` -- the Helm engine: rendered objects (templates and ``crds/``) or the chart's error.
"""

from .reference import ChartReference, UnsupportedChartError, reference_from_release
from .render import RenderedChart, RenderError, render_chart
from .resolver import ChartResolver, ChartUnavailableError, default_resolver

__all__ = [
    "ChartReference",
    "ChartResolver",
    "ChartUnavailableError",
    "RenderError",
    "RenderedChart",
    "UnsupportedChartError",
    "default_resolver",
    "reference_from_release",
    "render_chart",
]
