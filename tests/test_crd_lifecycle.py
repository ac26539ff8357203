"""CRD lifecycle (issue 21, item 4), shown in the recorded plan of the real program.

- KubeRay's ``crds/`` (which Helm installs once and never upgrades: helm/helm v3.20.2
  ``pkg/action/upgrade.go`` renders with ``includeCrds`` false) are Pulumi resources of their
  own, read from the pinned chart, and the release is installed with ``skipCrds`` and waits for
  them.
- Kueue's CRDs, which its chart renders from templates (kueue v0.19.2 ``charts/kueue/templates/
  crd/``, no values switch), are Pulumi resources retained on delete, and the release drops them
  with a post-renderer, so ``helm uninstall`` (what pulumi-kubernetes runs when a Release is
  deleted or replaced: v4.32.0 ``provider/pkg/provider/helm_release.go`` ``Delete``) deletes none
  of them: it deletes what the stored release manifest lists (``pkg/action/uninstall.go``
  ``deleteRelease``), and that manifest is the post-renderer's output (``pkg/action/action.go``
  ``renderResources``: ``b, err = pr.Run(b)``; ``install.go`` ``rel.Manifest = manifestDoc``).

The expected CRDs are never written here: they are what the Helm engine renders from the chart
the stack pins, so the tests follow the chart.
"""

from __future__ import annotations

import os
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpu_batch_policy.facts.charts import default_resolver, reference_from_release
from gpu_batch_policy.facts.charts.render import RenderedObject, in_crds_dir, render_chart

from components.chart_crds import HELM_KEEP, HELM_RESOURCE_POLICY, ChartCrdsError, chart_crds
from components.kuberay import KUBERAY_CHART, KUBERAY_REPOSITORY, KUBERAY_VERSION
from components.kueue import KUEUE_CHART, KUEUE_VERSION
from components.operator_release import DROP_CRDS_POSTRENDER, ChartRef
from preview.harness import RunResult
from preview.postrender import helm_stream
from preview.records import RecordedResource
from tests.stack_runner import ROOT, of_type, unedited_run

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

CRD = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
RELEASE = "kubernetes:helm.sh/v3:Release"
PROVIDER = "pulumi:providers:kubernetes"


@cache
def dev() -> RunResult:
    return unedited_run("dev")


def _release(result: RunResult, name: str) -> RecordedResource:
    (found,) = [r for r in of_type(result, RELEASE) if r.inputs.get("name") == name]
    return found


def _crds(result: RunResult, prefix: str) -> dict[str, RecordedResource]:
    return {r.inputs["metadata"]["name"]: r for r in of_type(result, CRD) if r.name.startswith(prefix)}


def _rendered(chart: ChartRef, release: RecordedResource) -> tuple[RenderedObject, ...]:
    """What ``helm install`` of the release's chart, values, name and namespace renders."""
    reference = reference_from_release(chart.chart, chart.version, chart.repository)
    return render_chart(
        default_resolver().resolve(reference),
        release.inputs.get("values") or {},
        release_name=release.inputs["name"],
        namespace=release.inputs["namespace"],
    ).objects


def _chart_crds(objects: tuple[RenderedObject, ...], *, from_crds_dir: bool) -> dict[str, dict[str, Any]]:
    return {
        o.manifest["metadata"]["name"]: o.manifest
        for o in objects
        if o.manifest.get("kind") == "CustomResourceDefinition" and in_crds_dir(o.source) == from_crds_dir
    }


def test_kuberay_crds_are_resources_of_their_own_from_the_charts_crds_dir() -> None:
    result = dev()
    release = _release(result, "kuberay-operator")
    expected = _chart_crds(
        _rendered(ChartRef(KUBERAY_CHART, KUBERAY_VERSION, KUBERAY_REPOSITORY), release), from_crds_dir=True
    )
    declared = _crds(result, "kuberay-operator-crd-")
    assert expected and declared.keys() == expected.keys()
    for name, resource in declared.items():
        # The chart's document as it is, so a chart bump changes these inputs: an update.
        assert resource.inputs["spec"] == expected[name]["spec"]
        assert resource.inputs["metadata"]["annotations"][HELM_RESOURCE_POLICY] == HELM_KEEP
        assert resource.retain_on_delete


def test_the_kuberay_release_skips_crds_and_waits_for_them() -> None:
    result = dev()
    release = _release(result, "kuberay-operator")
    assert release.inputs.get("skipCrds") is True
    assert {r.urn for r in _crds(result, "kuberay-operator-crd-").values()} <= set(release.dependencies)


def test_crds_are_applied_server_side() -> None:
    """pulumi-kubernetes v4.32.0 ``provider/pkg/provider/provider.go`` ``Configure``:
    ``enableServerSideApply`` decides; the CRDs go through the cluster's provider, which sets it."""
    result = dev()
    providers = {r.urn: r for r in of_type(result, PROVIDER)}
    for crd in of_type(result, CRD):
        provider = providers[crd.provider.rsplit("::", 1)[0]]
        assert provider.inputs.get("enableServerSideApply") in (True, "true")


