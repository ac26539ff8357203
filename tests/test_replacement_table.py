"""The replacement table is complete and decides what the plan diff calls a replacement
(issue 28, item 3).

Every input path of every resource in the recorded plan of every repo stack (``Pulumi.*.yaml``,
including stacks added later) must be classified by the providers' facts
(:mod:`preview.replacement_facts`: terraform-provider-google-beta's ForceNew schema, derived per
path; pulumi-kubernetes' replace-on-change table).  And the facts decide: a change of prod's
``privateClusterConfig.masterIpv4CidrBlock`` (ForceNew in ``resource_container_cluster.go``) is a
replacement, which the protected prod cluster refuses.
"""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from preview.harness import RunResult
from preview.plan import plan_document
from preview.plan_diff import diff_plans, render_changes
from preview.replacements import (
    CLUSTER,
    classify,
    gcp_facts,
    input_paths,
    replacing_paths,
    unclassified_paths,
)
from tests.stack_runner import ROOT, config_value, run_stack, unedited_run

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

STACKS = sorted(
    p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in Path(ROOT).glob("Pulumi.*.yaml")
)
ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"


@cache
def stack(name: str) -> RunResult:
    return unedited_run(name)


@pytest.mark.parametrize("name", STACKS)
def test_every_input_path_of_the_stack_is_classified(name: str) -> None:
    missing = {
        f"{r.type} {r.name}: {path}"
        for r in stack(name).resources
        if r.custom
        for path in unclassified_paths(r.type, r.inputs)
    }
    assert not missing, sorted(missing)[:40]


def test_a_type_without_facts_is_reported_unclassified() -> None:
    """The completeness check can fail: an undeclared type, or a path the schema lacks."""
    assert unclassified_paths("gcp:sql/databaseInstance:DatabaseInstance", {"name": "x"}) == ["name"]
    assert unclassified_paths(CLUSTER, {"name": "c", "notAnInput": {"x": 1}}) == [
        "notAnInput",
        "notAnInput.x",
    ]


def test_the_cluster_facts_cite_the_provider_per_path() -> None:
    cidr = classify(CLUSTER, "privateClusterConfig.masterIpv4CidrBlock")
    subnet = classify(CLUSTER, "privateClusterConfig.privateEndpointSubnetwork")
    assert cidr is not None and cidr.action == "replace"
    assert "resource_container_cluster.go" in cidr.source
    assert cidr.source.endswith("google_container_cluster.private_cluster_config.master_ipv4_cidr_block")
    assert subnet is not None and subnet.action == "replace"
    # What tenants and operators can still change in place: versions, autoscaling, labels.
    for path in ("minMasterVersion", "releaseChannel.channel", "resourceLabels", "nodeConfig.machineType"):
        fact = classify(CLUSTER, path)
        assert fact is not None and fact.action == "update", path


def test_conditional_replacements_follow_the_providers_condition() -> None:
    """``customdiff.ForceNewIfChange("enable_l4_ilb_subsetting", isBeenEnabled)``: only turning
    it off replaces."""
    assert replacing_paths(CLUSTER, {"enableL4IlbSubsetting": False}, {"enableL4IlbSubsetting": True}) == []
    assert replacing_paths(CLUSTER, {"enableL4IlbSubsetting": True}, {"enableL4IlbSubsetting": False}) == [
        "enableL4IlbSubsetting"
    ]
    subnet = "gcp:compute/subnetwork:Subnetwork"
    assert gcp_facts()[subnet]["ipCidrRange"].condition == "cidr-not-expanded"
    assert replacing_paths(subnet, {"ipCidrRange": "10.0.0.0/24"}, {"ipCidrRange": "10.0.0.0/20"}) == []
    assert replacing_paths(subnet, {"ipCidrRange": "10.0.0.0/20"}, {"ipCidrRange": "10.0.0.0/24"}) == [
        "ipCidrRange"
    ]


def test_a_role_bindings_role_ref_is_replaced_its_subjects_updated() -> None:
    old: dict[str, Any] = {
        "metadata": {"name": "b"},
        "roleRef": {"kind": "Role", "name": "a"},
        "subjects": [{"name": "u"}],
    }
    new = copy.deepcopy(old)
    new["subjects"] = [{"name": "v"}]
    assert replacing_paths(ROLE_BINDING, old, new) == []
    new["roleRef"]["name"] = "b"
    assert replacing_paths(ROLE_BINDING, old, new) == ["roleRef"]


def _plan(result: RunResult, name: str) -> dict[str, Any]:
    return plan_document("gpu-batch", name, result.resources, result.outputs)


def test_prods_master_cidr_change_is_a_refused_replacement() -> None:
    cluster = copy.deepcopy(config_value("prod", "gpu-batch:cluster"))
    assert cluster["masterIpv4CidrBlock"] == "172.16.0.32/28"
    cluster["masterIpv4CidrBlock"] = "172.16.0.48/28"
    changes = diff_plans(
        _plan(stack("prod"), "prod"), _plan(run_stack("prod", {"gpu-batch:cluster": cluster}), "prod")
    )
    (replaced,) = [c for c in changes if c.type == CLUSTER]
    assert replaced.action == "replace"
    assert replaced.paths == ("privateClusterConfig.masterIpv4CidrBlock",)
    assert replaced.blocking
    text = "\n".join(render_changes(changes, "main"))
    assert "**replace** `gcp:container/cluster:Cluster`" in text and "refused" in text


def test_input_paths_go_through_lists_without_indices() -> None:
    inputs = {"a": [{"b": 1}, {"c": {"d": 2}}], "e": "x"}
    assert sorted(input_paths(inputs)) == ["a", "a.b", "a.c", "a.c.d", "e"]


def test_an_immutable_custom_resource_field_must_be_recreated() -> None:
    """Moving a team's LocalQueue to another ClusterQueue changes ``spec.clusterQueue``, which
    Kueue's CRD makes immutable (CEL ``self == oldSelf``): the update would be refused, so the diff
    shows the object as one to delete and create again, and asks to drain it first."""
    teams = copy.deepcopy(config_value("prod", "gpu-batch:teams"))
    (research,) = [t for t in teams if t["name"] == "research"]
    research["clusterQueue"] = "research-h100"
    after = run_stack("prod", {"gpu-batch:teams": teams})
    changes = diff_plans(_plan(stack("prod"), "prod"), _plan(after, "prod"))
    (moved,) = [c for c in changes if c.name == "localqueue-research-default"]
    assert moved.action == "replace" and any(p.startswith("spec.clusterQueue") for p in moved.paths)
    assert moved.needs_drain
