"""A chart's CRDs as Pulumi resources of their own, read from the pinned chart at run time.

Why not leave them to Helm: Helm creates a chart's ``crds/`` once, on install, and never again
(helm/helm v3.20.2 ``pkg/action/install.go`` ``installCRDs``: ``Create``, "already exists" is
skipped; ``pkg/action/upgrade.go`` ``performUpgrade`` renders with ``includeCrds`` false), so a
version bump leaves the old schemas in place and the API server prunes every new field.  CRDs
rendered from templates are ordinary release objects instead, which ``helm uninstall`` (and so a
replaced or removed Release) deletes together with every custom resource of their kinds
(``pkg/action/uninstall.go`` ``deleteRelease``).  As Pulumi resources they are:

- **upgraded with the chart**: their inputs are the chart's own documents at the version the
  stack pins, so a bump is an update of each CRD, applied server-side (the cluster provider sets
  ``enableServerSideApply``, pulumi-kubernetes' default since v4; ``provider/pkg/provider/
  provider.go`` ``Configure``): no ``last-applied-configuration`` annotation, which KubeRay's CRDs
  outgrow (ray-project/kuberay ``helm-chart/kuberay-operator/README.md`` @ v1.7.0, "CRDs too long");
- **re-created by upsert**: a retained CRD is still in the cluster when the stack declares it
  again, so it goes through a provider that creates with a server-side apply
  (:func:`components.k8s_provider.cluster_provider` (``retained_objects``));
- **kept when the release goes**: ``retainOnDelete``, so neither a replaced or uninstalled
  release nor ``pulumi destroy`` deletes a ClusterQueue, LocalQueue, Workload or RayJob; and
  ``helm.sh/resource-policy: keep``, which ``helm upgrade`` honours on the *live* object when a
  resource leaves the release manifest (``pkg/kube/client.go`` ``update``), so moving an
  existing release's CRDs out of Helm's hands does not delete them.

The documents are never copied into the project: they are what the Helm engine renders from the
chart resolved into the chart cache (the policy pack's :mod:`gpu_batch_policy.facts.charts`, the same
code path the preview and the pack use).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import pulumi

POLICIES_DIR: Final = Path(__file__).resolve().parents[1] / "policies"
if str(POLICIES_DIR) not in sys.path:  # the pack's chart code, as stacks/quantity.py imports it
    sys.path.insert(0, str(POLICIES_DIR))

from gpu_batch_policy.facts.charts import default_resolver, reference_from_release  # noqa: E402
from gpu_batch_policy.facts.charts.render import helm_values, in_crds_dir, render_chart  # noqa: E402

from components.k8s_object import KubeObject  # noqa: E402
from components.operator_release import ChartRef  # noqa: E402

CRD_API_VERSION: Final = "apiextensions.k8s.io/v1"
CRD_KIND: Final = "CustomResourceDefinition"
# helm/helm v3.20.2 pkg/kube/resource_policy.go: ResourcePolicyAnno, KeepPolicy.
HELM_RESOURCE_POLICY: Final = "helm.sh/resource-policy"
HELM_KEEP: Final = "keep"
MANAGED_BY: Final = "app.kubernetes.io/managed-by"


class ChartCrdsError(pulumi.RunError):
    """The chart could not be resolved or rendered, or ships no CRD where one is expected.  A
    ``pulumi.RunError``, as :class:`stacks.errors.ConfigError`: the language host prints it as its
    one line, not as a traceback."""


def chart_crds(
    chart: ChartRef,
    *,
    values: Mapping[str, Any],
    release_name: str,
    namespace: str,
    from_crds_dir: bool,
) -> tuple[dict[str, Any], ...]:
    """The CRDs ``helm install`` of ``chart`` with ``values`` would create, in chart order.

    ``from_crds_dir``: the chart's ``crds/`` (KubeRay), else the CRDs its templates render (Kueue,
    whose conversion webhook names the release's Service and namespace, so the release's own
    values, name and namespace are rendered).  Raises :class:`ChartCrdsError` (one line).
    """
    try:
        reference = reference_from_release(chart.chart, chart.version, chart.repository)
        chart_dir = default_resolver().resolve(reference)
        rendered = render_chart(
            chart_dir, helm_values(dict(values)), release_name=release_name, namespace=namespace
        )
    except (ValueError, RuntimeError, OSError) as error:
        raise ChartCrdsError(f"chart {chart.chart} {chart.version}: CRDs: {error}") from None
    crds = tuple(
        o.manifest
        for o in rendered.objects
        if o.manifest.get("kind") == CRD_KIND and in_crds_dir(o.source) == from_crds_dir
    )
    if not crds:
        where = "crds/" if from_crds_dir else "templates"
        raise ChartCrdsError(
            f"chart {chart.chart} {chart.version}: no CustomResourceDefinition in its {where}"
        )
    return crds


def crd_resources(
    prefix: str,
    crds: Sequence[Mapping[str, Any]],
    *,
    parent: pulumi.Resource,
    provider: pulumi.ProviderResource | None = None,
) -> list[KubeObject]:
    """One ``kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition`` per document, named
    ``<prefix>-<crd name>``, retained on delete and marked for Helm to keep (module docstring).

    Each goes through :class:`~components.k8s_object.KubeObject`, the project's one path for an
    object given as a document, so it reaches the provider as the chart wrote it, except that
    ``app.kubernetes.io/managed-by`` says who manages it now and ``status`` (the API server's)
    is not sent.  ``provider``: the stack's retained-objects provider, which creates by upsert
    (:func:`components.k8s_provider.cluster_provider` (``retained_objects``)), so re-enabling a component whose
    CRDs stayed in the cluster succeeds; ``None`` inherits the parent's."""
    out: list[KubeObject] = []
    for crd in crds:
        metadata = dict(crd.get("metadata") or {})
        name = str(metadata.get("name", ""))
        metadata["annotations"] = {**(metadata.get("annotations") or {}), HELM_RESOURCE_POLICY: HELM_KEEP}
        if MANAGED_BY in (metadata.get("labels") or {}):
            metadata["labels"] = {**metadata["labels"], MANAGED_BY: "pulumi"}
        fields = {
            k: v for k, v in crd.items() if k not in ("apiVersion", "kind", "metadata", "spec", "status")
        }
        out.append(
            KubeObject(
                f"{prefix}-{name}",
                api_version=CRD_API_VERSION,
                kind=CRD_KIND,
                metadata=metadata,
                spec=crd.get("spec") if isinstance(crd.get("spec"), Mapping) else None,
                fields=fields,
                opts=pulumi.ResourceOptions(parent=parent, retain_on_delete=True, provider=provider),
            )
        )
    return out
