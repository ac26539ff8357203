"""Group subjects that bind nobody, and a production control plane open to everyone (issue 19).

Upstream: GKE how-to/google-groups-rbac (Group subjects bind only with
``authenticatorGroupsConfig.securityGroup``); GKE how-to/authorized-networks and
concepts/network-isolation (IP endpoint, private endpoint, DNS-based endpoint); field names of
pulumi_gcp 10.2.0 ``ClusterAuthenticatorGroupsConfigArgs``,
``ClusterControlPlaneEndpointsConfig*Args``, ``ClusterMasterAuthorizedNetworksConfigArgs``.
"""

from __future__ import annotations

from typing import Any

from tests.policies.pack_harness import Res, run
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import gke_cluster, k8s

GROUPS = get_policy("rbac-groups-bind")
ENDPOINT = get_policy("gke-endpoint-not-public")
SECURITY_GROUP = {"securityGroup": "gke-security-groups@example.com"}
DNS_ONLY = {"dnsEndpointConfig": {"allowExternalTraffic": True}, "ipEndpointsConfig": {"enabled": False}}


def binding(*group_names: str) -> Res:
    return k8s(
        "rbac.authorization.k8s.io/v1",
        "RoleBinding",
        "submitters",
        namespace="team-a",
        roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "submitter"},
        subjects=[{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g} for g in group_names],
    )


class TestGroupsBind:
    def test_a_google_group_without_groups_for_rbac_is_caught(self) -> None:
        result = run(GROUPS, [gke_cluster(), binding("ml@example.com")])
        assert len(result.violations) == 1 and "binds nobody" in result.messages[0]

    def test_groups_for_rbac_makes_it_bind(self) -> None:
        assert run(
            GROUPS, [gke_cluster(authenticatorGroupsConfig=SECURITY_GROUP), binding("ml@example.com")]
        ).clean

    def test_kubernetes_own_groups_and_stacks_without_gke_are_not_judged(self) -> None:
        assert run(GROUPS, [gke_cluster(), binding("system:authenticated")]).clean
        assert run(GROUPS, [binding("ml@example.com")]).clean


def cluster(**props: Any) -> Res:
    return gke_cluster(deletionProtection=True, **props)


class TestEndpoint:
    def test_a_protected_cluster_open_to_everyone_is_caught(self) -> None:
        # No authorized networks, no private endpoint, IP endpoint on: the prod stack before issue 19.
        private = {"enablePrivateNodes": True, "enablePrivateEndpoint": False}
        result = run(ENDPOINT, [cluster(privateClusterConfig=private)])
        assert len(result.violations) == 1 and "open to the whole internet" in result.messages[0]
        everyone = {"cidrBlocks": [{"cidrBlock": "0.0.0.0/0"}]}
        assert len(run(ENDPOINT, [cluster(masterAuthorizedNetworksConfig=everyone)]).violations) == 1
        assert ENDPOINT.enforcement_level is not None and ENDPOINT.enforcement_level.value == "advisory"

    def test_dns_endpoint_only_or_authorized_networks_are_clean(self) -> None:
        assert run(ENDPOINT, [cluster(controlPlaneEndpointsConfig=DNS_ONLY)]).clean
        office = {"cidrBlocks": [{"cidrBlock": "203.0.113.0/24"}], "gcpPublicCidrsAccessEnabled": False}
        assert run(ENDPOINT, [cluster(masterAuthorizedNetworksConfig=office)]).clean

    def test_only_production_clusters_unless_the_config_says_production(self) -> None:
        dev = gke_cluster(deletionProtection=False)
        assert run(ENDPOINT, [dev]).clean
        assert len(run(ENDPOINT, [dev], {"production": True}).violations) == 1
