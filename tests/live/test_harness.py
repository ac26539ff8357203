"""The harness itself: a fresh API server answers apply, refusal, dry run and impersonation as a
real one does (these are the behaviours the other live tests build on)."""

from __future__ import annotations

from kubernetes import client as k8s

from tests.live.cluster import Cluster


def config_map(name: str, ns: str = "default") -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns},
        "data": {"k": "v"},
    }


def test_apply_answers_each_object_and_reports_the_servers_message(cluster: Cluster) -> None:
    good, bad, unserved = cluster.apply(
        [
            config_map("live-ok"),
            config_map("Not_A_DNS_Name"),
            {"apiVersion": "example.com/v1", "kind": "Nothing", "metadata": {"name": "x"}},
        ],
        wait_for_kind=0,
    )
    assert good.accepted and good.object is not None and good.object["data"] == {"k": "v"}
    assert not bad.accepted and bad.status == 422 and "a lowercase RFC 1123 subdomain" in bad.message, bad
    assert not unserved.accepted and unserved.status == 0 and "serves no Nothing" in unserved.message
    assert cluster.get("v1", "ConfigMap", "live-ok", "default") is not None


def test_dry_run_runs_admission_and_stores_nothing(cluster: Cluster) -> None:
    (result,) = cluster.apply([config_map("live-dry")], dry_run=True)
    assert result.accepted
    assert cluster.get("v1", "ConfigMap", "live-dry", "default") is None


def test_impersonation_goes_through_rbac(cluster: Cluster) -> None:
    user, group = "alice@example.com", "team-a@example.com"
    (refused,) = cluster.apply([config_map("live-alice")], as_user=user, groups=[group])
    assert (
        refused.status == 403
        and 'User "alice@example.com" cannot patch resource "configmaps"' in refused.message
    )
    assert (
        cluster.request("GET", "/api/v1/namespaces/default/secrets", as_user=user, groups=[group])[0] == 403
    )

    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "cm-writer", "namespace": "default"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "patch", "create"]}],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "cm-writer", "namespace": "default"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-writer"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}],
    }
    assert all(r.accepted for r in cluster.apply([role, binding]))

    # The RBAC authorizer reads Roles and RoleBindings from the API server's informers (kubernetes
    # v1.37.2 plugin/pkg/auth/authorizer/rbac/rbac.go ``New`` takes listers; pkg/kubeapiserver/
    # authorizer/config.go builds them from the shared informer factory), so a binding is in
    # force once its watch event arrives, not when the create returns: the same request is
    # refused until then.  On a busy machine that took longer than one request.
    def applied_as_alice() -> object:
        (answer,) = cluster.apply([config_map("live-alice")], as_user=user, groups=[group])
        assert answer.accepted or answer.status == 403, answer  # refused only for want of the binding
        return answer if answer.accepted else None

    allowed = cluster.wait_for(applied_as_alice, 30, "alice's RoleBinding to be in force")
    assert allowed is not None
    # the official client, impersonating the same user
    api = k8s.CoreV1Api(cluster.client(as_user=user, groups=[group]))
    assert api.read_namespaced_config_map("live-alice", "default").data == {"k": "v"}
