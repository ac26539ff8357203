"""Every cluster of every repo stack isolates its team namespaces (issue 45).

"Complete, not sampled": the stacks are every ``Pulumi.*.yaml`` of the repository (a glob), so a
new stack is covered without touching this file.  Each runs through the real program
(``tests/stack_runner.py``); a Kubernetes object's cluster is the GKE cluster its provider's
kubeconfig depends on (as ``stacks.compose`` wires each provider), read from the recorded
registrations, not from the pack, so the test does not share the rule's reading.

On each cluster: every team namespace (one holding a LocalQueue or a Ray workload, or a
``gpu-batch/team`` Namespace) needs a NetworkPolicy isolating all its pods for ingress, and the
cluster needs Dataplane V2 (``datapathProvider: ADVANCED_DATAPATH``), without which GKE enforces
none (GKE docs, concepts/dataplane-v2).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from gpu_batch_policy.primitives.values import plain

from preview.harness import RunResult
from preview.plan_diff import diff_plans
from preview.records import RecordedResource
from tests.netpol_eval import Cluster, Pod
from tests.stack_runner import ROOT, config_value, run_stack, unedited_run

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

STACKS = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in ROOT.glob("Pulumi.*.yaml"))
GKE = "gcp:container/cluster:Cluster"
NETPOL = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
TEAM_LABEL = "gpu-batch/team"
HOLDER_KINDS = ("LocalQueue", "RayJob", "RayCluster", "RayService")
NAMESPACE_KINDS = ("kubernetes:core/v1:Namespace", "kubernetes:core/v1:NamespacePatch")
DASHBOARD, GCS = 8265, 6379


def cluster_of(result: RunResult) -> dict[str, str]:
    """Kubernetes provider URN -> the GKE cluster URN its kubeconfig (or dependencies) names."""
    clusters = {r.urn for r in result.resources if r.type == GKE}
    out: dict[str, str] = {}
    for r in result.resources:
        if r.type.startswith("pulumi:providers:kubernetes"):
            deps = set(r.dependencies) | {u for us in r.property_dependencies.values() for u in us}
            (linked,) = deps & clusters or {""}
            out[r.urn] = linked
    return out


def provider_urn(r: RecordedResource) -> str:
    return r.provider.rsplit("::", 1)[0] if r.provider else ""


def per_cluster(result: RunResult) -> dict[str, dict[str, Any]]:
    """Per GKE cluster URN: its inputs, team namespaces and default-deny namespaces."""
    links = cluster_of(result)
    out: dict[str, dict[str, Any]] = {
        r.urn: {"inputs": r.inputs, "teams": set(), "denied": set()}
        for r in result.resources
        if r.type == GKE
    }
    for r in result.resources:
        if not r.type.startswith("kubernetes:"):
            continue
        gke = links.get(provider_urn(r)) or (next(iter(out)) if len(out) == 1 else "")
        assert gke, f"{r.urn}: no GKE cluster its provider reaches"
        meta = plain(r.inputs).get("metadata") or {}
        kind = r.type.rsplit(":", 1)[-1]
        if kind in HOLDER_KINDS or (r.type in NAMESPACE_KINDS and TEAM_LABEL in (meta.get("labels") or {})):
            out[gke]["teams"].add(meta["namespace"] if kind in HOLDER_KINDS else meta["name"])
        if r.type == NETPOL:
            spec = plain(r.inputs)["spec"]
            if spec["podSelector"] == {} and "Ingress" in spec.get("policyTypes", ["Ingress"]):
                out[gke]["denied"].add(meta["namespace"])
    return out


@pytest.mark.parametrize("stack", STACKS)
def test_every_cluster_with_teams_has_dataplane_v2_and_every_team_default_deny(stack: str) -> None:
    clusters = per_cluster(unedited_run(stack))
    assert clusters, f"{stack}: no GKE cluster"
    for urn, c in clusters.items():
        if not c["teams"]:
            continue
        name = urn.rsplit("::", 1)[-1]
        assert c["inputs"].get("datapathProvider") == "ADVANCED_DATAPATH", (
            f"{stack}: {name} lacks Dataplane V2"
        )
        assert c["teams"] <= c["denied"], (
            f"{stack}: {name}: no default deny in {sorted(c['teams'] - c['denied'])}"
        )


def test_the_walk_covers_the_multiregion_workers() -> None:
    """The walk sees three clusters with teams in multiregion, so a worker cannot slip through."""
    clusters = per_cluster(unedited_run("multiregion"))
    assert sorted(u.rsplit("::", 1)[-1] for u, c in clusters.items() if c["teams"]) == [
        "mk-manager-cluster",
        "mk-worker-europe-west4-cluster",
        "mk-worker-us-east4-cluster",
    ]


# --- a worker cluster: another team's pod cannot reach a team's Ray head ---------------------------


def _worker_net(result: RunResult, worker: str) -> Cluster:
    links = cluster_of(result)
    (gke,) = [r.urn for r in result.resources if r.type == GKE and r.name == f"mk-worker-{worker}-cluster"]
    labels: dict[str, dict[str, str]] = {}
    policies: list[dict[str, Any]] = []
    for r in result.resources:
        if links.get(provider_urn(r)) != gke:
            continue
        if r.type in NAMESPACE_KINDS:
            meta = plain(r.inputs)["metadata"]
            labels[meta["name"]] = dict(meta.get("labels") or {})
        elif r.type == NETPOL:
            policies.append(plain(r.inputs))
    return Cluster(labels, policies)


@pytest.fixture(scope="module")
def two_teams() -> RunResult:
    """multiregion with a second team on the same queue and a RayJob of research's: MultiKueue
    creates the job on a worker in the same namespace with the same spec (Kueue v0.19.2
    ``site/content/en/docs/concepts/multikueue.md``), so the worker's head carries its labels."""
    teams = config_value("multiregion", "gpu-batch:teams")
    applied = {
        **copy.deepcopy(teams[0]),
        "name": "applied",
        "members": {"groups": ["ml-applied@example.com"]},
    }
    workload = {
        "name": "research-trainer",
        "template": "pytorch-text-classifier",
        "team": "research",
        "scheduler": "kueue",
    }
    return run_stack("multiregion", {"gpu-batch:teams": [*teams, applied], "gpu-batch:workloads": [workload]})


