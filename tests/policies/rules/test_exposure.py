"""ServiceAccounts that can make themselves cluster-admin, basic auth over plain HTTP on a public
balancer, snippet annotations, and an ingress controller one team owns (issue 19 #3).

Upstream: kubernetes v1.34.0 ``pkg/registry/rbac/escalation_check.go`` (escalate/bind bypass
RBAC's escalation prevention); skypilot chart 0.13.0 ``templates/rbac.yaml`` (``*`` on
clusterroles and clusterrolebindings with ``rbac.manageRbacPolicies: true``) and
``templates/ingress.yaml`` (basic auth, ``ingress.tls.enabled``); RFC 7617 §4 (basic credentials
are only encoded); GKE concepts/service-load-balancer (``networking.gke.io/load-balancer-type:
Internal``); ingress-nginx 4.11.8 ``controller.allowSnippetAnnotations``.
"""

from __future__ import annotations

from typing import Any

from tests.policies.pack_harness import Res, run
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import helm_release, k8s

ESCALATION = get_policy("serviceaccount-cluster-admin-equivalent")
BASIC_AUTH = get_policy("basic-auth-plain-http-public")
SNIPPETS = get_policy("ingress-nginx-snippet-annotations")
TEAM_OWNED = get_policy("skypilot-ingress-owned-by-a-team")
RBAC = "rbac.authorization.k8s.io/v1"
NGINX = {"app.kubernetes.io/name": "ingress-nginx", "app.kubernetes.io/component": "controller"}


def cluster_role(rules: list[dict[str, Any]]) -> Res:
    return k8s(RBAC, "ClusterRole", "api-role", rules=rules)


def sa_binding(role: str = "api-role") -> Res:
    return k8s(
        RBAC,
        "ClusterRoleBinding",
        "api-role-binding",
        roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        subjects=[{"kind": "ServiceAccount", "name": "skypilot-api-sa", "namespace": "team1"}],
    )


READ_NODES = {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]}
MANAGE_RBAC = {
    "apiGroups": ["rbac.authorization.k8s.io"],
    "resources": ["clusterroles", "clusterrolebindings"],
    "verbs": ["*"],
}


class TestServiceAccountEscalation:
    def test_the_skypilot_default_is_caught(self) -> None:
        result = run(ESCALATION, [cluster_role([READ_NODES, MANAGE_RBAC]), sa_binding()])
        assert len(result.violations) == 1 and "team1/skypilot-api-sa" in result.messages[0]
        bind_only = {
            "apiGroups": ["rbac.authorization.k8s.io"],
            "resources": ["clusterroles"],
            "verbs": ["bind"],
        }
        assert len(run(ESCALATION, [cluster_role([bind_only]), sa_binding()]).violations) == 1
        assert len(run(ESCALATION, [sa_binding("cluster-admin")]).violations) == 1

    def test_read_only_and_people_are_clean(self) -> None:
        read_rbac = {
            "apiGroups": ["rbac.authorization.k8s.io"],
            "resources": ["clusterroles"],
            "verbs": ["get"],
        }
        assert run(ESCALATION, [cluster_role([READ_NODES, read_rbac]), sa_binding()]).clean
        people = sa_binding()
        people.props["subjects"] = [{"kind": "Group", "name": "admins@example.com"}]
        assert run(ESCALATION, [cluster_role([MANAGE_RBAC]), people]).clean
        assert ESCALATION.enforcement_level is not None and ESCALATION.enforcement_level.value == "advisory"


def controller(annotations: dict[str, str] | None = None, ranges: list[str] | None = None) -> Res:
    spec: dict[str, Any] = {"type": "LoadBalancer", "ports": [{"port": 80}]}
    if ranges:
        spec["loadBalancerSourceRanges"] = ranges
    metadata_extra = {"annotations": annotations} if annotations else {}
    res = k8s("v1", "Service", "ingress-nginx-controller", namespace="ingress", labels=dict(NGINX), spec=spec)
    res.props["metadata"].update(metadata_extra)
    return res


def ingress(tls: bool) -> Res:
    spec: dict[str, Any] = {"rules": [{"host": "sky.example.com"}]}
    if tls:
        spec["tls"] = [{"hosts": ["sky.example.com"], "secretName": "sky-tls"}]
    res = k8s("networking.k8s.io/v1", "Ingress", "skypilot-ingress", namespace="team1", spec=spec)
    res.props["metadata"]["annotations"] = {"nginx.ingress.kubernetes.io/auth-type": "basic"}
    return res


class TestBasicAuthOverHttp:
    def test_plain_http_on_a_public_balancer_is_caught(self) -> None:
        result = run(BASIC_AUTH, [controller(), ingress(tls=False)])
        assert len(result.violations) == 1 and "base64" in result.messages[0]

    def test_tls_an_internal_balancer_or_source_ranges_are_clean(self) -> None:
        assert run(BASIC_AUTH, [controller(), ingress(tls=True)]).clean
        internal = controller({"networking.gke.io/load-balancer-type": "Internal"})
        assert run(BASIC_AUTH, [internal, ingress(tls=False)]).clean
        assert run(BASIC_AUTH, [controller(ranges=["203.0.113.0/24"]), ingress(tls=False)]).clean
        assert run(BASIC_AUTH, [ingress(tls=False)]).clean  # no controller in this stack: not judged


class TestSnippetsAndOwnership:
    def config_map(self, allowed: str) -> Res:
        return k8s(
            "v1",
            "ConfigMap",
            "ingress-nginx-controller",
            namespace="ingress",
            labels=dict(NGINX),
            data={"allow-snippet-annotations": allowed},
        )

    def test_snippet_annotations_on_are_caught_and_off_is_clean(self) -> None:
        assert len(run(SNIPPETS, [self.config_map("true")]).violations) == 1
        assert run(SNIPPETS, [self.config_map("false")]).clean

    def test_a_team_release_serving_the_others_is_caught(self) -> None:
        def sky(name: str, nginx: dict[str, Any] | None) -> Res:
            values: dict[str, Any] = {"ingress-nginx": nginx} if nginx is not None else {}
            return helm_release(name, "skypilot", values, namespace=name)

        # The chart's default is ingress-nginx.enabled: true.
        result = run(TEAM_OWNED, [sky("team1", None), sky("team2", {"enabled": False})])
        assert len(result.violations) == 1 and "offline" in result.messages[0]
        assert run(TEAM_OWNED, [sky("team1", {"enabled": False}), sky("team2", {"enabled": False})]).clean
        assert run(TEAM_OWNED, [sky("team1", None)]).clean  # one server: nobody else depends on it
