"""KAI stacks get KAI's own Topology (kai.scheduler/v1alpha1) per GPU family GKE labels, and a
KAI workload's topology request becomes KAI's annotations on it (kai-scheduler v0.17.0
ray_grouper.go getTemplateTopologyConstraints); the pack's kai-topology-annotations and the CRD
(validated by the pack's custom-resource rule) accept what the stack renders."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from gpu_batch_policy.facts.kai.topology import PREFERRED, REQUIRED, TOPOLOGY
from gpu_batch_policy.primitives.values import plain

from stacks.errors import ConfigError
from tests.policies.pack_harness import Res, run
from tests.policies.pack_harness import policy as get_policy
from tests.stack_runner import config_value, run_stack

POOLS = "gpu-batch:gpuPools"
WORKLOADS = "gpu-batch:workloads"
A3MEGA = {"name": "a3mega", "machineType": "a3-megagpu-8g", "provisioning": "on-demand", "maxNodes": 2}


def _edits(topology: dict[str, Any] | None, pools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    base_pools = copy.deepcopy(config_value("kai", POOLS))
    workloads = copy.deepcopy(config_value("kai", WORKLOADS))
    group: dict[str, Any] = {"groupName": "gpu", "replicas": 2, "cpu": "1", "memory": "2Gi", "gpu": 1}
    if topology is not None:
        group["topology"] = topology
    workloads.append(
        {
            "name": "dist",
            "kind": "RayCluster",
            "team": "team-a",
            "scheduler": "kai",
            "image": "rayproject/ray:2.46.0-gpu",
            "head": {"cpu": "1", "memory": "2Gi"},
            "workerGroups": [group],
        }
    )
    return {POOLS: [*base_pools, *(pools if pools is not None else [A3MEGA])], WORKLOADS: workloads}


def _resources(edits: dict[str, Any]) -> list[Res]:
    return [Res(r.type, r.name, plain(r.inputs), r.urn) for r in run_stack("kai", edits).resources]


def test_a_kai_stack_with_an_a3_pool_gets_a_kai_topology_and_annotations() -> None:
    resources = _resources(_edits({"mode": "required", "level": "block"}))
    (topology,) = [r for r in resources if r.type == "kubernetes:kai.scheduler/v1alpha1:Topology"]
    assert topology.props["metadata"]["name"] == "gke-default"
    assert [level.get("alias") for level in topology.props["spec"]["levels"]] == [
        "block",
        "subblock",
        "host",
        "hostname",
    ]
    (cluster,) = [
        r
        for r in resources
        if r.type == "kubernetes:ray.io/v1:RayCluster" and r.props["metadata"]["name"] == "dist"
    ]
    notes = cluster.props["spec"]["workerGroupSpecs"][0]["template"]["metadata"]["annotations"]
    assert notes == {TOPOLOGY: "gke-default", REQUIRED: "block"}
    assert run(get_policy("kai-topology-annotations"), resources).clean
    # Validated against KAI v0.17.0's own CRD (kai.scheduler_topologies.yaml: CEL included).
    schema = run(get_policy("custom-resource-schema"), [topology])
    assert schema.clean and not schema.cannot_check, (schema.messages, schema.cannot_check)
    broken = Res(topology.type, topology.name, copy.deepcopy(topology.props), topology.urn)
    broken.props["spec"]["levels"].reverse()  # hostname not last: the CRD's CEL refuses it
    assert not run(get_policy("custom-resource-schema"), [broken]).clean


def test_the_l4_only_kai_stack_renders_no_kai_topology() -> None:
    resources = _resources(_edits(None, pools=[]))
    assert not [r for r in resources if r.type == "kubernetes:kai.scheduler/v1alpha1:Topology"]


def test_preferred_becomes_kai_preferred_placement() -> None:
    resources = _resources(_edits({"mode": "preferred", "level": "host"}))
    (cluster,) = [
        r
        for r in resources
        if r.type == "kubernetes:ray.io/v1:RayCluster" and r.props["metadata"]["name"] == "dist"
    ]
    notes = cluster.props["spec"]["workerGroupSpecs"][0]["template"]["metadata"]["annotations"]
    assert notes == {TOPOLOGY: "gke-default", PREFERRED: "host"}


@pytest.mark.parametrize(
    ("topology", "pools", "expected"),
    [
        (
            {"mode": "required", "level": "nodepool"},
            None,
            "gpu-batch:workloads[2].workerGroups[0].topology.level: got 'nodepool', expected a level KAI accepts "
            "(kai.scheduler/topology-required-placement: nodepool is not a level",
        ),
        (
            {"mode": "required", "level": "block"},
            [],
            "gpu-batch:workloads[2].workerGroups[0].topology: got 'required', expected no value unless KAI runs one "
            "GPU family GKE labels",
        ),
        (
            {"mode": "required", "level": "block", "sliceLevel": "host", "sliceSize": 1},
            None,
            "gpu-batch:workloads[2].workerGroups[0].topology.sliceLevel: got 'host', expected no value: slices are "
            "Kueue TAS annotations",
        ),
    ],
)
def test_kai_request_mistakes_are_one_line(
    topology: dict[str, Any], pools: list[dict[str, Any]] | None, expected: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        run_stack("kai", _edits(topology, pools))
    assert expected in str(caught.value), str(caught.value)