def _head(result: RunResult) -> Pod:
    (job,) = [plain(r.inputs) for r in result.resources if r.type == "kubernetes:ray.io/v1:RayJob"]
    template = job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]
    # KubeRay v1.7.0 ray-operator/controllers/ray/common/pod.go: the head's labels.
    labels = {
        **(template.get("metadata", {}).get("labels") or {}),
        "ray.io/node-type": "head",
        "ray.io/cluster": job["metadata"]["name"],
    }
    return Pod(job["metadata"]["namespace"], "head", labels)


@pytest.mark.parametrize("worker", ["us-east4", "europe-west4"])
def test_another_teams_pod_cannot_reach_a_ray_head_on_a_worker(two_teams: RunResult, worker: str) -> None:
    net = _worker_net(two_teams, worker)
    head = _head(two_teams)
    assert head.namespace == "research"
    attacker = Pod("applied", "notebook", {"app": "x"})
    assert not net.allows(attacker, head, DASHBOARD) and not net.allows(attacker, head, GCS)
    assert net.allows(Pod("research", "worker", {"ray.io/node-type": "worker"}), head, GCS)
    # The evaluator can say yes: with no policies on the worker the same connection is allowed.
    assert Cluster(net.namespace_labels, []).allows(attacker, head, DASHBOARD)


def test_turning_dataplane_v2_on_for_a_worker_is_a_replacement_in_the_plan_diff() -> None:
    """``datapath_provider`` is ForceNew (terraform-provider-google resource_container_cluster.go;
    ``preview/replacement_facts/gcp.json``): the diff from a worker without Dataplane V2 to the
    stack as written replaces that worker's cluster and no other."""
    mk = config_value("multiregion", "gpu-batch:multiKueue")
    before = copy.deepcopy(mk)
    before["workers"][0]["cluster"]["dataplaneV2"] = False

    def plan(result: RunResult) -> dict[str, Any]:
        return {
            "resources": [
                {"urn": r.urn, "type": r.type, "name": r.name, "inputs": r.inputs} for r in result.resources
            ]
        }

    changes = diff_plans(
        plan(run_stack("multiregion", {"gpu-batch:multiKueue": before})), plan(unedited_run("multiregion"))
    )
    replaced = [(c.name, c.paths) for c in changes if c.action == "replace" and c.type == GKE]
    assert replaced == [(f"{mk['workers'][0]['cluster']['name']}-cluster", ("datapathProvider",))]
