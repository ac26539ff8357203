"""pod-monitoring-target and servicemonitor-without-crd (policies/gpu_batch_policy/rules/monitoring/scrapes.py).

Upstream: GoogleCloudPlatform/prometheus-engine @ 2ffde4ec ``pkg/operator/apis/monitoring/v1/
pod_config.go`` ``endpointScrapeConfig`` (a named port keeps targets whose
``__meta_kubernetes_pod_container_port_name`` fully matches; a numbered port is scraped even when
undeclared); kubernetes-sigs/kueue v0.19.2 ``charts/kueue/templates/manager/manager.yaml`` (the
controller's metrics container port is named ``metrics``) and ``templates/prometheus/monitor.yaml``
(``enablePrometheus`` renders a ServiceMonitor).  The Kueue pods come from the pinned chart
rendered by the real Helm engine; the PodMonitoring is the one the program declares
(components/monitoring.py), so a test that passes here is the program's object passing.
"""

from __future__ import annotations

from typing import Any

import yaml
from pulumi_policy import EnforcementLevel

from components.monitoring import (
    KUEUE_METRICS_PORT_NAME,
    PodScrape,
    ScrapeEndpoint,
    kuberay_operator_scrape,
    kueue_controller_selector,
)
from tests.policies.pack_harness import UNKNOWN, Res, policy, run, run_all
from tests.policies.pack_objects import k8s, pinned_release
from tests.upstream import accelerated_platforms_file, accelerated_platforms_kueue_version, kueue_file

TARGET = policy("pod-monitoring-target")
NO_CRD = policy("servicemonitor-without-crd")
GMP = "monitoring.googleapis.com/v1"


def kueue_release(**values: Any) -> Res:
    """The pinned Kueue chart, released as the program does (``kueue`` in ``kueue-system``)."""
    return pinned_release("kueue", "kueue-system", values=values)


def _monitor(scrape: PodScrape, kind: str = "PodMonitoring") -> Res:
    namespace = None if kind == "ClusterPodMonitoring" else scrape.namespace
    return k8s(GMP, kind, scrape.name, namespace=namespace, spec=scrape.spec())


def _kueue_scrape(port: str | int = KUEUE_METRICS_PORT_NAME, **selector: str) -> PodScrape:
    return PodScrape(
        name="kueue",
        namespace="kueue-system",
        selector=selector or kueue_controller_selector("kueue"),
        endpoint=ScrapeEndpoint(port=port, scheme="https", token_secret="t", insecure_skip_verify=True),
    )


def test_levels() -> None:
    assert TARGET.enforcement_level == EnforcementLevel.MANDATORY
    assert NO_CRD.enforcement_level == EnforcementLevel.MANDATORY


def test_the_programs_kueue_scrape_passes() -> None:
    assert run(TARGET, [kueue_release(), _monitor(_kueue_scrape())]).clean


def test_a_service_port_name_is_caught() -> None:
    result = run(TARGET, [kueue_release(), _monitor(_kueue_scrape(port="https"))])
    assert len(result.messages) == 1
    assert "'https' is not a container port" in result.text()
    assert "metrics=8443" in result.text()  # what the pod does expose, read from the render


def test_a_port_regex_matches_like_prometheus_relabel() -> None:
    assert run(TARGET, [kueue_release(), _monitor(_kueue_scrape(port="metric.*"))]).clean
    # Anchored: a prefix is not a match.
    assert not run(TARGET, [kueue_release(), _monitor(_kueue_scrape(port="metric"))]).clean


def test_a_numbered_port_is_scraped_as_gmp_does() -> None:
    assert run(TARGET, [kueue_release(), _monitor(_kueue_scrape(port=8443))]).clean
    assert run(TARGET, [kueue_release(), _monitor(_kueue_scrape(port=9999))]).clean


def test_a_selector_matching_no_pod_is_caught() -> None:
    result = run(TARGET, [kueue_release(), _monitor(_kueue_scrape(app="kueue"))])
    assert len(result.messages) == 1
    assert "selects no pod this stack runs in namespace kueue-system" in result.text()


