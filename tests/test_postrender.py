"""The preview runs a release's post-renderer as Helm does (``preview/postrender.py``).

Helm feeds a post-renderer the rendered templates on standard input, installs what it prints and
fails the install when it exits non-zero or prints nothing (helm/helm v3.20.2
``pkg/postrender/exec.go``; helm-www ``docs/topics/advanced.md`` "Post Rendering"); the chart's
``crds/`` never go through it.  So ``manifests.yaml`` must show what the release really installs:
Kueue's templated CRDs, which the stack declares as resources of its own and the release drops
with ``components/helm_postrender/drop-crds``, appear once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gpu_batch_policy.facts.charts.release import ReleaseRender
from gpu_batch_policy.facts.charts.render import RenderedObject

from components.operator_release import DROP_CRDS_POSTRENDER
from preview.charts import render_recorded_releases
from preview.manifests import render_manifests
from preview.postrender import POST_RENDERED, post_render
from tests.stack_runner import ROOT, unedited_run

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def obj(kind: str, name: str, api: str = "v1") -> dict[str, Any]:
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name}}


CRD_FILE = RenderedObject(
    "c/crds/widgets.yaml", obj("CustomResourceDefinition", "widgets.x.io", "apiextensions.k8s.io/v1")
)
CRD_TEMPLATE = RenderedObject(
    "c/templates/crd.yaml", obj("CustomResourceDefinition", "gadgets.x.io", "apiextensions.k8s.io/v1")
)
CONFIG_MAP = RenderedObject("c/templates/cm.yaml", obj("ConfigMap", "settings"))


def rendered(*objects: RenderedObject) -> ReleaseRender:
    return ReleaseRender("rendered", None, "r", "ns", objects)


def script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "post"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


def test_the_stacks_post_renderer_drops_template_crds_and_keeps_the_rest() -> None:
    out = post_render(rendered(CRD_FILE, CRD_TEMPLATE, CONFIG_MAP), DROP_CRDS_POSTRENDER, ROOT)
    assert out.status == "rendered"
    # crds/ is installed by Helm before and untouched; the templated CRD is gone
    assert [(o.source, o.manifest["metadata"]["name"]) for o in out.objects] == [
        ("c/crds/widgets.yaml", "widgets.x.io"),
        (POST_RENDERED, "settings"),
    ]


def test_the_post_renderer_gets_only_templates_and_its_output_is_installed(tmp_path: Path) -> None:
    seen = tmp_path / "stdin"
    command = script(tmp_path, f"tee {seen} >/dev/null\nprintf 'kind: Secret\\nmetadata: {{name: made}}\\n'")
    out = post_render(rendered(CRD_FILE, CONFIG_MAP), command, tmp_path)
    assert "# Source: c/templates/cm.yaml" in seen.read_text()
    assert "widgets.x.io" not in seen.read_text()
    assert [o.manifest["metadata"]["name"] for o in out.objects] == ["widgets.x.io", "made"]


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("echo 'boom: bad values' >&2; exit 3", "exit status 3: boom: bad values"),
        ("cat >/dev/null", "printed nothing"),
        ("printf 'a: [\\n'", "printed what is not YAML"),
        ("printf -- '- a\\n'", "printed a document that is not a Kubernetes object"),
    ],
)
def test_a_post_renderer_that_fails_refuses_the_release_in_one_line(
    tmp_path: Path, body: str, said: str
) -> None:
    command = script(tmp_path, body)
    out = post_render(rendered(CONFIG_MAP), command, tmp_path)
    assert out.status == "refused"
    assert out.objects == ()
    assert said in out.message
    assert "\n" not in out.message
    assert out.message.startswith(f"post-renderer {command} ")


def test_a_post_renderer_that_cannot_run_refuses_the_release(tmp_path: Path) -> None:
    out = post_render(rendered(CONFIG_MAP), "./missing/post", tmp_path)
    assert out.status == "refused"
    assert "could not run it" in out.message


def test_a_relative_post_renderer_is_found_from_the_project_dir(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    script(tmp_path / "bin", "cat")
    out = post_render(rendered(CONFIG_MAP), "./bin/post", tmp_path)
    assert out.status == "rendered"
    assert [o.manifest for o in out.objects] == [CONFIG_MAP.manifest]


def test_manifests_list_each_kueue_crd_once() -> None:
    """dev: the program declares Kueue's CRDs, the Kueue release no longer lists them."""
    result = unedited_run("dev")
    releases = render_recorded_releases(result.resources)
    (kueue,) = [r for r in releases if r.render.release_name == "kueue"]
    assert kueue.render.status == "rendered"
    assert kueue.objects
    assert not [o for o in kueue.objects if o.get("kind") == "CustomResourceDefinition"]
    crds = [
        o["metadata"]["name"]
        for o in [*render_manifests(result.resources), *(o for r in releases for o in r.objects)]
        if o.get("kind") == "CustomResourceDefinition"
    ]
    assert "clusterqueues.kueue.x-k8s.io" in crds
    assert len(crds) == len(set(crds))
