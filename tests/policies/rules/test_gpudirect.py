"""GPUDirect pack rules: the example stack (Pulumi.gpudirect.yaml, run by the real program) is
clean, and one mutation per rule fires exactly that rule among the GPUDirect rules."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest
from gpu_batch_policy.primitives.values import plain

from tests.gpudirect_workloads import ray_gang
from tests.policies.pack_harness import UNKNOWN, Res, run, run_together
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import DELETE, gke_cluster, k8s, patch
from tests.stack_runner import run_stack, unedited_run

RULES = (
    "gke-multi-networking-cluster",
    "gke-gpudirect-nic-count",
    "gke-roce-network-zone",
    "gke-network-param-set-exists",
    "gke-gpudirect-version",
)
POOL = "gcp:container/nodePool:NodePool"
CLUSTER = "gcp:container/cluster:Cluster"
COMPUTE_NETWORK = "gcp:compute/network:Network"


@functools.cache
def _stack() -> tuple[Res, ...]:
    result = unedited_run("gpudirect")
    return tuple(Res(r.type, r.name, plain(r.inputs), r.urn) for r in result.resources)


def stack() -> list[Res]:
    return [Res(r.type, r.name, dict(r.props), r.urn) for r in _stack()]


def findings(resources: list[Res], config: dict[str, Any] | None = None) -> dict[str, list[str]]:
    judged = run_together([get_policy(name) for name in RULES], resources, config)
    return {name: result.messages for name, result in judged.items()}


def _edit(resources: list[Res], match: Callable[[Res], bool], path: str, value: Any) -> list[Res]:
    hits = [r for r in resources if match(r)]
    assert hits, "the mutation matched nothing"
    target = hits[0]
    return [patch(r, path, value) if r is target else r for r in resources]


def _pool(name: str) -> Callable[[Res], bool]:
    return lambda r: r.type == POOL and r.props.get("name") == name


def test_example_stack_is_clean_and_wired() -> None:
    resources = stack()
    assert all(not found for found in findings(resources, {"closedWorld": True}).values())
    mega = next(r for r in resources if _pool("a3mega-tcpxo")(r))
    ultra = next(r for r in resources if _pool("a3ultra-rdma")(r))
    assert len(mega.props["networkConfig"]["additionalNodeNetworkConfigs"]) == 8
    assert len(ultra.props["networkConfig"]["additionalNodeNetworkConfigs"]) == 9
    cluster = next(r for r in resources if r.type == CLUSTER)
    assert cluster.props["enableMultiNetworking"] is True
    assert cluster.props["datapathProvider"] == "ADVANCED_DATAPATH"
    names = {
        kind: sorted(
            r.props["metadata"]["name"]
            for r in resources
            if r.type == f"kubernetes:networking.gke.io/v1:{kind}"
        )
        for kind in ("Network", "GKENetworkParamSet")
    }
    # cluster-toolkit's names: vpc1..8 (gke-a3-megagpu's k8s_network_names, Google's TCPXO test
    # pods), gvnic-1 and rdma-0..7 (gke-a3-ultragpu, the gke-cluster defaults).
    expected = sorted([f"vpc{i}" for i in range(1, 9)] + ["gvnic-1"] + [f"rdma-{i}" for i in range(8)])
    assert names == {"Network": expected, "GKENetworkParamSet": expected}
    daemonsets = {r.props["metadata"]["name"] for r in resources if r.type == "kubernetes:apps/v1:DaemonSet"}
    assert daemonsets == {"nccl-tcpxo-installer", "device-injector", "nccl-rdma-installer"}


MUTATIONS: list[tuple[str, Callable[[Res], bool], str, Any, str]] = [
    (
        "gke-multi-networking-cluster",
        lambda r: r.type == CLUSTER,
        "enableMultiNetworking",
        DELETE,
        "no multi-networking",
    ),
    (
        "gke-multi-networking-cluster",
        lambda r: r.type == CLUSTER,
        "datapathProvider",
        "LEGACY_DATAPATH",
        "needs GKE Dataplane V2",
    ),
    (
        "gke-gpudirect-nic-count",
        _pool("a3mega-tcpxo"),
        "networkConfig.additionalNodeNetworkConfigs",
        [{"network": "gpu-batch-train-gpunet-0", "subnetwork": "gpu-batch-train-gpunet-0-subnet"}] * 4,
        "has 8 GPU NICs",
    ),
    (
        "gke-roce-network-zone",
        _pool("a3ultra-rdma"),
        "nodeLocations",
        ["us-central1-b"],
        "us-central1-a-vpc-roce",
    ),
    (
        "gke-network-param-set-exists",
        lambda r: (
            r.type == "kubernetes:networking.gke.io/v1:Network" and r.props["metadata"]["name"] == "rdma-3"
        ),
        "spec.parametersRef.name",
        "rdma-33",
        "GKENetworkParamSet 'rdma-33'",
    ),
    (
        "gke-gpudirect-version",
        lambda r: r.type == CLUSTER,
        "minMasterVersion",
        "1.32.2-gke.1652000",
        "needs GKE 1.32.11-gke.1174000",
    ),
]


@pytest.mark.parametrize(
    ("rule", "match", "path", "value", "expected"), MUTATIONS, ids=[m[0] + ":" + m[2] for m in MUTATIONS]
)
def test_each_mutation_fires_exactly_its_rule(
    rule: str, match: Callable[[Res], bool], path: str, value: Any, expected: str
) -> None:
    found = findings(_edit(stack(), match, path, value), {"closedWorld": True})
    fired = {name for name, messages in found.items() if messages}
    assert fired == {rule}, found
    assert any(expected in m for m in found[rule]), found[rule]


def test_param_set_missing_in_an_open_world_is_not_in_stack_when_none_declared() -> None:
    network = k8s(
        "networking.gke.io/v1",
        "Network",
        "gvnic-1",
        spec={
            "type": "Device",
            "parametersRef": {"group": "networking.gke.io", "kind": "GKENetworkParamSet", "name": "gvnic-1"},
        },
    )
    result = run(get_policy("gke-network-param-set-exists"), [network])
    assert not result.violations
    listed = run(
        get_policy("gke-network-param-set-exists"),
        [network],
        {"externalObjects": [{"kind": "GKENetworkParamSet", "name": "gvnic-1"}]},
    )
    assert listed.clean


def a3_pool(networks: Any = None) -> Res:
    """An A3 Mega pool "p" of gpu-cluster, with ``additionalNodeNetworkConfigs`` when given."""
    props: dict[str, Any] = {
        "name": "p",
        "cluster": "gpu-cluster",
        "nodeConfig": {"machineType": "a3-megagpu-8g"},
    }
    if networks is not None:
        props["networkConfig"] = {"additionalNodeNetworkConfigs": networks}
    return Res(POOL, "p", props)


def test_unknown_networks_are_cannot_check_not_findings() -> None:
    pool = a3_pool(UNKNOWN)
    result = run(get_policy("gke-multi-networking-cluster"), [gke_cluster(), pool])
    assert not result.violations and result.cannot_check is not None


def test_plain_pools_and_clusters_are_not_judged() -> None:
    pool = a3_pool()
    for name in RULES:
        assert not run(get_policy(name), [gke_cluster(), pool]).violations, name


def test_multi_networking_alone_still_needs_dataplane_v2() -> None:
    cluster = gke_cluster(enableMultiNetworking=True)
    messages = run(get_policy("gke-multi-networking-cluster"), [cluster]).messages
    assert len(messages) == 1 and "Dataplane V2" in messages[0]
    fixed = gke_cluster(enableMultiNetworking=True, datapathProvider="ADVANCED_DATAPATH")
    assert run(get_policy("gke-multi-networking-cluster"), [fixed]).clean


def test_version_floor_newer_minor_passes_older_minor_fails() -> None:
    pool = a3_pool([{"network": "n", "subnetwork": "s"}] * 8)
    rule = get_policy("gke-gpudirect-version")
    assert run(rule, [gke_cluster(minMasterVersion="1.33.1-gke.100"), pool]).clean
    assert run(rule, [gke_cluster(minMasterVersion="1.32.11-gke.1174000"), pool]).clean
    assert run(rule, [gke_cluster(minMasterVersion="1.27.16-gke.9999999"), pool]).violations
    assert run(rule, [gke_cluster(minMasterVersion="1.31.14-gke.1242999"), pool]).violations


def test_a_ray_gang_on_the_example_stack_end_to_end() -> None:
    """Through the real program: a RayJob whose 2 x 8-GPU workers require one host is never
    admitted (a host is one 8-GPU node), and its GPU pods, landing only on GPUDirect-TCPXO nodes,
    carry the wiring of Google's TCPXO NCCL test Pod, so the wiring rule passes."""
    result = run_stack("gpudirect", {"gpu-batch:workloads": ray_gang(mode="required", level="host")})
    resources = [Res(r.type, r.name, plain(r.inputs), r.urn) for r in result.resources]
    fits = run(get_policy("kueue-tas-gang-fits-domain"), resources)
    assert (
        len(fits.violations) == 1
        and "needs 16 GPUs within one cloud.google.com/gce-topology-host" in fits.messages[0]
    )
    assert run(get_policy("gke-gpudirect-pod-wiring"), resources).clean
    assert run(get_policy("kueue-tas-podset-annotations"), resources).clean