def test_a_podmonitoring_only_sees_its_namespace() -> None:
    elsewhere = PodScrape(
        "kueue", "default", kueue_controller_selector("kueue"), ScrapeEndpoint(port="metrics")
    )
    assert "selects no pod" in run(TARGET, [kueue_release(), _monitor(elsewhere)]).text()
    cluster_wide = _monitor(elsewhere, kind="ClusterPodMonitoring")
    assert run(TARGET, [kueue_release(), cluster_wide]).clean


def test_kuberay_operator_scrape_passes_and_a_wrong_port_does_not() -> None:
    release = pinned_release("kuberay-operator", "kuberay-system")
    scrape = kuberay_operator_scrape("kuberay-operator", "kuberay-system")
    assert run(TARGET, [release, _monitor(scrape)]).clean
    wrong = PodScrape(scrape.name, scrape.namespace, scrape.selector, ScrapeEndpoint(port="metrics"))
    assert "'metrics' is not a container port" in run(TARGET, [release, _monitor(wrong)]).text()


def test_unknown_selector_cannot_be_checked_yet() -> None:
    monitor = _monitor(_kueue_scrape())
    monitor.props["spec"]["selector"] = UNKNOWN
    result = run(TARGET, [kueue_release(), monitor])
    assert result.clean
    assert result.cannot_check is not None and "unknown until apply" in result.cannot_check


def test_malformed_spec_is_a_finding_not_a_crash() -> None:
    monitor = k8s(
        GMP, "PodMonitoring", "bad", namespace="kueue-system", spec={"selector": "x", "endpoints": 3}
    )
    assert "scrapes nothing" in run(TARGET, [monitor]).text()


def test_servicemonitor_without_crd_fails_the_release() -> None:
    result = run(NO_CRD, [kueue_release(enablePrometheus=True)])
    assert len(result.messages) == 1
    assert "ServiceMonitor" in result.text() and "monitoring.coreos.com" in result.text()
    assert run(NO_CRD, [kueue_release()]).clean


def test_servicemonitor_with_its_crd_passes() -> None:
    crd = k8s(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        "servicemonitors.monitoring.coreos.com",
        spec={
            "group": "monitoring.coreos.com",
            "names": {"kind": "ServiceMonitor", "plural": "servicemonitors"},
        },
    )
    assert run(NO_CRD, [kueue_release(enablePrometheus=True), crd]).clean


# One fixture per rule fires exactly that rule among the two.
FIXTURE_RULES = ["pod-monitoring-target", "servicemonitor-without-crd"]


def _fired(resources: list[Res]) -> set[str]:
    return {name for name, r in run_all(resources, FIXTURE_RULES).items() if not r.clean}


def test_each_fixture_fires_exactly_its_rule() -> None:
    assert _fired([kueue_release(), _monitor(_kueue_scrape(port="https"))]) == {"pod-monitoring-target"}
    assert _fired([kueue_release(enablePrometheus=True)]) == {"servicemonitor-without-crd"}
    assert _fired([kueue_release(), _monitor(_kueue_scrape())]) == set()


# --- accelerated-platforms' published Kueue monitoring, converted at test time ------------------

AP_MONITORING = "platforms/gke/base/core/workloads/kueue/templates/workload/kueue-monitoring-gmp.yaml"


def _kueue_manager_as_installed(version: str) -> Res:
    """The controller Deployment of Kueue's release ``manifests.yaml`` (what accelerated-platforms
    applies), rebuilt from the kustomize sources at that tag: ``config/components/manager/
    manager.yaml``, the pod labels of ``config/default/kustomization.yaml`` and the container ports
    its ``manager_*_patch.yaml`` add.  (``manifests.yaml`` is a release asset, not in git.)"""
    tag = f"v{version}"
    docs = list(yaml.safe_load_all(kueue_file(tag, "config/components/manager/manager.yaml")))
    deployment = next(d for d in docs if isinstance(d, dict) and d.get("kind") == "Deployment")
    kustomization = yaml.safe_load(kueue_file(tag, "config/default/kustomization.yaml"))
    labels: dict[str, str] = {}
    for entry in kustomization.get("labels", []):
        if entry.get("includeTemplates") or entry.get("includeSelectors"):
            labels.update(entry["pairs"])
    template: dict[str, Any] = deployment["spec"]["template"]
    template.setdefault("metadata", {})["labels"] = labels
    manager = next(c for c in template["spec"]["containers"] if c["name"] == "manager")
    for patch in kustomization.get("patches", []):
        path = patch.get("path", "") if isinstance(patch, dict) else ""
        if not path.startswith("manager_"):
            continue
        patched = yaml.safe_load(kueue_file(tag, f"config/default/{path}"))
        for container in (
            (patched or {}).get("spec", {}).get("template", {}).get("spec", {}).get("containers", [])
        ):
            if container.get("name") == "manager":
                manager.setdefault("ports", []).extend(container.get("ports", []))
    namespace = kustomization["namespace"]
    name = kustomization["namePrefix"] + deployment["metadata"]["name"]
    return k8s("apps/v1", "Deployment", name, namespace=namespace, spec=deployment["spec"])


