"""Team tenancy: namespaces, namespaced RBAC, and ClusterQueue selectors admitting only the
intended namespaces (wire form, under the mocks); config errors for team keys."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.kueue_config import MANAGED_NAMESPACE_LABEL
from components.tenancy import namespace_selector
from preview.harness import RunResult
from stacks.errors import ConfigError
from tests.stack_runner import config_value, custom_objects, named, of_type, run_stack, unedited_run

NAMESPACE = "kubernetes:core/v1:Namespace"
NAMESPACE_PATCH = "kubernetes:core/v1:NamespacePatch"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
ENFORCE = "pod-security.kubernetes.io/enforce"
ROLE = "kubernetes:rbac.authorization.k8s.io/v1:Role"
ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"
TEAMS = "gpu-batch:teams"


@pytest.fixture(scope="module")
def plans() -> dict[str, RunResult]:
    return {stack: unedited_run(stack) for stack in ("dev", "kai", "skypilot", "prod")}


def namespaces(result: RunResult) -> dict[str, dict[str, Any]]:
    return {r.inputs["metadata"]["name"]: r.inputs["metadata"] for r in of_type(result, NAMESPACE)}


def selectors(result: RunResult) -> dict[str, Any]:
    return {
        cq["metadata"]["name"]: cq["spec"].get("namespaceSelector")
        for cq in custom_objects(result, "ClusterQueue")
    }


def admits(selector: dict[str, Any] | None, namespace: str) -> bool:
    """Evaluate the only selector forms the stack writes: {}, or In on the name label."""
    if selector is None:
        return False
    if selector == {}:
        return True
    (expression,) = selector["matchExpressions"]
    assert expression["key"] == "kubernetes.io/metadata.name" and expression["operator"] == "In"
    return namespace in expression["values"]


class TestNamespacesAndRbac:
    def test_a_namespace_per_team(self, plans: dict[str, RunResult]) -> None:
        sky = namespaces(plans["skypilot"])
        for team in ("team1", "team2"):
            assert sky[team]["labels"]["gpu-batch/team"] == team

    def test_an_existing_namespace_is_not_created(self, plans: dict[str, RunResult]) -> None:
        # dev's team lives in `default`: managing it would delete it with the stack.
        assert "default" not in namespaces(plans["dev"])
        role = named(plans["dev"], "ml-role")
        assert role.inputs["metadata"]["namespace"] == "default"
        # ... but its labels are patched on (server-side apply of just those labels).
        (patched,) = of_type(plans["dev"], NAMESPACE_PATCH)
        assert patched.inputs["metadata"]["name"] == "default"
        assert patched.inputs["metadata"]["labels"][ENFORCE] == "baseline"

    def test_every_team_namespace_enforces_pod_security(self, plans: dict[str, RunResult]) -> None:
        for result in plans.values():
            for r in of_type(result, NAMESPACE) + of_type(result, NAMESPACE_PATCH):
                if "gpu-batch/team" in r.inputs["metadata"].get("labels", {}):
                    assert r.inputs["metadata"]["labels"][ENFORCE] in ("baseline", "restricted")

    def test_the_level_is_per_team_config(self) -> None:
        teams = config_value("skypilot", TEAMS)
        teams[0]["podSecurity"] = "restricted"
        result = run_stack("skypilot", {TEAMS: teams})
        assert namespaces(result)["team1"]["labels"][ENFORCE] == "restricted"
        assert namespaces(result)["team2"]["labels"][ENFORCE] == "baseline"
        teams[0]["podSecurity"] = "strict"
        with pytest.raises(ConfigError, match=r"gpu-batch:teams\[0\]\.podSecurity"):
            run_stack("skypilot", {TEAMS: teams})

    def test_strict_tenancy_in_an_existing_namespace_is_labelled_by_a_patch(self) -> None:
        """Issue 27 #6: a team with createNamespace: false under strict tenancy got no
        gpu-batch/kueue-managed label, so Kueue ignored its jobs (they ran outside every quota)."""
        teams = config_value("prod", TEAMS)
        teams[0]["namespace"] = "default"
        teams[0]["createNamespace"] = False
        result = run_stack("prod", {TEAMS: teams})
        (patched,) = of_type(result, NAMESPACE_PATCH)
        assert patched.inputs["metadata"]["name"] == "default"
        assert patched.inputs["metadata"]["labels"].items() >= MANAGED_NAMESPACE_LABEL.items()

    def test_strict_tenancy_namespaces_opt_in_to_kueue(self, plans: dict[str, RunResult]) -> None:
        prod = namespaces(plans["prod"])
        for team in ("research", "applied"):
            for key, value in MANAGED_NAMESPACE_LABEL.items():
                assert prod[team]["labels"][key] == value
        # The pod integration (skypilot) scopes Kueue's pod webhook to labelled team namespaces too
        # (issue 10 #9); a stack with neither (kai) sets no label.
        assert namespaces(plans["skypilot"])["team1"]["labels"].items() >= MANAGED_NAMESPACE_LABEL.items()
        if "kai" in plans:
            assert not any(
                set(MANAGED_NAMESPACE_LABEL) & set(ns.get("labels", {}))
                for ns in namespaces(plans["kai"]).values()
            )

    def test_members_may_submit_in_their_namespace_only(self, plans: dict[str, RunResult]) -> None:
        sky = plans["skypilot"]
        role = named(sky, "team1-role").inputs
        assert role["metadata"]["namespace"] == "team1"
        rules = {(tuple(r["apiGroups"]), tuple(r["resources"])): set(r["verbs"]) for r in role["rules"]}
        # skypilot runs no KubeRay: no Ray kinds (issue 10 #9); pods are Kueue-managed there.
        assert (("ray.io",), ("rayjobs", "rayclusters")) not in rules
        assert "create" in rules[(("batch",), ("jobs",))]
        assert "create" in rules[(("",), ("pods",))]
        assert rules[(("kueue.x-k8s.io",), ("localqueues", "workloads"))] == {"get", "list", "watch"}
        binding = named(sky, "team1-role-binding").inputs
        assert binding["metadata"]["namespace"] == "team1"
        assert binding["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": "team1-submitter",
        }
        assert binding["subjects"] == [
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "team1@example.com"}
        ]

    def test_roles_grant_only_what_the_teams_scheduler_manages(self, plans: dict[str, RunResult]) -> None:
        """Issue 19 #2: KAI schedules Pods and Jobs (held to kai-scheduler by the admission
        policy); under Kueue without the pod integration (prod) members only read/delete pods."""

        def verbs(result: RunResult, role: str) -> dict[str, set[str]]:
            return {
                res: set(r["verbs"]) for r in named(result, role).inputs["rules"] for res in r["resources"]
            }

        kai = verbs(plans["kai"], "team-a-role")
        assert {"create"} <= kai["pods"] and {"create"} <= kai["jobs"] and {"create"} <= kai["rayclusters"]
        prod = verbs(plans["prod"], "research-role")
        assert "create" not in prod["pods"] and "create" in prod["jobs"]

    def test_team_grants_are_namespaced(self, plans: dict[str, RunResult]) -> None:
        for result in plans.values():
            teams = {r.urn for r in result.resources if r.type == "gpu-batch:tenancy:Team"}
            assert teams
            grants = {r.type for r in result.resources if r.parent in teams} - {NAMESPACE, NAMESPACE_PATCH}
            # The queue admission policy is cluster-scoped but only ever refuses (issue 19).
            # NetworkPolicies only ever restrict who reaches the team's pods (issue 27).
            assert grants <= {ROLE, ROLE_BINDING, "gpu-batch:tenancy:QueueAdmission", NETWORK_POLICY}

    def test_no_members_no_binding(self) -> None:
        teams = config_value("skypilot", TEAMS)
        teams[1]["members"] = {}
        result = run_stack("skypilot", {TEAMS: teams})
        # The team bindings only: kueue-system's binding for GMP's collector (issue 30) is no team's.
        team_bindings = [
            r.name for r in of_type(result, ROLE_BINDING) if r.name.startswith(("team1-", "team2-"))
        ]
        assert team_bindings == ["team1-role-binding"]
        assert len([r for r in of_type(result, ROLE) if r.name.startswith(("team1-", "team2-"))]) == 2


class TestSelectors:
    def test_each_queue_admits_exactly_its_teams(self, plans: dict[str, RunResult]) -> None:
        for stack, teams in (("skypilot", ("team1", "team2")), ("prod", ("research", "applied"))):
            queues = selectors(plans[stack])
            lq_targets: dict[str, set[str]] = {}
            for lq in custom_objects(plans[stack], "LocalQueue"):
                lq_targets.setdefault(lq["metadata"]["namespace"], set()).add(lq["spec"]["clusterQueue"])
            for team in teams:
                for cq, selector in queues.items():
                    assert admits(selector, team) is (cq in lq_targets[team]), (stack, team, cq)
                assert not any(admits(s, "kube-system") or admits(s, "default") for s in queues.values())

    def test_all_namespaces_only_where_asked(self, plans: dict[str, RunResult]) -> None:
        assert config_value("dev", "gpu-batch:kueueQueues")["clusterQueues"][0]["admitNamespaces"] == "all"
        assert selectors(plans["dev"]) == {"cluster-queue": {}}
        for stack in ("skypilot", "prod"):
            assert all(selector not in (None, {}) for selector in selectors(plans[stack]).values())

    def test_a_queue_no_team_uses_admits_no_namespace(self) -> None:
        queues = config_value("prod", "gpu-batch:kueueQueues")
        lender = copy.deepcopy(queues["clusterQueues"][0])
        lender["name"] = "lender"
        queues["clusterQueues"].append(lender)
        result = run_stack("prod", {"gpu-batch:kueueQueues": queues})
        assert selectors(result)["lender"] is None  # omitted: Kueue admits no namespace

    def test_selector_helper(self) -> None:
        assert namespace_selector([]) is None
        assert namespace_selector(["b", "a", "b"]) == {
            "matchExpressions": [
                {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["a", "b"]}
            ]
        }


def team_errors(stack: str, teams: list[dict[str, Any]]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        run_stack(stack, {TEAMS: teams})
    return str(caught.value).splitlines()


class TestTeamErrors:
    def test_must_not_create_a_system_namespace(self) -> None:
        teams = config_value("dev", TEAMS)
        teams[0]["createNamespace"] = True
        assert team_errors("dev", teams) == [
            f"config error: {TEAMS}[0].createNamespace: got true, expected false: namespace default exists already "
            "and must not be deleted with the stack"
        ]

    def test_cluster_queue_must_exist(self) -> None:
        teams = config_value("prod", TEAMS)
        teams[1]["clusterQueue"] = "aplied-l4"
        assert team_errors("prod", teams) == [
            f"config error: {TEAMS}[1].clusterQueue: got 'aplied-l4', expected a ClusterQueue declared under "
            "gpu-batch:kueueQueues.clusterQueues (did you mean applied-l4?) "
            "(applied-h100, applied-l4, research-h100, research-l4)"
        ]

    def test_gpu_queues_must_name_a_cluster_queue(self) -> None:
        teams = config_value("prod", TEAMS)
        teams[0]["gpuQueues"]["h100"] = "research-h10"
        (line,) = team_errors("prod", teams)
        assert line.startswith(
            f"config error: {TEAMS}[0].gpuQueues.h100: got 'research-h10', expected a ClusterQueue declared "
            "under gpu-batch:kueueQueues.clusterQueues (did you mean research-h100?)"
        )

    def test_gpu_queues_may_not_redirect_the_local_queue(self) -> None:
        teams = config_value("prod", TEAMS)
        teams[0]["gpuQueues"]["default"] = "research-h100"
        assert team_errors("prod", teams) == [
            f"config error: {TEAMS}[0].gpuQueues.default: got 'research-h100', expected another LocalQueue "
            "name than localQueue (default points at research-l4)"
        ]

    def test_local_queue_and_cluster_queue_go_together(self) -> None:
        teams = config_value("prod", TEAMS)
        del teams[0]["clusterQueue"]
        assert team_errors("prod", teams) == [
            f"config error: {TEAMS}[0].clusterQueue: missing, expected the ClusterQueue the team's LocalQueue points at"
        ]

    def test_kai_queue_must_be_a_leaf(self) -> None:
        teams = config_value("kai", TEAMS)
        teams[0]["kaiQueue"] = "department-1"
        lines = team_errors("kai", teams)
        assert lines[0] == (
            f"config error: {TEAMS}[0].kaiQueue: got 'department-1', expected a leaf queue of gpu-batch:kaiQueues "
            "(team-a); KAI silently drops jobs of a missing or non-leaf queue"
        )

    def test_one_namespace_per_team(self) -> None:
        teams = config_value("skypilot", TEAMS)
        teams[1]["namespace"] = "team1"
        lines = team_errors("skypilot", teams)
        assert lines[0] == (
            f"config error: {TEAMS}[1].namespace: got 'team1', expected a namespace no other team uses "
            "(RBAC is per namespace)"
        )

    def test_skypilot_team_must_not_use_the_defaulting_queue_name(self) -> None:
        teams = config_value("skypilot", TEAMS)
        teams[0]["localQueue"] = "default"
        lines = team_errors("skypilot", teams)
        assert lines == [
            f"config error: {TEAMS}[0].localQueue: got 'default', expected another name than 'default' next to a "
            "SkyPilot server: Kueue's pod integration would default the server's own pods (and ingress-nginx) "
            "into the queue"
        ]

    def test_skypilot_with_strict_tenancy(self) -> None:
        kueue = config_value("skypilot", "gpu-batch:kueue")
        kueue["manageJobsWithoutQueueName"] = True
        with pytest.raises(ConfigError) as caught:
            run_stack("skypilot", {"gpu-batch:kueue": kueue})
        lines = str(caught.value).splitlines()
        assert len(lines) == 2
        assert lines[0].startswith(
            f"config error: {TEAMS}[0].skypilot: got 'team1', expected no SkyPilot server while "
            "gpu-batch:kueue.manageJobsWithoutQueueName is on"
        )
