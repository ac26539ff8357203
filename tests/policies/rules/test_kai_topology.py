"""``kai-topology-annotations``: KAI v0.17.0 never places a pod group whose topology annotations
name a missing Topology or level, put the preferred level above the required one, or (Ray groups)
set a placement without ``kai.scheduler/topology`` (ray_grouper.go getTemplateTopologyConstraints;
topology job_filtering.go subSetNodesFn / calculateRelevantDomainLevels).  One fixture fires
exactly this rule; the corrected one passes."""

from __future__ import annotations

from typing import Any

from gpu_batch_policy.facts.kai.topology import PREFERRED, REQUIRED, TOPOLOGY
from gpu_batch_policy.facts.tas.levels import BLOCK, HOST, HOSTNAME, SUBBLOCK

from tests.policies.pack_harness import Res, run, run_all
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import k8s

RULE = get_policy("kai-topology-annotations")


def kai_topology(name: str = "gke-default") -> Res:
    levels = [
        {"nodeLabel": BLOCK, "alias": "block"},
        {"nodeLabel": SUBBLOCK},
        {"nodeLabel": HOST},
        {"nodeLabel": HOSTNAME},
    ]
    return k8s("kai.scheduler/v1alpha1", "Topology", name, spec={"levels": levels})


def ray_cluster(group_notes: dict[str, str], top: dict[str, str] | None = None) -> Res:
    res = k8s(
        "ray.io/v1",
        "RayCluster",
        "train",
        namespace="team-a",
        labels={"kai.scheduler/queue": "team-a"},
        spec={
            "headGroupSpec": {"template": {"spec": {"containers": [{"name": "h", "image": "ray"}]}}},
            "workerGroupSpecs": [
                {
                    "groupName": "gpu",
                    "replicas": 2,
                    "template": {
                        "metadata": {"annotations": group_notes},
                        "spec": {"containers": [{"name": "w", "image": "ray"}]},
                    },
                }
            ],
        },
    )
    if top:
        res.props["metadata"]["annotations"] = top
    return res


def messages(*resources: Res) -> list[str]:
    return run(RULE, list(resources)).messages


def test_a_level_the_topology_lacks_is_refused_and_a_real_one_passes() -> None:
    bad = messages(kai_topology(), ray_cluster({TOPOLOGY: "gke-default", REQUIRED: "rack"}))
    assert len(bad) == 1 and "workerGroupSpecs[0]" in bad[0] and "rack is not a level" in bad[0]
    # nodeLabel or alias both name a level.
    assert messages(kai_topology(), ray_cluster({TOPOLOGY: "gke-default", REQUIRED: BLOCK})) == []
    assert messages(kai_topology(), ray_cluster({TOPOLOGY: "gke-default", REQUIRED: "block"})) == []


def test_a_missing_topology_name_or_object() -> None:
    found = messages(kai_topology(), ray_cluster({REQUIRED: BLOCK}))
    assert len(found) == 1 and "podgrouper refuses the group" in found[0]
    found = messages(kai_topology(), ray_cluster({TOPOLOGY: "gke-defualt", REQUIRED: BLOCK}))
    assert len(found) == 1 and "Requested topology gke-defualt does not exist" in found[0]
    # No KAI Topology in the stack: names and levels are not judged (another stack may own it).
    assert messages(ray_cluster({TOPOLOGY: "gke-default", REQUIRED: "rack"})) == []


def test_preferred_above_required_and_top_owner_annotations() -> None:
    notes = {TOPOLOGY: "gke-default", REQUIRED: HOST, PREFERRED: BLOCK}
    found = messages(kai_topology(), ray_cluster({}, top=notes))
    assert len(found) == 1 and found[0].startswith("RayCluster") and "is above" in found[0]
    good = {TOPOLOGY: "gke-default", REQUIRED: BLOCK, PREFERRED: HOST}
    assert messages(kai_topology(), ray_cluster({}, top=good)) == []


def test_not_a_kai_workload_is_not_judged() -> None:
    res = ray_cluster({TOPOLOGY: "x", REQUIRED: "rack"})
    res.props["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "lq"}
    assert messages(kai_topology(), res) == []


def test_the_fixture_fires_exactly_this_rule() -> None:
    resources: list[Any] = [kai_topology(), ray_cluster({TOPOLOGY: "gke-default", REQUIRED: "rack"})]
    fired = {name for name, result in run_all(resources).items() if result.violations}
    assert "kai-topology-annotations" in fired
    clean = [kai_topology(), ray_cluster({TOPOLOGY: "gke-default", REQUIRED: BLOCK})]
    assert fired - {name for name, result in run_all(clean).items() if result.violations} == {
        "kai-topology-annotations"
    }


def test_a_topology_whose_levels_are_unknown_yet_is_not_judged() -> None:
    unknown = kai_topology()
    unknown.props["spec"]["levels"][0]["alias"] = (
        "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # the engine's unknown
    )
    assert messages(unknown, ray_cluster({TOPOLOGY: "gke-default", REQUIRED: "rack"})) == []
    # ...but another name is still a Topology the stack does not declare.
    assert len(messages(unknown, ray_cluster({TOPOLOGY: "other", REQUIRED: "rack"}))) == 1
