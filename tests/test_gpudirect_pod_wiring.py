"""Ray GPU groups on a GPUDirect pool carry the wiring of Google's NCCL test Pod
(container-engine-accelerators @ 992db812, read at run time), so the pack's
``gke-gpudirect-pod-wiring`` passes on them; what a template already says wins."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest
from gpu_batch_policy.facts.charts.manifests import locked_manifests
from gpu_batch_policy.facts.gpudirect.profiles import PROFILES
from gpu_batch_policy.facts.gpudirect.wiring import INTERFACES, missing_wiring

from components.gpudirect.pod_wiring import GpuDirectWiringError, pod_wiring, wire
from components.workloads import RayPodArgs, pod_template
from stacks.errors import ConfigError
from tests.gpudirect_workloads import ray_gang
from tests.stack_runner import config_value, run_stack

TEAMS = "gpu-batch:teams"


def test_every_profile_has_a_pinned_test_pod() -> None:
    pinned = set(locked_manifests()["gpudirect"].files)
    for profile in PROFILES.values():
        assert profile.test_pod in pinned, profile.machine_type


@pytest.mark.parametrize("machine", sorted(PROFILES))
def test_a_wired_ray_gpu_template_passes_the_pack_check(machine: str) -> None:
    profile = PROFILES[machine]
    bare = pod_template(RayPodArgs(image="ray", cpu="8", memory="64Gi", gpu=8), "ray-worker")
    assert missing_wiring(profile, {}, bare["spec"]), "an unwired template must be caught"
    wired = pod_template(
        RayPodArgs(image="ray", cpu="8", memory="64Gi", gpu=8, gpudirect=pod_wiring(profile)), "ray-worker"
    )
    notes = wired["metadata"]["annotations"]
    assert missing_wiring(profile, notes, wired["spec"]) == [], machine
    # The Ray container stays first (KubeRay's RayContainerIndex); the RxDM sidecar follows it.
    names = [c["name"] for c in wired["spec"]["containers"]]
    assert names[0] == "ray-worker"
    assert (len(names) == 2) == (profile.stack in ("TCPX", "TCPXO")), names


def test_no_wiring_without_gpus_and_nothing_test_specific() -> None:
    tcpx = pod_wiring(PROFILES["a3-highgpu-8g"])
    head = pod_template(RayPodArgs(image="ray", cpu="2", memory="8Gi", gpudirect=tcpx), "ray-head")
    assert "metadata" not in head and len(head["spec"]["containers"]) == 1
    # TCPX's test ConfigMap (the test's scripts) is not copied; its socket and libraries are.
    assert {v["name"] for v in tcpx.volumes} == {"libraries", "tcpx-socket", "sys", "proc"}
    assert tcpx.gpu_capabilities == ("IPC_LOCK",)


def test_what_the_template_already_has_wins() -> None:
    rdma = pod_wiring(PROFILES["a3-ultragpu-8g"])
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "env": [{"name": "LD_LIBRARY_PATH", "value": "/mine"}]}],
        "volumes": [{"name": "gib", "emptyDir": {}}],
    }
    notes = {INTERFACES: "[]"}
    wire(spec, notes, rdma)
    assert notes[INTERFACES] == "[]"
    assert [e["value"] for e in spec["containers"][0]["env"] if e["name"] == "LD_LIBRARY_PATH"] == ["/mine"]
    assert [v for v in spec["volumes"] if v["name"] == "gib"] == [{"name": "gib", "emptyDir": {}}]
    # The cached wiring is never mutated by a use.
    assert rdma.annotations[INTERFACES] != "[]"


def test_a_manifest_naming_other_networks_stops_in_one_line() -> None:
    odd = replace(PROFILES["a3-megagpu-8g"], gvnic_networks=4)
    with pytest.raises(GpuDirectWiringError) as caught:
        pod_wiring(odd)
    assert "\n" not in str(caught.value) and "nccl-test-latest.yaml" in str(caught.value)


def _worker_template(result: Any) -> dict[str, Any]:
    (job,) = [r for r in result.resources if r.type == "kubernetes:ray.io/v1:RayJob"]
    template: dict[str, Any] = job.inputs["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]
    return template


def test_the_example_stack_wires_its_ray_workers_for_tcpxo() -> None:
    template = _worker_template(
        run_stack("gpudirect", {"gpu-batch:workloads": ray_gang(mode="preferred", level="block")})
    )
    notes = template["metadata"]["annotations"]
    assert notes["kueue.x-k8s.io/podset-preferred-topology"] == "cloud.google.com/gce-topology-block"
    assert "devices.gke.io/container.tcpxo-daemon" in notes
    assert missing_wiring(PROFILES["a3-megagpu-8g"], notes, template["spec"]) == []


def test_a_queue_reaching_a_plain_gpu_pool_gets_no_wiring() -> None:
    pools = copy.deepcopy(config_value("gpudirect", "gpu-batch:gpuPools"))
    pools[0]["network"] = "none"
    template = _worker_template(
        run_stack(
            "gpudirect",
            {"gpu-batch:gpuPools": pools, "gpu-batch:workloads": ray_gang(mode="preferred", level="block")},
        )
    )
    assert "networking.gke.io/interfaces" not in template["metadata"]["annotations"]
    assert len(template["spec"]["containers"]) == 1


def test_a_gpudirect_workload_in_a_baseline_namespace_is_one_line() -> None:
    teams = copy.deepcopy(config_value("gpudirect", TEAMS))
    teams[0]["podSecurity"] = "baseline"
    with pytest.raises(ConfigError) as caught:
        run_stack(
            "gpudirect", {TEAMS: teams, "gpu-batch:workloads": ray_gang(mode="preferred", level="block")}
        )
    assert (
        "gpu-batch:teams[0].podSecurity: got 'baseline', expected privileged: workload train runs on "
        "GPUDirect-TCPXO nodes" in str(caught.value)
    )
    # Without a GPU workload the team may stay baseline.
    run_stack("gpudirect", {TEAMS: teams})
