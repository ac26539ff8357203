"""Kueue 0.19's CRDs refuse some updates with transition rules (CEL on ``oldSelf``): the plan diff
shows those changes as replacements, derived from the pinned CRDs (issue 29 #5)."""

from __future__ import annotations

from typing import Any

from preview.plan_diff import diff_plans

TOPOLOGY = "kubernetes:kueue.x-k8s.io/v1beta2:Topology"
FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"


def plan(type_token: str, inputs: dict[str, Any]) -> dict[str, Any]:
    name = inputs["metadata"]["name"]
    return {
        "resources": [
            {
                "urn": f"urn:pulumi:s::p::{type_token}::{name}",
                "type": type_token,
                "name": name,
                "inputs": inputs,
            }
        ]
    }


def topology(*labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Topology",
        "metadata": {"name": "gke-default"},
        "spec": {"levels": [{"nodeLabel": x} for x in labels]},
    }


def flavor(pool: str, topology_name: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"nodeLabels": {"cloud.google.com/gke-nodepool": pool}}
    if topology_name:
        spec["topologyName"] = topology_name
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": "f"},
        "spec": spec,
    }


def test_changing_a_topologys_levels_is_a_replacement() -> None:
    old = topology("cloud.google.com/gce-topology-block", "kubernetes.io/hostname")
    new = topology(
        "cloud.google.com/gce-topology-block", "cloud.google.com/gce-topology-host", "kubernetes.io/hostname"
    )
    (change,) = diff_plans(plan(TOPOLOGY, old), plan(TOPOLOGY, new))
    assert change.action == "replace"
    assert change.paths == ("spec.levels: field is immutable",)


def test_a_tas_flavors_node_labels_are_immutable_a_plain_flavors_are_not() -> None:
    (tas,) = diff_plans(plan(FLAVOR, flavor("a", "gke-default")), plan(FLAVOR, flavor("b", "gke-default")))
    assert tas.action == "replace" and tas.paths == (
        "spec: nodeLabels are immutable when topologyName is set",
    )
    (plain,) = diff_plans(plan(FLAVOR, flavor("a", None)), plan(FLAVOR, flavor("b", None)))
    assert plain.action == "update"
    # Turning TAS on for a plain flavor is allowed (the rules read oldSelf.topologyName).
    (turned_on,) = diff_plans(plan(FLAVOR, flavor("a", None)), plan(FLAVOR, flavor("a", "gke-default")))
    assert turned_on.action == "update"
