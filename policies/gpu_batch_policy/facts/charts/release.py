"""What one Helm release installs, for the pack: resolve its chart, render it, classify the outcome.

Every outcome is a value, never an exception, because a rule must be able to say exactly why it
cannot judge a release (DESIGN.md: the pack never crashes on any input):

- ``rendered`` -- the objects Helm would install;
- ``refused`` -- the chart itself rejects the values (``fail``/``required``/values.schema.json):
  a ``helm install`` would fail the same way, so this is a finding;
- ``unknown`` -- the values hold something unknown until apply and the render failed, or the
  chart/version/namespace is unknown: cannot check yet;
- ``unavailable`` -- no source could provide the chart (:class:`ChartUnavailableError`);
- ``unsupported`` -- the release does not pin one chart reproducibly (local path, alias, no
  version).

``skipCrds`` (pulumi-kubernetes ``helm.v3.Release`` input, Helm ``--skip-crds``) drops the chart's
``crds/`` objects from what the release installs (:func:`.render.in_crds_dir`); templated CRDs stay,
as in Helm (pulumi-kubernetes v4.32.0 ``provider/pkg/provider/helm_release.go`` ``helmCreate``:
``client.SkipCRDs = newRelease.SkipCrds``; helm/helm v3.20.2 ``pkg/action/install.go`` ``Run``
installs ``chrt.CRDObjects()`` only when ``!i.SkipCRDs``).

Values reach Helm as the stack sets them.  A value unknown during preview is rendered as the
placeholder ``"(unknown)"``; objects rendered from it are kept (most of a chart does not depend
on every value) and :attr:`ReleaseRender.placeholders` says how many values were stand-ins.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ...primitives.values import Unknown
from .reference import ChartReference, UnsupportedChartError, reference_from_release
from .render import RenderedObject, RenderError, in_crds_dir, render_chart
from .resolver import ChartResolver, ChartUnavailableError

UNKNOWN_PLACEHOLDER = "(unknown)"

Status = Literal["rendered", "refused", "unknown", "unavailable", "unsupported"]


@dataclass(frozen=True)
class ReleaseRender:
    """The outcome of rendering one release; ``message`` is one line for every non-rendered status."""

    status: Status
    reference: ChartReference | None = None
    release_name: str = ""
    namespace: str = ""
    objects: tuple[RenderedObject, ...] = ()
    message: str = ""
    error_kind: str = ""
    placeholders: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def render_release(
    *,
    chart: Any,
    version: Any,
    repo: Any,
    release_name: Any,
    namespace: Any,
    values: Any,
    resolver: ChartResolver,
    skip_crds: Any = False,
) -> ReleaseRender:
    """Resolve and render one release from its (plain, possibly Unknown) inputs; ``skip_crds``
    true leaves out the chart's ``crds/`` objects (an unknown one keeps them: Helm's default)."""
    for what, value in (("chart", chart), ("version", version), ("repositoryOpts.repo", repo)):
        if isinstance(value, Unknown):
            return ReleaseRender("unknown", message=f"the release's {what} is unknown until apply")
    try:
        reference = reference_from_release(chart, version, repo)
    except UnsupportedChartError as error:
        return ReleaseRender("unsupported", message=str(error))
    if isinstance(release_name, Unknown) or isinstance(namespace, Unknown):
        return ReleaseRender(
            "unknown", reference, message="the release name or namespace is unknown until apply"
        )
    if isinstance(values, Unknown):
        return ReleaseRender("unknown", reference, message="the release values are unknown until apply")
    name = release_name if isinstance(release_name, str) and release_name else "release"
    ns = namespace if isinstance(namespace, str) and namespace else "default"
    try:
        chart_dir = resolver.resolve(reference)
    except ChartUnavailableError as error:
        return ReleaseRender("unavailable", reference, name, ns, message=str(error))
    counter = [0]
    helm_input = _with_placeholders(values if isinstance(values, dict) else {}, counter)
    try:
        rendered = render_chart(chart_dir, helm_input, release_name=name, namespace=ns)
    except RenderError as error:
        status: Status = "unknown" if counter[0] else "refused"
        return ReleaseRender(
            status,
            reference,
            name,
            ns,
            message=error.message,
            error_kind=error.kind,
            placeholders=counter[0],
        )
    objects = rendered.objects
    if skip_crds is True:
        objects = tuple(o for o in objects if not in_crds_dir(o.source))
    return ReleaseRender("rendered", reference, name, ns, objects, placeholders=counter[0])


def _with_placeholders(value: Any, counter: list[int]) -> Any:
    if isinstance(value, Unknown):
        counter[0] += 1
        return UNKNOWN_PLACEHOLDER
    if isinstance(value, dict):
        return {str(k): _with_placeholders(v, counter) for k, v in value.items()}
    if isinstance(value, list):
        return [_with_placeholders(v, counter) for v in value]
    return value
