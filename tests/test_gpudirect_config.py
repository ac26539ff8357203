"""``gpuPools[].network: gpudirect``: config mistakes are one line each, and the pinned manifests
resolve from the mirror exactly as Google publishes them (or fail in one line)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpu_batch_policy.facts.charts import manifests
from gpu_batch_policy.facts.charts.manifests import (
    ManifestLockError,
    ManifestUnavailableError,
    load_documents,
    locked_manifests,
)
from gpu_batch_policy.facts.gpudirect.profiles import PROFILES

from stacks.errors import ConfigError
from tests.gpudirect_workloads import ray_gang
from tests.stack_runner import config_value, run_stack

CLUSTER = "gpu-batch:cluster"
POOLS = "gpu-batch:gpuPools"
SHARED = Path(__file__).resolve().parents[2] / "shared"


def _pools(index: int, **changes: Any) -> list[dict[str, Any]]:
    pools: list[dict[str, Any]] = copy.deepcopy(config_value("gpudirect", POOLS))
    pools[index].update(changes)
    return pools


def _cluster(**changes: Any) -> dict[str, Any]:
    cluster: dict[str, Any] = copy.deepcopy(config_value("gpudirect", CLUSTER))
    cluster.update(changes)
    return cluster


def config_error(edits: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as caught:
        run_stack("gpudirect", edits)
    return str(caught.value)


@pytest.mark.parametrize(
    ("edits", "expected"),
    [
        (
            {POOLS: _pools(0, machineType="a3-highgpu-4g")},
            "gpu-batch:gpuPools[0].network: got 'gpudirect', expected none for a3-highgpu-4g",
        ),
        (
            {POOLS: _pools(1, nodeLocations=["us-central1-a", "us-central1-b"])},
            'gpu-batch:gpuPools[1].nodeLocations: got ["us-central1-a", "us-central1-b"], expected exactly one zone',
        ),
        (
            {CLUSTER: _cluster(multiNetworking=False)},
            "gpu-batch:cluster.multiNetworking: got false, expected true or unset",
        ),
        (
            {CLUSTER: _cluster(dataplaneV2=False)},
            "gpu-batch:cluster.dataplaneV2: got false, expected true: GPUDirect pool(s)",
        ),
        (
            {POOLS: _pools(0, network="tcpxo")},
            "gpu-batch:gpuPools[0].network: got 'tcpxo'",
        ),
    ],
)
def test_gpudirect_config_mistakes_are_one_line(edits: dict[str, Any], expected: str) -> None:
    message = config_error(edits)
    assert expected in message, message


def test_every_profile_manifest_is_pinned_and_every_gpu_nic_machine_has_a_profile() -> None:
    pinned = set(locked_manifests()["gpudirect"].files)
    for profile in PROFILES.values():
        assert set(profile.manifests) <= pinned, profile.machine_type
    # The A3/A4/A4X machine types with GPU NICs (cluster-toolkit gpu_direct.tf and the
    # gke-a3-ultragpu / gke-a4 / gke-a4x blueprints); the stack config still refuses A4X.
    assert set(PROFILES) == {
        "a3-highgpu-8g",
        "a3-megagpu-8g",
        "a3-ultragpu-8g",
        "a4-highgpu-8g",
        "a4x-highgpu-4g",
    }


def test_manifests_resolve_from_the_mirror_byte_for_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPU_BATCH_CHART_CACHE", str(tmp_path / "charts"))
    monkeypatch.setenv("GPU_BATCH_CHARTS_OFFLINE", "1")
    manifests.resolve_manifest.cache_clear()
    try:
        path = manifests.resolve_manifest("gpudirect", "gpudirect-tcpxo/nccl-tcpxo-installer.yaml")
        mirrored = SHARED / "vendor/gpudirect-992db812/gpudirect-tcpxo/nccl-tcpxo-installer.yaml"
        assert path.read_bytes() == mirrored.read_bytes()
        assert path.is_relative_to(tmp_path)
        (daemonset,) = load_documents("gpudirect", "gpudirect-tcpxo/nccl-tcpxo-installer.yaml")
        assert daemonset == yaml.safe_load(mirrored.read_text())
    finally:
        manifests.resolve_manifest.cache_clear()


def test_unresolvable_manifest_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPU_BATCH_CHART_CACHE", str(tmp_path / "charts"))
    monkeypatch.setenv("GPU_BATCH_CHART_MIRROR", str(tmp_path / "empty"))
    monkeypatch.setenv("GPU_BATCH_CHARTS_OFFLINE", "1")
    manifests.resolve_manifest.cache_clear()
    try:
        with pytest.raises(ManifestUnavailableError) as caught:
            manifests.resolve_manifest("gpudirect", "nri_device_injector/nri-device-injector.yaml")
        line = str(caught.value)
        assert "\n" not in line and "nri-device-injector.yaml" in line and "992db812" in line
        with pytest.raises(ManifestLockError, match="is not pinned"):
            manifests.resolve_manifest("gpudirect", "gpudirect-tcpx/nccl-test.yaml")
    finally:
        manifests.resolve_manifest.cache_clear()


def test_malformed_lock_entries_are_one_line(tmp_path: Path) -> None:
    lock = tmp_path / "charts.lock.yaml"
    lock.write_text(
        "manifests:\n  x:\n    source: https://example.com\n    commit: abc\n    mirror: m\n    files: [a]\n"
    )
    with pytest.raises(ManifestLockError, match=r"manifests.x.commit: got 'abc', expected a 40-hex commit"):
        locked_manifests(lock)
    lock.write_text("charts: {}\n")
    assert locked_manifests(lock) == {}


def test_a_worker_topology_request_becomes_kueue_annotations() -> None:
    result = run_stack(
        "gpudirect",
        {"gpu-batch:workloads": ray_gang(mode="required", level="block", sliceLevel="host", sliceSize=1)},
    )
    (job,) = [r for r in result.resources if r.type == "kubernetes:ray.io/v1:RayJob"]
    template = job.inputs["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]
    kueue = {k: v for k, v in template["metadata"]["annotations"].items() if k.startswith("kueue.x-k8s.io/")}
    assert kueue == {
        "kueue.x-k8s.io/podset-required-topology": "cloud.google.com/gce-topology-block",
        "kueue.x-k8s.io/podset-slice-required-topology": "cloud.google.com/gce-topology-host",
        "kueue.x-k8s.io/podset-slice-size": "1",
    }
    (flavor,) = [
        r
        for r in result.resources
        if r.type == "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"
        and r.inputs["metadata"]["name"] == "h100-mega"
    ]
    assert flavor.inputs["spec"]["topologyName"] == "gke-default"


@pytest.mark.parametrize(
    ("topology", "expected"),
    [
        ({"mode": "required"}, "workerGroups[0].topology.level: missing, expected a level for mode required"),
        (
            {"mode": "preferred", "level": "block", "sliceLevel": "host", "sliceSize": 4},
            "must not be greater than pod set count 2",
        ),
        ({"mode": "preferred", "level": "block", "sliceSize": 1}, "may not be set when"),
        ({"mode": "unconstrained", "level": "host"}, "expected no value with mode unconstrained"),
    ],
)
def test_topology_request_mistakes_are_one_line(topology: dict[str, Any], expected: str) -> None:
    message = config_error({"gpu-batch:workloads": ray_gang(**topology)})
    assert expected in message, message


def test_topology_on_a_pool_gke_never_labels_is_refused() -> None:
    with pytest.raises(ConfigError) as caught:
        run_stack("dev", {"gpu-batch:kueueQueues": _dev_queues_with_topology()})
    assert (
        "gpu-batch:kueueQueues.resourceFlavors[0].topology: got true, expected false unless pool is a GPU pool"
        in str(caught.value)
    )


def _dev_queues_with_topology() -> dict[str, Any]:
    queues: dict[str, Any] = copy.deepcopy(config_value("dev", "gpu-batch:kueueQueues"))
    queues["resourceFlavors"][0]["topology"] = True
    return queues


def test_a_reservation_block_renders_as_gke_needs_it_and_needs_its_zone() -> None:
    block = "a3mega-reservation/reservationBlocks/block-1"
    result = run_stack("gpudirect", {POOLS: _pools(0, reservation=block, nodeLocations=["us-central1-a"])})
    (pool,) = [
        r
        for r in result.resources
        if r.type == "gcp:container/nodePool:NodePool" and r.name == "a3mega-tcpxo-pool"
    ]
    assert pool.inputs["nodeConfig"]["reservationAffinity"]["values"] == [
        f"projects/gpu-batch-train/reservations/{block}"
    ]
    assert (
        "gpu-batch:gpuPools[0].nodeLocations: missing, expected the zone of reservation block"
        in config_error({POOLS: _pools(0, reservation=block)})
    )
    assert "expected a reservation name, or NAME/reservationBlocks/BLOCK" in config_error(
        {POOLS: _pools(0, reservation="a3mega/blocks/1")}
    )
