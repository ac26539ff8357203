"""``gke-gpudirect-pod-wiring``: Google's own NCCL test pods (container-engine-accelerators @ 992db812,
read from the ../shared/vendor mirror) pass on their machine's GPUDirect pool; each piece taken
away is named; pods that may land elsewhere are not judged."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.policies.pack_harness import Res, run
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import gke_cluster

VENDOR = Path(__file__).resolve().parents[4] / "shared" / "vendor" / "gpudirect-992db812"
POOL = "gcp:container/nodePool:NodePool"
RULE = get_policy("gke-gpudirect-pod-wiring")


def pool(machine: str, nics: int, name: str = "gpu") -> Res:
    return Res(
        POOL,
        name,
        {
            "name": name,
            "cluster": "gpu-cluster",
            "nodeConfig": {"machineType": machine},
            "networkConfig": {
                "additionalNodeNetworkConfigs": [
                    {"network": f"n{i}", "subnetwork": f"s{i}"} for i in range(nics)
                ]
            },
        },
    )


def pods(path: str) -> list[Res]:
    docs = [
        d
        for d in yaml.safe_load_all((VENDOR / path).read_text())
        if isinstance(d, dict) and d.get("kind") == "Pod"
    ]
    assert docs, path
    return [Res("kubernetes:core/v1:Pod", d["metadata"]["name"], d) for d in docs]


CASES = [
    ("a3-highgpu-8g", 4, "gpudirect-tcpx/nccl-test-latest.yaml"),
    ("a3-megagpu-8g", 8, "gpudirect-tcpxo/nccl-test-latest.yaml"),
    ("a3-ultragpu-8g", 9, "gpudirect-rdma/nccl-test.yaml"),
]


@pytest.mark.parametrize(("machine", "nics", "path"), CASES, ids=[c[2] for c in CASES])
def test_googles_nccl_test_pods_are_wired(machine: str, nics: int, path: str) -> None:
    result = run(RULE, [gke_cluster(), pool(machine, nics), *pods(path)])
    assert result.clean, result.text()


def _strip(res: Res, edit: Any) -> Res:
    out = copy.deepcopy(res)
    edit(out.props)
    return out


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda p: p["metadata"]["annotations"].pop("networking.gke.io/interfaces"),
            "networking.gke.io/interfaces",
        ),
        (
            lambda p: p["spec"].update(
                containers=[c for c in p["spec"]["containers"] if c["name"] != "tcpxo-daemon"]
            ),
            "the RxDM sidecar",
        ),
        (
            lambda p: [c.pop("env") for c in p["spec"]["containers"] if c["name"] == "nccl-test"],
            "NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY",
        ),
        (
            lambda p: p["metadata"]["annotations"].pop("devices.gke.io/container.tcpxo-daemon"),
            "NRI device injection",
        ),
    ],
)
def test_a_missing_piece_is_named(edit: Any, expected: str) -> None:
    first, *_ = pods("gpudirect-tcpxo/nccl-test-latest.yaml")
    result = run(RULE, [gke_cluster(), pool("a3-megagpu-8g", 8), _strip(first, edit)])
    assert len(result.violations) == 1, result.text()
    assert expected in result.messages[0] and "NCCL will fall back to TCP" in result.messages[0]


def test_rdma_pods_need_the_gib_volume() -> None:
    first, *_ = pods("gpudirect-rdma/nccl-test.yaml")
    stripped = _strip(
        first, lambda p: p["spec"].update(volumes=[v for v in p["spec"]["volumes"] if v["name"] != "gib"])
    )
    result = run(RULE, [gke_cluster(), pool("a3-ultragpu-8g", 9), stripped])
    assert len(result.violations) == 1 and "/home/kubernetes/bin/gib" in result.messages[0]


def test_pods_that_may_land_on_a_plain_pool_or_plain_clusters_are_not_judged() -> None:
    bare = Res(
        "kubernetes:core/v1:Pod",
        "bare",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "bare"},
            "spec": {
                "containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": "8"}}}]
            },
        },
    )
    # Also a plain A3 pool: the pod may land there, so no wiring can be asked.
    assert run(RULE, [gke_cluster(), pool("a3-megagpu-8g", 8), pool("a3-megagpu-8g", 0, "plain"), bare]).clean
    assert run(RULE, [gke_cluster(), pool("a3-megagpu-8g", 0), bare]).clean
    assert not run(RULE, [gke_cluster(), pool("a3-megagpu-8g", 8), bare]).clean