def test_kueue_crds_are_retained_resources_rendered_with_the_releases_values() -> None:
    result = dev()
    release = _release(result, "kueue")
    expected = _chart_crds(_rendered(ChartRef(KUEUE_CHART, KUEUE_VERSION), release), from_crds_dir=False)
    declared = _crds(result, "kueue-crd-")
    assert expected and declared.keys() == expected.keys()
    for name, resource in declared.items():
        # The conversion webhook names the release's Service in the release's namespace.
        assert resource.inputs["spec"] == expected[name]["spec"]
        assert resource.retain_on_delete
    assert {r.urn for r in declared.values()} <= set(release.dependencies)
    assert release.inputs.get("postrender") == DROP_CRDS_POSTRENDER


def _post_render(text: str) -> str:
    """Run the post-renderer the way Helm does (``pkg/postrender/exec.go`` ``execRender.Run``:
    the manifest on stdin, the result from stdout), from the project root as pulumi-kubernetes does."""
    script = ROOT / DROP_CRDS_POSTRENDER
    assert os.access(script, os.X_OK), f"{DROP_CRDS_POSTRENDER} must be executable"
    done = subprocess.run([str(script)], input=text, capture_output=True, text=True, cwd=ROOT, check=True)
    return done.stdout


def _helm_uninstall_deletes(manifest: str) -> list[dict[str, Any]]:
    """What ``helm uninstall`` deletes from a stored release manifest: every document except those
    annotated ``helm.sh/resource-policy: keep`` (helm/helm v3.20.2 ``pkg/action/uninstall.go``
    ``deleteRelease``, ``pkg/action/resource_policy.go`` ``filterManifestsToKeep``)."""
    deleted = []
    for doc in yaml.safe_load_all(manifest):
        if not isinstance(doc, dict):
            continue
        policy = ((doc.get("metadata") or {}).get("annotations") or {}).get(HELM_RESOURCE_POLICY, "")
        if str(policy).strip().lower() != HELM_KEEP:
            deleted.append(doc)
    return deleted


def test_the_kueue_release_manifest_holds_no_crd_so_uninstall_deletes_none() -> None:
    release = _release(dev(), "kueue")
    objects = _rendered(ChartRef(KUEUE_CHART, KUEUE_VERSION), release)
    before = helm_stream(objects)
    assert any(d["kind"] == "CustomResourceDefinition" for d in _helm_uninstall_deletes(before))
    after = _post_render(before)
    kept = [d for d in yaml.safe_load_all(after) if isinstance(d, dict)]
    # Exactly the CRDs are gone; every other object is still installed, in order.
    assert kept == [o.manifest for o in objects if o.manifest.get("kind") != "CustomResourceDefinition"]
    assert not [d for d in _helm_uninstall_deletes(after) if d["kind"] == "CustomResourceDefinition"]


def test_the_post_renderer_reads_only_top_level_kinds() -> None:
    """A CRD's name in a ConfigMap's block scalar, or a quoted kind, is judged by the document's own
    top-level ``kind``."""
    text = (
        "---\n# Source: a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n"
        "  x: |\n    kind: CustomResourceDefinition\n"
        "---\n# Source: b.yaml\napiVersion: apiextensions.k8s.io/v1\nkind: 'CustomResourceDefinition'\n"
        "metadata:\n  name: b.example.com\n"
    )
    out = list(yaml.safe_load_all(_post_render(text)))
    assert [d["metadata"]["name"] for d in out if d] == ["a"]
    assert out[0]["data"]["x"] == "kind: CustomResourceDefinition\n"


def test_a_chart_version_no_source_provides_is_one_line() -> None:
    with pytest.raises(ChartCrdsError, match=r"kuberay-operator 0\.0\.1: CRDs: cannot resolve chart"):
        chart_crds(
            ChartRef(KUBERAY_CHART, "0.0.1", KUBERAY_REPOSITORY),
            values={},
            release_name="kuberay-operator",
            namespace="kuberay-system",
            from_crds_dir=True,
        )


def test_crds_follow_the_chart_version() -> None:
    """A bump of the pinned version changes the CRD resources' inputs, so Pulumi updates them.
    Only one KubeRay version is available offline; KAI's two mirrored versions show the same
    reader following the version (their ``crds/`` differ, tests/charts/test_crd_upgrades.py)."""
    if not Path(default_resolver().mirror_dir or "").joinpath("kai-scheduler-v0.13.0").is_dir():
        pytest.skip("KAI v0.13.0 is not in the chart mirror")
    # v0.13.0 and older are published under ghcr.io/nvidia (charts.lock.yaml).
    old, new = (
        {
            d["metadata"]["name"]: d["spec"]
            for d in chart_crds(
                ChartRef(f"oci://ghcr.io/{owner}/kai-scheduler/kai-scheduler", version),
                values={},
                release_name="kai-scheduler",
                namespace="kai-scheduler",
                from_crds_dir=True,
            )
        }
        for owner, version in (("nvidia", "v0.13.0"), ("kai-scheduler", "v0.17.0"))
    )
    assert old.keys() == new.keys() and any(old[n] != new[n] for n in old)
