"""Issue 19's review findings, put back into today's stacks one at a time: the pack (with the
stack's own policy config) or the config check catches each.

Each case starts from the real program's resources for a stack (``tests/stack_runner.py``),
undoes one fix -- by a stack-config edit, or by editing the planned resources (a Helm release's
values, a removed admission policy) before the pack renders the charts -- and runs the rule that
stands for the finding.  The clean stacks pass the same rules (``make preview``).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from gpu_batch_policy.facts.charts.objects import render_releases
from gpu_batch_policy.facts.model import StackModel
from gpu_batch_policy.facts.model.base import build_resource
from gpu_batch_policy.primitives.values import plain
from gpu_batch_policy.rules.gke import cluster_access
from gpu_batch_policy.rules.kit.report import CannotCheckYetError, Reporter
from gpu_batch_policy.rules.kueue import pod_bypass as kueue_pod_bypass
from gpu_batch_policy.rules.tenancy import ingress_exposure, service_account_rbac, skypilot
from gpu_batch_policy.runtime.registry import ALL_POLICIES

from stacks.errors import ConfigError
from tests.stack_runner import ROOT, config_value, run_stack, shared_unless_edited

Item = tuple[str, Any, str, str]
RELEASE = "kubernetes:helm.sh/v3:Release"
VAP = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"
CLUSTER = "gcp:container/cluster:Cluster"
Check = Callable[[StackModel, Reporter, Mapping[str, Any]], None]


def items(stack: str, edits: dict[str, Any] | None = None) -> list[Item]:
    return [(r.type, plain(r.inputs), r.urn, r.name) for r in shared_unless_edited(stack, edits).resources]


def model(declared: list[Item]) -> StackModel:
    """The pack's model: declared resources plus what every Helm release renders (rendered here,
    after a test edited the release values, exactly as the pack renders them)."""
    objects, renders = render_releases(build_resource(t, p, u, n) for t, p, u, n in declared)
    assert all(r.status == "rendered" for r in renders.values()), renders
    kept = list(declared)  # releases stay: rules read their values
    kept += [
        (o.type, o.props, f"{o.urn}$rendered:{o.kind}/{o.namespace or ''}/{o.name}", o.name) for o in objects
    ]
    return StackModel.from_plain(kept, render=False)


def level(rule: str, stack: str) -> str:
    """The rule's level under the stack's policy config (what `make preview` applies)."""
    config = json.loads((ROOT / "policies" / f"config.{stack}.json").read_text()).get(rule)
    if isinstance(config, dict):
        config = config.get("enforcementLevel")
    if isinstance(config, str):
        return config
    (pol,) = [p for p in ALL_POLICIES if p.name == rule]
    assert pol.enforcement_level is not None
    return str(pol.enforcement_level.value)


def findings(check: Check, m: StackModel, stack: str, rule: str) -> list[str]:
    found: list[str] = []

    def report(message: str, _urn: str | None = None) -> None:
        found.append(message)

    reporter = Reporter(report, stack=True)
    config = json.loads((ROOT / "policies" / f"config.{stack}.json").read_text()).get(rule)
    check(m, reporter, config if isinstance(config, dict) else {})
    with contextlib.suppress(CannotCheckYetError):  # "cannot check yet" is no finding here
        reporter.finish()
    return found


def release_values(declared: list[Item], name: str) -> dict[str, Any]:
    (props,) = [p for t, p, _, n in declared if t == RELEASE and p.get("name") == name]
    values: dict[str, Any] = props["values"]
    return values


class TestGroupsThatBind:
    def test_no_security_group_is_a_config_error(self) -> None:
        cluster = {k: v for k, v in config_value("prod", "gpu-batch:cluster").items() if k != "securityGroup"}
        with pytest.raises(ConfigError, match=r"gpu-batch:cluster\.securityGroup: .*bind nobody"):
            run_stack("prod", {"gpu-batch:cluster": cluster})

    def test_no_authenticator_groups_is_caught_by_the_pack(self) -> None:
        declared = items("prod")
        for t, props, _, _ in declared:
            if t == CLUSTER:
                props.pop("authenticatorGroupsConfig")
        found = findings(cluster_access.check_groups_bind, model(declared), "prod", "rbac-groups-bind")
        assert found and all("binds nobody" in f for f in found)
        assert level("rbac-groups-bind", "prod") == "mandatory"


class TestNoWayAroundTheQueues:
    @pytest.mark.parametrize(
        ("stack", "kinds"), [("dev", "Jobs"), ("kai", "bare pods"), ("skypilot", "bare pods")]
    )
    def test_without_the_admission_policy_the_team_can_bypass(self, stack: str, kinds: str) -> None:
        declared = items(stack)
        rule = "kueue-pod-bypass"
        assert not findings(kueue_pod_bypass.check_bypass, model(declared), stack, rule)
        without = [i for i in declared if i[0] != VAP]
        found = findings(kueue_pod_bypass.check_bypass, model(without), stack, rule)
        assert any(kinds in f for f in found), found
        assert level(rule, stack) == "mandatory"

    def test_the_pod_webhook_on_every_namespace_is_a_prod_error_and_an_advisory_elsewhere(self) -> None:
        declared = items("skypilot")
        values = release_values(declared, "kueue")
        config = values["managerConfig"]["controllerManagerConfigYaml"]
        start = config.index("managedJobsNamespaceSelector:")
        end = config.index("\n", config.index("gpu-batch/kueue-managed", start))
        values["managerConfig"]["controllerManagerConfigYaml"] = config[:start] + config[end + 1 :]
        rule = "kueue-pod-webhook-scope"
        assert findings(kueue_pod_bypass.check_webhook_scope, model(declared), "skypilot", rule)
        assert level(rule, "skypilot") == "advisory" and level(rule, "prod") == "mandatory"


class TestSkypilot:
    def test_manage_rbac_policies_makes_the_server_cluster_admin(self) -> None:
        declared = items("skypilot")
        release_values(declared, "skypilot-team1")["rbac"]["manageRbacPolicies"] = True
        rule = "serviceaccount-cluster-admin-equivalent"
        found = findings(
            service_account_rbac.check_service_account_escalation, model(declared), "skypilot", rule
        )
        assert len(found) == 1 and "team1/skypilot-team1-api-sa" in found[0]
        assert level(rule, "skypilot") == "mandatory"

    def test_the_charts_deployment_grant_lets_task_pods_escape_the_queue(self) -> None:
        """Task pods run as the server's ServiceAccount; with the chart's default namespaceRules it
        may create Deployments, whose ReplicaSet-made pods carry no queue label."""
        declared = items("skypilot")
        del release_values(declared, "skypilot-team1")["rbac"]["namespaceRules"]
        found = findings(kueue_pod_bypass.check_bypass, model(declared), "skypilot", "kueue-pod-bypass")
        assert len(found) == 1 and "skypilot-team1-api-role" in found[0] and "Deployments" in found[0]

    def test_a_team_release_turning_its_bundled_ingress_nginx_back_on(self) -> None:
        """The ingress rules' own cases are tests/policies/rules/test_exposure.py; here: the stack,
        which serves through GKE's Gateway (issue 27), is caught once a team release installs the
        chart's bundled ingress-nginx again."""
        declared = items("skypilot")
        release_values(declared, "skypilot-team1")["ingress-nginx"] = {"enabled": True}
        rule = "skypilot-ingress-owned-by-a-team"
        found = findings(ingress_exposure.check_team_owned_ingress, model(declared), "skypilot", rule)
        assert len(found) == 1 and "offline" in found[0]
        assert level(rule, "skypilot") == "mandatory"


