"""SkyPilot task pods run as their own ServiceAccount (issue 27, Build 4): what its token may do,
judged over the rendered skypilot stack with the pack's RBAC evaluation (gpu_batch_policy.facts.rbac).

skypilot 0.13.0 puts ``kubernetes.remote_identity`` in every task pod's ``serviceAccountName``
(sky/clouds/kubernetes.py make_deploy_resources_variables) and creates no RBAC for a named
account (sky/provision/kubernetes/config.py bootstrap_instances).  A task's token is used when
its cluster tears itself down (sky/provision/kubernetes/instance.py terminate_instances): list and
delete its pods and services.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from gpu_batch_policy.facts.model import StackModel
from gpu_batch_policy.facts.rbac import bindings, role_rules, rules_grant
from gpu_batch_policy.primitives.values import plain

from components.skypilot import service_account_name, task_service_account
from tests.policies.rendered_stack import rendered_stack
from tests.stack_runner import of_type, unedited_run

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

TEAMS = ("team1", "team2")


@pytest.fixture(scope="module")
def model() -> StackModel:
    return rendered_stack("skypilot")


def grants(
    model: StackModel, namespace: str, account: str, group: str, resource: str, verbs: list[str]
) -> bool:
    """Whether any binding of ``namespace/account`` lets it do any of ``verbs`` on ``resource``
    in its namespace (Role bindings there, and every ClusterRoleBinding)."""
    for binding in bindings(model):
        if binding.kind == "RoleBinding" and binding.namespace != namespace:
            continue
        subjects: list[dict[str, Any]] = plain(binding.props).get("subjects") or []
        if not any(
            s.get("kind") == "ServiceAccount" and s.get("name") == account and s.get("namespace") == namespace
            for s in subjects
        ):
            continue
        found = rules_grant(role_rules(model, binding), group, resource, verbs)
        assert found is not None, binding.name
        if found:
            return True
    return False


def test_task_pods_are_configured_to_run_as_the_task_account() -> None:
    for release in of_type(unedited_run("skypilot"), "kubernetes:helm.sh/v3:Release"):
        if release.inputs["chart"] != "skypilot":
            continue
        config = yaml.safe_load(release.inputs["values"]["apiService"]["config"])
        name = release.inputs["name"]
        assert (
            config["kubernetes"]["remote_identity"]
            == task_service_account(name)
            != service_account_name(name)
        )


@pytest.mark.parametrize("team", TEAMS)
def test_tasks_can_tear_their_cluster_down(model: StackModel, team: str) -> None:
    account = task_service_account(f"skypilot-{team}")
    assert grants(model, team, account, "", "pods", ["list"])
    assert grants(model, team, account, "", "pods", ["delete"])
    assert grants(model, team, account, "", "services", ["delete"])
    assert grants(model, team, account, "", "services", ["deletecollection"])


@pytest.mark.parametrize("team", TEAMS)
@pytest.mark.parametrize(
    ("group", "resource", "verbs"),
    [
        ("", "secrets", ["get", "list", "watch"]),
        ("", "pods/exec", ["create", "get"]),
        ("", "pods", ["create", "update", "patch"]),
        ("", "services", ["create", "update", "patch"]),
        ("apps", "deployments", ["create"]),
        ("batch", "jobs", ["create"]),
        ("rbac.authorization.k8s.io", "rolebindings", ["create"]),
    ],
)
def test_tasks_cannot(model: StackModel, team: str, group: str, resource: str, verbs: list[str]) -> None:
    assert not grants(model, team, task_service_account(f"skypilot-{team}"), group, resource, verbs)


def test_the_servers_own_token_still_does_what_the_tasks_cannot(model: StackModel) -> None:
    """The evaluator sees grants at all: the server's account (what tasks ran as before) reads
    Secrets and execs into pods; the task account of another team has nothing in team1."""
    server = service_account_name("skypilot-team1")
    assert grants(model, "team1", server, "", "secrets", ["get"])
    assert grants(model, "team1", server, "", "pods/exec", ["create"])
    assert not grants(model, "team1", task_service_account("skypilot-team2"), "", "pods", ["delete"])
