"""A4X (a4x-highgpu-4g) GPUDirect-RDMA profile from cluster-toolkit's examples/gke-a4x blueprint:
1 extra gVNIC VPC + a RoCE VPC with 4 subnets (5 NICs), 1.33 or later, Google's A4X installer and
IMEX test Pod; the pack judges A4X programs with it, the stack config still refuses A4X GPUDirect
and any `network: dranet` in one line."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from gpu_batch_policy.facts.gpudirect.profiles import PROFILES
from gpu_batch_policy.facts.gpudirect.wiring import expected_networks

from stacks.errors import ConfigError
from tests.policies.pack_harness import Res, run
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import gke_cluster
from tests.stack_runner import config_value, run_stack

POOL = "gcp:container/nodePool:NodePool"
A4X = PROFILES["a4x-highgpu-4g"]


def a4x_pool(nics: int, zone: str = "us-central1-a") -> Res:
    networks = [{"network": f"net-{i}", "subnetwork": f"sub-{i}"} for i in range(nics)]
    return Res(
        POOL,
        "a4x",
        {
            "name": "a4x",
            "cluster": "gpu-cluster",
            "nodeLocations": [zone],
            "nodeConfig": {"machineType": "a4x-highgpu-4g"},
            "networkConfig": {"additionalNodeNetworkConfigs": networks},
        },
    )


def test_the_profile_is_the_blueprints() -> None:
    assert (A4X.stack, A4X.gvnic_networks, A4X.rdma_subnets, A4X.nic_count, A4X.min_minor) == (
        "RDMA",
        1,
        4,
        5,
        "1.33",
    )
    assert expected_networks(A4X) == ["rdma-0", "rdma-1", "rdma-2", "rdma-3"]


def test_nic_count_is_judged_on_a4x() -> None:
    cluster = gke_cluster(minMasterVersion="1.33.5-gke.1080000", enableMultiNetworking=True)
    assert run(get_policy("gke-gpudirect-nic-count"), [cluster, a4x_pool(5)]).clean
    short = run(get_policy("gke-gpudirect-nic-count"), [cluster, a4x_pool(2)])
    assert short.violations and "a4x-highgpu-4g" in short.messages[0]
    # Like A3 Ultra / A4, the blueprint's version_prefix (1.33.) is recorded as min_minor, not a floor
    # cluster-toolkit enforces (gpu_direct.tf has floors only for TCPX / TCPXO): not judged.
    old = gke_cluster(minMasterVersion="1.32.9-gke.100", enableMultiNetworking=True)
    assert run(get_policy("gke-gpudirect-version"), [old, a4x_pool(5)]).clean


def _pools(**changes: Any) -> list[dict[str, Any]]:
    pools: list[dict[str, Any]] = copy.deepcopy(config_value("gpudirect", "gpu-batch:gpuPools"))
    pools[1].update(changes)
    return pools


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"machineType": "a4x-highgpu-4g"},
            "gpu-batch:gpuPools[1].network: got 'gpudirect', expected none for a4x-highgpu-4g: cluster-toolkit's "
            "gke-a4x blueprint also needs a HIGH_THROUGHPUT workload policy",
        ),
        ({"network": "dranet"}, "gpu-batch:gpuPools[1].network: got 'dranet'"),
    ],
)
def test_the_stack_refuses_a4x_gpudirect_and_dranet_in_one_line(
    changes: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        run_stack("gpudirect", {"gpu-batch:gpuPools": _pools(**changes)})
    assert expected in str(caught.value), str(caught.value)