class TestClosedControlPlane:
    def test_prod_with_its_endpoint_open_is_caught_as_mandatory(self) -> None:
        cluster = {**config_value("prod", "gpu-batch:cluster"), "dnsEndpoint": False}
        declared = items("prod", {"gpu-batch:cluster": cluster})
        rule = "gke-endpoint-not-public"
        found = findings(cluster_access.check_endpoint, model(declared), "prod", rule)
        assert len(found) == 1 and "no master authorized networks" in found[0]
        assert level(rule, "prod") == "mandatory" and level(rule, "dev") == "advisory"
        assert not findings(cluster_access.check_endpoint, model(items("prod")), "prod", rule)


def test_the_stacks_are_clean_under_these_rules() -> None:
    """Sanity: what the cases above undo is really what makes today's stacks pass."""
    assert Path(ROOT / "Pulumi.prod.yaml").is_file()
    for stack in ("dev", "kai", "skypilot", "prod"):
        m = model(items(stack))
        for check, rule in (
            (cluster_access.check_groups_bind, "rbac-groups-bind"),
            (
                service_account_rbac.check_service_account_escalation,
                "serviceaccount-cluster-admin-equivalent",
            ),
            (ingress_exposure.check_basic_auth_over_http, "basic-auth-plain-http-public"),
            (ingress_exposure.check_snippet_annotations, "ingress-nginx-snippet-annotations"),
            (ingress_exposure.check_team_owned_ingress, "skypilot-ingress-owned-by-a-team"),
            (ingress_exposure.check_ingress_nginx_retired, "ingress-nginx-retired"),
            (skypilot.check_server_unauthenticated, "skypilot-server-unauthenticated"),
        ):
            assert not findings(check, m, stack, rule), (stack, rule)
