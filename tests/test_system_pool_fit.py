"""What the rendered charts request fits each stack's system pool (issue 10 #2).

Every operator and SkyPilot server runs on the CPU system pool (GPU pools are tainted).  The
charts are rendered with the real Helm engine from ../shared/vendor with the values the program
planned, and each pod's requests are checked against one node's allocatable, and the sum against
the pool's maximum.  Allocatable follows GKE's reservations (cloud.google.com/kubernetes-engine/
docs/concepts/plan-node-sizes, "Resource reservations"): CPU 6% of the first core, 1% of the next,
0.5% of the next 2, 0.25% above 4; memory 25% of the first 4 GiB, 20% of the next 4, 10% of the
next 8, 6% of the next 112, plus 100 MiB eviction threshold.  A per-node allowance covers GKE's
own DaemonSets (kube-proxy, logging and metrics agents), which the charts do not show.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
from gpu_batch_policy.facts.charts.render import render_chart

from preview.records import for_display
from tests.stack_runner import config_value, of_type, unedited_run

VENDOR = Path(__file__).resolve().parents[2] / "shared" / "vendor"
MACHINES = {"e2-standard-4": (4.0, 16.0), "e2-standard-8": (8.0, 32.0)}  # vCPU, GiB
# GKE's own per-node pods (kube-proxy, fluentbit, gke-metrics-agent, pdcsi): a generous allowance.
SYSTEM_DAEMONS = (0.4, 1.0)
CHART_DIRS = {
    "oci://registry.k8s.io/kueue/charts/kueue": "kueue",
    "kuberay-operator": "kuberay-operator",
    "oci://ghcr.io/kai-scheduler/kai-scheduler/kai-scheduler": "kai-scheduler",
    "skypilot": "skypilot",
    "gpu-operator": "gpu-operator",
}


def allocatable(machine: str) -> tuple[float, float]:
    cpus, gib = MACHINES[machine]
    cpu_reserved = sum(
        share * min(max(cpus - start, 0), size)
        for start, size, share in ((0, 1, 0.06), (1, 1, 0.01), (2, 2, 0.005), (4, 1e9, 0.0025))
    )
    mem_reserved = sum(
        share * min(max(gib - start, 0), size)
        for start, size, share in ((0, 4, 0.25), (4, 4, 0.2), (8, 8, 0.1), (16, 112, 0.06))
    )
    return cpus - cpu_reserved, gib - mem_reserved - 100 / 1024


def quantity(text: Any, memory: bool) -> float:
    value = str(text)
    units = {"Ki": 2**-20, "Mi": 2**-10, "Gi": 1.0, "M": 1e6 / 2**30, "G": 1e9 / 2**30}
    if memory:
        for suffix, factor in units.items():
            if value.endswith(suffix):
                return float(value[: -len(suffix)]) * factor
        return float(value) / 2**30
    return float(value[:-1]) / 1000 if value.endswith("m") else float(value)


def pod_requests(doc: dict[str, Any]) -> list[tuple[str, float, float]]:
    """(name, cpu, GiB) per replica of a Deployment/StatefulSet's pod template."""
    if doc.get("kind") not in ("Deployment", "StatefulSet"):
        return []
    spec = doc["spec"]["template"]["spec"]
    cpu = mem = 0.0
    for container in spec.get("containers", []):
        requests = (container.get("resources") or {}).get("requests") or {}
        cpu += quantity(requests.get("cpu", 0), memory=False)
        mem += quantity(requests.get("memory", 0), memory=True)
    return [(doc["metadata"]["name"], cpu, mem)] * int(doc["spec"].get("replicas", 1))


def _chart_dir(chart: str, version: str) -> Path:
    """The mirrored chart; one the mirror has only as a subchart (ingress-nginx 4.11.8, bundled by
    skypilot 0.13.0) is found where the chart resolver finds it."""
    if chart in CHART_DIRS:
        return VENDOR / f"{CHART_DIRS[chart]}-{version}"
    bundled = [
        p
        for p in VENDOR.glob(f"*/charts/{chart}")
        if f"version: {version}\n" in (p / "Chart.yaml").read_text()
    ]
    return bundled[0] if bundled else VENDOR / f"{chart}-{version}"


@functools.cache
def rendered_pods(stack: str) -> list[tuple[str, float, float]]:
    """Every pod template's requests in what each release of the stack installs, rendered by the
    pack's own renderer (``gpu_batch_policy/facts/charts/render.py`` ``render_chart``: Helm's
    engine as ``helm install`` runs it, each render kept in the shared render cache, so a warm
    machine reads it instead of running Helm again)."""
    pods = []
    for release in of_type(unedited_run(stack), "kubernetes:helm.sh/v3:Release"):
        inputs = for_display(release.inputs)
        chart = _chart_dir(inputs["chart"], inputs["version"])
        if not chart.is_dir():
            pytest.skip(f"chart mirror {chart} not present")
        out = render_chart(
            chart, inputs.get("values") or {}, release_name=inputs["name"], namespace=inputs["namespace"]
        )
        for obj in out.objects:
            pods.extend(pod_requests(obj.manifest))
    return pods


@pytest.mark.parametrize("stack", ["dev", "kai", "prod", "skypilot"])
def test_system_pool_fits_what_the_charts_request(stack: str) -> None:
    pool = config_value(stack, "gpu-batch:cluster")["systemPool"]
    cpu, mem = allocatable(pool["machineType"])
    node_cpu, node_mem = cpu - SYSTEM_DAEMONS[0], mem - SYSTEM_DAEMONS[1]
    pods = rendered_pods(stack)
    for name, pod_cpu, pod_mem in pods:
        assert pod_cpu <= node_cpu and pod_mem <= node_mem, (
            stack,
            name,
            pod_cpu,
            pod_mem,
            node_cpu,
            node_mem,
        )
    total_cpu, total_mem = sum(p[1] for p in pods), sum(p[2] for p in pods)
    print(
        f"{stack}: {len(pods)} pods request {total_cpu:.2f} CPU / {total_mem:.2f} GiB; "
        f"{pool['maxNodes']} x {pool['machineType']} allow {pool['maxNodes'] * node_cpu:.2f} / {pool['maxNodes'] * node_mem:.2f}"
    )
    assert total_cpu <= pool["maxNodes"] * node_cpu and total_mem <= pool["maxNodes"] * node_mem


def test_the_old_skypilot_pool_is_caught() -> None:
    """e2-standard-4 (3.92 CPU allocatable) can never hold a 4-CPU SkyPilot API server."""
    cpu, _ = allocatable("e2-standard-4")
    server = max(p[1] for p in rendered_pods("skypilot"))
    assert server == 4.0 and server > cpu