def _accelerated_platforms_objects() -> list[Res]:
    found = [_kueue_manager_as_installed(accelerated_platforms_kueue_version())]
    for doc in yaml.safe_load_all(accelerated_platforms_file(AP_MONITORING)):
        if not isinstance(doc, dict):
            continue
        meta = doc["metadata"]
        top = {k: v for k, v in doc.items() if k not in ("apiVersion", "kind", "metadata")}
        found.append(
            k8s(doc["apiVersion"], doc["kind"], meta["name"], namespace=meta.get("namespace"), **top)
        )
    return found


def test_accelerated_platforms_kueue_podmonitoring_port_is_caught_and_a_corrected_copy_passes() -> None:
    objects = _accelerated_platforms_objects()
    result = run(TARGET, objects)
    assert len(result.messages) == 1
    assert "'https' is not a container port" in result.text() and "metrics=8443" in result.text()
    for res in objects:
        if res.props["kind"] == "PodMonitoring":
            res.props["spec"]["endpoints"][0]["port"] = "metrics"
    assert run(TARGET, objects).clean


def test_kai_operator_pods_are_scrape_targets() -> None:
    from components.monitoring import kai_scrapes

    kai = pinned_release("kai-scheduler", "kai-scheduler")
    monitors = [
        k8s(GMP, "PodMonitoring", s.name, namespace=s.namespace, spec=s.spec())
        for s in kai_scrapes("kai-scheduler")
    ]
    assert [m.props["spec"]["selector"]["matchLabels"]["app"] for m in monitors] == [
        "kai-scheduler-default",
        "queue-controller",
    ]
    assert run(TARGET, [kai, *monitors]).clean
    # The port arrives as a double on the wire: still the number GMP scrapes.
    monitors[0].props["spec"]["endpoints"][0]["port"] = 8080.0
    assert run(TARGET, [kai, *monitors]).clean
    # No shard rendered: the operator creates no scheduler (nor queue controller) to scrape.
    no_shard = pinned_release("kai-scheduler", "kai-scheduler", values={"defaultShard": {"enabled": False}})
    assert "selects no pod" in run(TARGET, [no_shard, *monitors]).text()
    # A port *name* needs a declared container port, which these pods do not have.
    named = k8s(
        GMP,
        "PodMonitoring",
        "q",
        namespace="kai-scheduler",
        spec={**monitors[1].props["spec"], "endpoints": [{"port": "http-metrics", "interval": "30s"}]},
    )
    assert "'http-metrics' is not a container port" in run(TARGET, [kai, named]).text()


def test_ray_pods_are_scraped_as_kuberay_completes_them() -> None:
    from components.monitoring import ray_pods_scrape
    from tests.policies.pack_objects import ray_job

    scrape = ray_pods_scrape()
    monitor = k8s(GMP, "ClusterPodMonitoring", scrape.name, spec=scrape.spec())
    # The RayJob's own templates carry neither ray.io/is-ray-node nor a metrics port: KubeRay adds both.
    assert run(TARGET, [ray_job(), monitor]).clean
    wrong = k8s(
        GMP,
        "ClusterPodMonitoring",
        "ray",
        spec={**scrape.spec(), "endpoints": [{"port": "dashboard", "interval": "30s"}]},
    )
    assert "'dashboard' is not a container port" in run(TARGET, [ray_job(), wrong]).text()
    # No Ray workload in the stack: nothing to scrape.
    assert "selects no pod" in run(TARGET, [monitor]).text()
