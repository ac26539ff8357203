"""pod-exec-reaches-cluster-read (rules/tenancy/exec_cluster_read.py, issue 39 item 4).

A team member who may exec into the SkyPilot server's pod holds its ServiceAccount token, which
SkyPilot 0.13.0's ClusterRole lets list every pod of the cluster.  The skypilot stack keeps this
on purpose (its config accepts both team namespaces with the reason); the rule catches it as soon
as the acceptance is gone, and stays quiet where either half is missing.
"""

from __future__ import annotations

import json
from typing import Any

from gpu_batch_policy.rules.kit.report import Reporter
from gpu_batch_policy.rules.tenancy import exec_cluster_read

from tests.policies.pack_harness import Res, policy, run
from tests.policies.pack_objects import k8s
from tests.stack_runner import ROOT
from tests.test_tenancy_findings import findings, items, level, model

RULE = policy("pod-exec-reaches-cluster-read")
RBAC = "rbac.authorization.k8s.io/v1"


def program(*, exec_verb: bool = True, cluster_list: bool = True) -> list[Res]:
    reader_rules: list[dict[str, Any]] = [
        {
            "apiGroups": [""],
            "resources": ["pods"],
            "verbs": ["get", "list", "watch"] if cluster_list else ["get"],
        }
    ]
    member_rules = [
        {
            "apiGroups": [""],
            "resources": ["pods/exec" if exec_verb else "pods/log"],
            "verbs": ["create", "get"],
        }
    ]
    return [
        k8s(RBAC, "ClusterRole", "reader", rules=reader_rules),
        k8s(
            RBAC,
            "ClusterRoleBinding",
            "reader",
            roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "reader"},
            subjects=[{"kind": "ServiceAccount", "name": "server", "namespace": "team-a"}],
        ),
        k8s(
            "apps/v1",
            "Deployment",
            "server",
            namespace="team-a",
            spec={
                "template": {
                    "spec": {"serviceAccountName": "server", "containers": [{"name": "s", "image": "x"}]}
                }
            },
        ),
        k8s(RBAC, "Role", "member", namespace="team-a", rules=member_rules),
        k8s(
            RBAC,
            "RoleBinding",
            "member",
            namespace="team-a",
            roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "member"},
            subjects=[{"kind": "Group", "name": "team-a@example.com"}],
        ),
    ]


def test_exec_into_a_cluster_wide_reader_is_caught_and_each_half_alone_is_not() -> None:
    (message,) = run(RULE, program()).messages
    assert "team-a@example.com may exec" in message and "Deployment 'team-a/server'" in message
    assert run(RULE, program(exec_verb=False)).clean
    assert run(RULE, program(cluster_list=False)).clean
    accepted = {"accepted": [{"namespace": "team-a", "reason": "kept on purpose"}]}
    assert run(RULE, program(), accepted).clean


def test_the_skypilot_stack_keeps_it_as_an_accepted_mandatory_choice() -> None:
    m = model(items("skypilot"))
    assert findings(exec_cluster_read.check_exec_cluster_read, m, "skypilot", RULE.name) == []
    assert level(RULE.name, "skypilot") == "mandatory" and level(RULE.name, "prod") == "mandatory"
    config = json.loads((ROOT / "policies" / "config.skypilot.json").read_text())[RULE.name]
    assert all("list_pod_for_all_namespaces" in a["reason"] for a in config["accepted"])
    # Without the acceptance each team's server is a finding: what a tenant can still do.
    found: list[str] = []

    def report(message: str, _urn: str | None = None) -> None:
        found.append(message)

    exec_cluster_read.check_exec_cluster_read(m, Reporter(report, stack=True), {})
    assert sorted(f.split(" may exec")[0].rsplit(": ", 1)[-1] for f in found) == [
        "team1@example.com",
        "team2@example.com",
    ]
