"""Kueue TAS rules: the webhook port against Kueue's own test cases, and one fixture per rule."""

from __future__ import annotations

from typing import Any

import pytest
from gpu_batch_policy.facts.tas import annotations as tas
from gpu_batch_policy.facts.tas.annotations import webhook_problems
from gpu_batch_policy.facts.tas.levels import BLOCK, HOST, HOSTNAME, TOPOLOGIES

from tests.policies.pack_harness import Res, run
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import (
    admission_check,
    cluster_queue,
    k8s,
    local_queue,
    provisioning_request_config,
)

POOL = "gcp:container/nodePool:NodePool"
C = tas.SLICE_CONSTRAINTS

# kubernetes-sigs/kueue v0.19.2 pkg/controller/jobframework/tas_validation_test.go
# TestValidateSliceRequiredTopologyConstraints (gate TASMultiLayerTopology on, 0.19's default):
# case name -> (annotations, wantErrNum).
KUEUE_CASES: dict[str, tuple[dict[str, str], int]] = {
    "valid: single constraint layer": (
        {tas.REQUIRED: "cloud.com/block", C: '[{"topology":"cloud.com/rack","size":16}]'},
        0,
    ),
    "valid: two constraint layers": (
        {
            tas.REQUIRED: "cloud.com/block",
            C: '[{"topology":"cloud.com/rack","size":16},{"topology":"kubernetes.io/hostname","size":4}]',
        },
        0,
    ),
    "valid: three constraint layers": (
        {
            tas.REQUIRED: "cloud.com/block",
            C: '[{"topology":"cloud.com/rack","size":16},{"topology":"cloud.com/sub-rack","size":4},'
            '{"topology":"kubernetes.io/hostname","size":2}]',
        },
        0,
    ),
    "invalid: not valid JSON": ({tas.REQUIRED: "cloud.com/block", C: "invalid-json"}, 1),
    "invalid: empty array": ({tas.REQUIRED: "cloud.com/block", C: "[]"}, 1),
    "invalid: more than 3 entries": (
        {
            tas.REQUIRED: "cloud.com/block",
            C: '[{"topology":"a","size":64},{"topology":"b","size":16},{"topology":"c","size":4},{"topology":"d","size":1}]',
        },
        1,
    ),
    "invalid: size less than 1": (
        {tas.REQUIRED: "cloud.com/block", C: '[{"topology":"cloud.com/rack","size":0}]'},
        1,
    ),
    "invalid: size does not divide parent": (
        {
            tas.REQUIRED: "cloud.com/block",
            C: '[{"topology":"cloud.com/rack","size":16},{"topology":"kubernetes.io/hostname","size":5}]',
        },
        1,
    ),
    "invalid: mutual exclusivity with podset-slice-required-topology": (
        {
            tas.REQUIRED: "cloud.com/block",
            tas.SLICE_REQUIRED: "cloud.com/rack",
            tas.SLICE_SIZE: "16",
            C: '[{"topology":"cloud.com/rack","size":16}]',
        },
        2,
    ),
    "invalid: with podset-group-name": (
        {
            tas.REQUIRED: "cloud.com/block",
            C: '[{"topology":"cloud.com/rack","size":16}]',
            tas.GROUP_NAME: "group1",
        },
        1,
    ),
    "invalid: duplicate topology labels": (
        {
            tas.REQUIRED: "cloud.com/block",
            C: '[{"topology":"cloud.com/rack","size":16},{"topology":"cloud.com/rack","size":4}]',
        },
        1,
    ),
}


@pytest.mark.parametrize("case", sorted(KUEUE_CASES))
def test_constraints_validation_matches_kueue(case: str) -> None:
    annotations, want = KUEUE_CASES[case]
    assert len(webhook_problems(annotations, None)) == want, webhook_problems(annotations, None)


@pytest.mark.parametrize(
    ("annotations", "count", "expected"),
    [
        ({tas.REQUIRED: BLOCK, tas.PREFERRED: BLOCK}, 4, "more than one topology annotation"),
        ({tas.REQUIRED: BLOCK, tas.UNCONSTRAINED: "true"}, 4, "more than one topology annotation"),
        ({tas.UNCONSTRAINED: "yes"}, 4, "must be a boolean value"),
        ({tas.REQUIRED: BLOCK, tas.SLICE_REQUIRED: HOST}, 4, "must be set when"),
        ({tas.REQUIRED: BLOCK, tas.SLICE_SIZE: "2"}, 4, "may not be set when"),
        (
            {tas.REQUIRED: BLOCK, tas.SLICE_REQUIRED: HOST, tas.SLICE_SIZE: "0"},
            4,
            "greater than or equal to 1",
        ),
        (
            {tas.REQUIRED: BLOCK, tas.SLICE_REQUIRED: HOST, tas.SLICE_SIZE: "8"},
            4,
            "must not be greater than pod set count 4",
        ),
        ({tas.REQUIRED: "bad label!"}, 4, "not a qualified name"),
        ({tas.GROUP_NAME: "12"}, 4, "must not be a number"),
    ],
)
def test_webhook_refusals(annotations: dict[str, str], count: int, expected: str) -> None:
    problems = webhook_problems(annotations, count)
    assert any(expected in p for p in problems), problems


def test_valid_requests_pass() -> None:
    for notes in (
        {tas.REQUIRED: BLOCK},
        {tas.PREFERRED: HOST, tas.SLICE_REQUIRED: HOSTNAME, tas.SLICE_SIZE: "1"},
        {tas.UNCONSTRAINED: "true"},
        {tas.REQUIRED: BLOCK, tas.SLICE_REQUIRED: HOST, tas.SLICE_SIZE: "4"},
    ):
        assert webhook_problems(notes, 4) == [], notes


