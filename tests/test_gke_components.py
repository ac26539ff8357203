"""What the GKE components declare, as the engine would receive it (wire form)."""

from __future__ import annotations

import pytest

from preview.harness import RunResult
from preview.records import is_secret
from tests.stack_runner import named, of_type, run_stack, unedited_run

POOL = "gcp:container/nodePool:NodePool"
CLUSTER = "gcp:container/cluster:Cluster"
# The dev stack's queue layer selects its GPU pool by name: dropped where a test swaps the pools.
QUEUE_LAYER = ("gpu-batch:kueueQueues", "gpu-batch:teams", "gpu-batch:workloads")


@pytest.fixture(scope="module")
def dev() -> RunResult:
    return unedited_run("dev")


@pytest.fixture(scope="module")
def prod() -> RunResult:
    return unedited_run("prod")


class TestQueuedPool:
    """The dev GPU pool is a queued-provisioning pool GKE accepts (reference/kueue.md §8)."""

    def test_queued_provisioning_settings(self, dev: RunResult) -> None:
        pool = named(dev, "gpu-node-pool-pool").inputs
        assert pool["name"] == "gpu-node-pool"
        assert pool["queuedProvisioning"] == {"enabled": True}
        assert pool["initialNodeCount"] == 0
        assert pool["autoscaling"] == {
            "totalMinNodeCount": 0,
            "totalMaxNodeCount": 10,
            "locationPolicy": "ANY",
        }
        assert pool["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
        assert pool["management"]["autoRepair"] is False
        # GKE's how-to: --enable-queued-provisioning *and* --flex-start (issue 10 #6).
        assert pool["nodeConfig"]["flexStart"] is True
        assert "spot" not in pool["nodeConfig"]
        assert "placementPolicy" not in pool

    def test_gpu_taint_and_accelerator(self, dev: RunResult) -> None:
        node = named(dev, "gpu-node-pool-pool").inputs["nodeConfig"]
        assert node["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]
        assert node["machineType"] == "g2-standard-4"
        assert node["guestAccelerators"] == [
            {"type": "nvidia-l4", "count": 1, "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"}}
        ]

    def test_a_second_run_plans_the_same_pool(self, dev: RunResult) -> None:
        """Nothing in the pool's inputs changes between runs, so a second `up` has nothing to replace."""
        again = named(run_stack("dev"), "gpu-node-pool-pool").inputs
        assert again == named(dev, "gpu-node-pool-pool").inputs

    def test_pool_is_a_child_of_its_component(self, dev: RunResult) -> None:
        component = named(dev, "gpu-node-pool")
        assert component.type == "gpu-batch:gke:GpuNodePool"
        assert named(dev, "gpu-node-pool-pool").parent == component.urn

    def test_gpu_capacity_exported(self, dev: RunResult) -> None:
        assert dev.outputs["gpuPools"]["gpu-node-pool"]["gpuCapacity"] == 10
        assert dev.outputs["gpuCapacity"] == 10


class TestCluster:
    def test_dev_cluster_is_zonal_with_system_pool(self, dev: RunResult) -> None:
        cluster = of_type(dev, CLUSTER)[0].inputs
        assert cluster["location"] == "us-west1-b"
        assert cluster["removeDefaultNodePool"] is True
        assert cluster["workloadIdentityConfig"] == {"workloadPool": "gpu-batch-dev.svc.id.goog"}
        assert cluster["enableShieldedNodes"] is True
        assert cluster["deletionProtection"] is False
        # GKE cost allocation on, so the billing export can be compared with preview/cost.
        assert cluster["costManagementConfig"] == {"enabled": True}
        system = named(dev, "kuberay-gpu-cluster-system").inputs
        assert system["nodeConfig"]["machineType"] == "e2-standard-4"
        assert system["autoscaling"]["totalMinNodeCount"] == 1
        assert system["autoscaling"]["totalMaxNodeCount"] == 1
        assert system["management"]["autoRepair"] is True

    def test_prod_is_hardened_and_regional(self, prod: RunResult) -> None:
        cluster = of_type(prod, CLUSTER)[0].inputs
        assert cluster["location"] == "us-central1"
        assert cluster["deletionProtection"] is True
        assert cluster["privateClusterConfig"]["enablePrivateNodes"] is True
        gpu_pools = [p.inputs for p in of_type(prod, POOL) if "guestAccelerators" in p.inputs["nodeConfig"]]
        assert sorted(p["name"] for p in gpu_pools) == ["h100-queued", "l4-queued"]
        h100 = next(p for p in gpu_pools if p["name"] == "h100-queued")
        assert h100["nodeConfig"]["guestAccelerators"][0]["count"] == 8
        assert prod.outputs["gpuCapacity"] == 12 * 2 + 4 * 8

    def test_kubeconfig_is_secret_and_provider_waits_for_system_pool(self, dev: RunResult) -> None:
        assert is_secret(dev.outputs["kubeconfig"])
        provider = of_type(dev, "pulumi:providers:kubernetes")[0]
        assert is_secret(provider.inputs["kubeconfig"])
        system_urn = named(dev, "kuberay-gpu-cluster-system").urn
        assert system_urn in provider.dependencies


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("spot", {"spot": True, "policy": "ANY", "repair": True}),
        ("on-demand", {"spot": None, "policy": "BALANCED", "repair": True}),
        ("flex-start", {"flexStart": True, "policy": "ANY", "repair": False}),
    ],
)
def test_other_provisioning_modes(mode: str, expected: dict[str, object]) -> None:
    pools = [{"name": "p", "machineType": "a2-highgpu-1g", "provisioning": mode, "maxNodes": 2}]
    result = run_stack("dev", {"gpu-batch:gpuPools": pools}, drop=QUEUE_LAYER)
    pool = named(result, "p-pool").inputs
    assert "queuedProvisioning" not in pool
    assert pool["autoscaling"]["locationPolicy"] == expected["policy"]
    assert pool["management"]["autoRepair"] is expected["repair"]
    for key in ("spot", "flexStart"):
        if key in expected:
            assert pool["nodeConfig"].get(key) is expected[key]


def test_reservation_pool_consumes_its_reservation() -> None:
    pools = [
        {
            "name": "r",
            "machineType": "a3-highgpu-8g",
            "provisioning": "reservation",
            "reservation": "h100-res",
            "maxNodes": 2,
        }
    ]
    pool = named(run_stack("dev", {"gpu-batch:gpuPools": pools}, drop=QUEUE_LAYER), "r-pool").inputs
    assert pool["nodeConfig"]["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["h100-res"],
    }
