"""Every pinned chart rendered by the real Helm engine with each stack's own release values.

Facts asserted here are the ones later checks depend on (the webhook ports a private control
plane must reach, the requests the cluster-fit rules sum), so a chart bump that changes them
fails here first.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
import yaml
from gpu_batch_policy.facts.charts import ChartResolver, RenderError, reference_from_release, render_chart

from preview.charts import ReleaseManifests, render_recorded_releases
from preview.stack_files import stack_names
from tests.stack_runner import ROOT, unedited_run

MIRROR = ROOT.parent / "shared" / "vendor"


@cache
def releases(stack: str) -> tuple[ReleaseManifests, ...]:
    return tuple(render_recorded_releases(unedited_run(stack).resources))


def objects(stack: str, chart: str) -> list[dict[str, Any]]:
    found = [r for r in releases(stack) if r.render.reference and r.render.reference.name == chart]
    assert found, f"stack {stack} has no {chart} release"
    return [o for r in found for o in r.objects]


def of_kind(objs: list[dict[str, Any]], kind: str, name: str | None = None) -> list[dict[str, Any]]:
    return [o for o in objs if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]


def containers(deployment: dict[str, Any]) -> list[dict[str, Any]]:
    containers: list[dict[str, Any]] = deployment["spec"]["template"]["spec"]["containers"]
    return containers


@pytest.mark.parametrize("stack", stack_names(ROOT))
def test_every_release_of_every_stack_renders(stack: str) -> None:
    for release in releases(stack):
        assert release.render.status == "rendered", (release.title, release.render.message)
        assert release.objects, release.title


@pytest.mark.parametrize("stack", ["dev", "prod", "skypilot"])
def test_kueue_manager_image_and_webhook_port(stack: str) -> None:
    kueue = objects(stack, "kueue")
    (manager,) = of_kind(kueue, "Deployment", "kueue-controller-manager")
    images = {c["image"] for c in containers(manager)}
    assert "registry.k8s.io/kueue/kueue:v0.19.2" in images
    (service,) = of_kind(kueue, "Service", "kueue-webhook-service")
    assert service["spec"]["ports"] == [{"port": 443, "protocol": "TCP", "targetPort": 9443}]
    webhooks = [
        w
        for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")
        for cfg in of_kind(kueue, kind)
        for w in cfg["webhooks"]
    ]
    assert webhooks and {w["clientConfig"]["service"]["name"] for w in webhooks} == {"kueue-webhook-service"}
    # Fail-closed on Kueue's own objects: a control plane that cannot reach 9443 rejects them.
    assert {w["failurePolicy"] for w in webhooks if w["name"] == "vclusterqueue.kb.io"} == {"Fail"}
    for obj in kueue:
        if obj["kind"] not in (
            "ClusterRole",
            "ClusterRoleBinding",
            "CustomResourceDefinition",
            "ValidatingWebhookConfiguration",
            "MutatingWebhookConfiguration",
            "APIService",
        ):
            # The release namespace, or the one the chart names (the visibility server's
            # auth-reader RoleBinding lives in kube-system).
            assert obj["metadata"].get("namespace") in ("kueue-system", "kube-system"), obj["metadata"]


def test_skypilot_api_servers_request_what_the_chart_demands() -> None:
    sky = objects("skypilot", "skypilot")
    servers = [d for d in of_kind(sky, "Deployment") if d["metadata"]["name"].endswith("-api-server")]
    assert len(servers) == 2
    for server in servers:
        requests = [c.get("resources", {}).get("requests") for c in containers(server)]
        assert {"cpu": "4", "memory": "8Gi"} in requests


def test_skypilot_renders_no_ingress_nginx() -> None:
    """Issue 27: GKE's Gateway replaced the shared ingress-nginx release (retired upstream); no
    skypilot release renders the bundled subchart either."""
    assert not [
        r for r in releases("skypilot") if r.render.reference and r.render.reference.name == "ingress-nginx"
    ]
    rendered = objects("skypilot", "skypilot")
    assert rendered
    assert not [o for o in rendered if "ingress-nginx" in o["metadata"]["name"]]
    assert not of_kind(rendered, "ValidatingWebhookConfiguration")


def test_kai_chart_creates_its_priority_classes_and_operator() -> None:
    kai = objects("kai", "kai-scheduler")
    classes = {o["metadata"]["name"]: o["value"] for o in of_kind(kai, "PriorityClass")}
    assert classes == {"train": 50, "build-preemptible": 75, "build": 100, "inference": 125}
    (operator,) = of_kind(kai, "Deployment", "kai-operator")
    assert {c["image"] for c in containers(operator)} == {
        "ghcr.io/kai-scheduler/kai-scheduler/operator:v0.17.0"
    }
    # v0.17.0 ships its Config as a manifest a post-install hook applies (the operator then
    # creates the admission webhooks after Helm returns -- hence the readiness gates).
    (manifest,) = of_kind(kai, "ConfigMap", "kai-config-manifest")
    config = yaml.safe_load(manifest["data"]["kai-config.yaml"])
    assert (config["kind"], config["metadata"]["name"]) == ("Config", "kai-config")
    admission = config["spec"]["admission"]
    assert admission["gpuFractionRuntimeClassName"] == "nvidia", "the GPU Operator's RuntimeClass"
    assert admission["webhook"]["targetPort"] == 9443


def test_skypilot_refuses_an_api_server_below_its_minimum(tmp_path: Any) -> None:
    chart = ChartResolver(tmp_path, MIRROR, offline=True).resolve(
        reference_from_release("skypilot", "0.13.0", "https://helm.skypilot.co")
    )
    small = {"apiService": {"resources": {"requests": {"cpu": "1", "memory": "2Gi"}}}}
    with pytest.raises(RenderError) as refused:
        render_chart(chart, small, release_name="sky", namespace="team1")
    assert refused.value.kind == "chart-refused"
    assert "requires at least 4 CPU cores and 8 GiB memory" in str(refused.value)
    assert "\n" not in str(refused.value)
    with pytest.raises(RenderError) as schema:
        render_chart(chart, {"apiService": {"config": 5}}, release_name="sky", namespace="team1")
    assert schema.value.kind == "values-schema"
    assert "/apiService/config" in str(schema.value)


def test_a_render_with_a_subchart_off_does_not_change_the_next_render(tmp_path: Any) -> None:
    """Helm's dependency processing prunes disabled subcharts from a loaded chart in place; a
    reused chart object made every later render of that chart lose ingress-nginx."""
    chart = ChartResolver(tmp_path, MIRROR, offline=True).resolve(
        reference_from_release("skypilot", "0.13.0", "https://helm.skypilot.co")
    )

    def controllers(enabled: bool) -> int:
        rendered = render_chart(
            chart, {"ingress-nginx": {"enabled": enabled}}, release_name="s", namespace="t"
        )
        return sum(1 for o in rendered.objects if o.source.startswith("skypilot/charts/ingress-nginx/"))

    assert controllers(False) == 0
    assert controllers(True) > 0