# --- fixtures: a GKE pool, its TAS flavor and Topology, and a Job asking for a topology ----------


def pool(name: str = "a3mega", machine: str = "a3-megagpu-8g", **node_config: Any) -> Res:
    return Res(
        POOL,
        name,
        {
            "name": name,
            "cluster": "gpu-cluster",
            "nodeConfig": {
                "machineType": machine,
                "guestAccelerators": [{"type": "nvidia-h100-mega-80gb", "count": 8.0}],
                **node_config,
            },
            "autoscaling": {"totalMinNodeCount": 0.0, "totalMaxNodeCount": 4.0},
        },
    )


def topology(name: str = "gke-default") -> Res:
    return k8s(
        "kueue.x-k8s.io/v1beta2",
        "Topology",
        name,
        spec={"levels": [{"nodeLabel": x} for x in TOPOLOGIES[name]]},
    )


def flavor(pool_name: str = "a3mega", topology_name: str = "gke-default") -> Res:
    return k8s(
        "kueue.x-k8s.io/v1beta2",
        "ResourceFlavor",
        "tas",
        spec={"nodeLabels": {"cloud.google.com/gke-nodepool": pool_name}, "topologyName": topology_name},
    )


def job(annotations: dict[str, str], pods: int = 2, gpus: int = 8) -> Res:
    return k8s(
        "batch/v1",
        "Job",
        "train",
        namespace="team",
        labels={"kueue.x-k8s.io/queue-name": "lq"},
        spec={
            "parallelism": pods,
            "completions": pods,
            "template": {
                "metadata": {"annotations": annotations},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}
                    ],
                },
            },
        },
    )


def test_annotation_rule_fires_on_a_refused_template_and_passes_a_good_one() -> None:
    rule = get_policy("kueue-tas-podset-annotations")
    bad = run(rule, [pool(), topology(), flavor(), job({tas.REQUIRED: BLOCK, tas.PREFERRED: HOST})])
    assert len(bad.violations) == 1 and "more than one topology annotation" in bad.messages[0]
    assert run(rule, [pool(), topology(), flavor(), job({tas.REQUIRED: BLOCK})]).clean


def test_slice_level_above_the_podset_level_is_refused() -> None:
    rule = get_policy("kueue-tas-podset-annotations")
    result = run(
        rule, [topology(), job({tas.REQUIRED: HOST, tas.SLICE_REQUIRED: BLOCK, tas.SLICE_SIZE: "1"})]
    )
    assert any("is above the podset topology" in m for m in result.messages), result.messages


def test_topology_domains_rule_refuses_a_machine_gke_never_labels() -> None:
    rule = get_policy("kueue-tas-topology-domains")
    result = run(rule, [pool("l4", "g2-standard-96"), topology(), flavor("l4")])
    assert len(result.violations) == 1
    assert "no topology domains at level: cloud.google.com/gce-topology-block" in result.messages[0]
    assert run(rule, [pool(), topology(), flavor()]).clean
    # A hostname-only Topology works on any machine type.
    hostname_only = k8s(
        "kueue.x-k8s.io/v1beta2", "Topology", "nodes", spec={"levels": [{"nodeLabel": HOSTNAME}]}
    )
    assert run(rule, [pool("l4", "g2-standard-96"), hostname_only, flavor("l4", "nodes")]).clean


def test_a_required_gang_larger_than_one_host_is_never_admitted() -> None:
    rule = get_policy("kueue-tas-gang-fits-domain")
    too_big = run(rule, [pool(), topology(), flavor(), job({tas.REQUIRED: HOST}, pods=2, gpus=8)])
    assert len(too_big.violations) == 1 and "needs 16 GPUs within one" in too_big.messages[0]
    assert run(rule, [pool(), topology(), flavor(), job({tas.REQUIRED: HOST}, pods=1, gpus=8)]).clean
    # Preferred spreads; a block's size is the reservation's, not judged.
    assert run(rule, [pool(), topology(), flavor(), job({tas.PREFERRED: HOST}, pods=2)]).clean
    assert run(rule, [pool(), topology(), flavor(), job({tas.REQUIRED: BLOCK}, pods=64)]).clean


def test_compact_placement_on_flex_start_only_for_a3_ultra_and_a4() -> None:
    rule = get_policy("gke-compact-placement-flex-start")
    mega = pool(flexStart=True)
    mega.props["placementPolicy"] = {"type": "COMPACT"}
    result = run(rule, [mega])
    assert len(result.violations) == 1 and "a3-megagpu-8g" in result.messages[0]
    ultra = pool("ultra", "a3-ultragpu-8g", flexStart=True)
    ultra.props["placementPolicy"] = {"type": "COMPACT"}
    assert run(rule, [ultra]).clean
    plain = pool()
    plain.props["placementPolicy"] = {"type": "COMPACT"}
    assert run(rule, [plain]).clean


def test_required_topology_behind_a_provisioning_request_is_advisory() -> None:
    rule = get_policy("kueue-tas-required-with-provisioning")
    queue = [
        admission_check(),
        provisioning_request_config(),
        cluster_queue("cq", admissionChecksStrategy={"admissionChecks": [{"name": "dws"}]}),
        local_queue("lq", "team", "cq"),
    ]
    found = run(rule, [*queue, job({tas.REQUIRED: BLOCK})])
    assert len(found.violations) == 1 and "second pass" in found.messages[0]
    assert run(rule, [*queue, job({tas.PREFERRED: BLOCK})]).clean
    plain = [*queue[:2], cluster_queue("cq"), queue[3]]
    assert run(rule, [*plain, job({tas.REQUIRED: BLOCK})]).clean
