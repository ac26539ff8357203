"""The SkyPilot servers behind GKE's internal Gateway, each authenticating requests itself
(issue 27, Build 4): what the skypilot stack plans and what its charts render.

Facts tested (cited in components/gateway and components/skypilot): GKE's ``gke-l7-rilb``
GatewayClass needs ``gatewayApiConfig.channel`` and a ``REGIONAL_MANAGED_PROXY`` subnet; its
proxies reach the pods from that subnet and health probes from 35.191.0.0/16 and 130.211.0.0/22;
skypilot 0.13.0 starts ``sky api start --deploy --enable-basic-auth`` when
``apiService.enableUserManagement`` is on, and its ``BasicAuthMiddleware`` then refuses every
request without credentials but ``/api/health``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from gpu_batch_policy.facts.schema.pinned import pinned_problems
from gpu_batch_policy.primitives.values import plain

from components.gateway import objects
from preview.harness import RunResult, run_program
from preview.manifests import render_manifests, validate_manifests
from stacks.errors import ConfigError
from tests.netpol_eval import Cluster, Pod, outside
from tests.policies.rendered_stack import stack_items
from tests.stack_runner import ROOT, config_value, of_type, run_stack, stack_files, unedited_run

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

RELEASE = "kubernetes:helm.sh/v3:Release"
ROUTE = "kubernetes:gateway.networking.k8s.io/v1:HTTPRoute"
GATEWAY = "kubernetes:gateway.networking.k8s.io/v1:Gateway"
NETPOL = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
GATEWAY_KEY = "gpu-batch:skypilotGateway"


@pytest.fixture(scope="module")
def sky() -> RunResult:
    return unedited_run("skypilot")


def one(result: RunResult, type_token: str) -> dict[str, Any]:
    (found,) = of_type(result, type_token)
    inputs: dict[str, Any] = plain(found.inputs)
    return inputs


def routes(result: RunResult) -> dict[str, str]:
    """Each team's HTTPRoute (by namespace) as canonical JSON bytes."""
    return {
        r.inputs["metadata"]["namespace"]: json.dumps(plain(r.inputs), sort_keys=True)
        for r in of_type(result, ROUTE)
    }


class TestGateway:
    def test_cluster_runs_gke_gateway_controller(self, sky: RunResult) -> None:
        cluster = one(sky, "gcp:container/cluster:Cluster")
        assert cluster["gatewayApiConfig"] == {"channel": "CHANNEL_STANDARD"}

    def test_no_gateway_controller_without_a_server(self) -> None:
        cluster = one(unedited_run("dev"), "gcp:container/cluster:Cluster")
        assert "gatewayApiConfig" not in cluster

    def test_proxy_only_subnet_in_the_cluster_region(self, sky: RunResult) -> None:
        subnet = one(sky, "gcp:compute/subnetwork:Subnetwork")
        assert (subnet["purpose"], subnet["role"]) == ("REGIONAL_MANAGED_PROXY", "ACTIVE")
        assert subnet["region"] == "us-west1" and subnet["ipCidrRange"] == "10.129.0.0/23"

    def test_existing_proxy_subnet_is_not_created(self) -> None:
        gateway = {**config_value("skypilot", GATEWAY_KEY), "createProxySubnet": False}
        assert not of_type(run_stack("skypilot", {GATEWAY_KEY: gateway}), "gcp:compute/subnetwork:Subnetwork")

    def test_https_only_listener_with_the_certificate_manager_certificate(self, sky: RunResult) -> None:
        gateway = one(sky, GATEWAY)
        certificate = one(sky, "gcp:certificatemanager/certificate:Certificate")
        address = one(sky, "gcp:compute/address:Address")
        assert gateway["spec"]["gatewayClassName"] == "gke-l7-rilb"
        (listener,) = gateway["spec"]["listeners"]
        assert (listener["protocol"], listener["port"]) == ("HTTPS", 443)
        assert listener["tls"] == {
            "mode": "Terminate",
            "options": {"networking.gke.io/cert-manager-certs": certificate["name"]},
        }
        assert listener["hostname"] == "*.skypilot.example.com"
        assert certificate["managed"]["domains"] == ["*.skypilot.example.com"]
        assert certificate["location"] == "us-west1"  # regional, as the regional load balancer needs
        assert gateway["spec"]["addresses"] == [{"type": "NamedAddress", "value": address["name"]}]
        assert address["addressType"] == "INTERNAL"
        selector = listener["allowedRoutes"]["namespaces"]
        assert selector["from"] == "Selector"
        assert selector["selector"]["matchExpressions"][0]["values"] == ["team1", "team2"]

    def test_certificate_proven_and_hosts_served_through_the_dns_zone(self, sky: RunResult) -> None:
        records = [plain(r.inputs) for r in of_type(sky, "gcp:dns/recordSet:RecordSet")]
        assert {r["managedZone"] for r in records} == {"skypilot-example-com"}
        hosts = [r for r in records if r["name"] == "*.skypilot.example.com."]
        assert len(hosts) == 1 and hosts[0]["type"] == "A"
        assert len(records) == 2  # and the DNS authorization's record

    def test_one_host_per_team_to_its_own_service(self, sky: RunResult) -> None:
        for namespace, wire in routes(sky).items():
            spec = json.loads(wire)["spec"]
            assert spec["hostnames"] == [f"{namespace}.skypilot.example.com"]
            assert spec["rules"] == [
                {"backendRefs": [{"name": f"skypilot-{namespace}-api-service", "port": 80}]}
            ]

    def test_reordering_teams_leaves_every_route_byte_identical(self, sky: RunResult) -> None:
        teams = config_value("skypilot", "gpu-batch:teams")
        reordered = run_stack("skypilot", {"gpu-batch:teams": list(reversed(teams))})
        assert routes(reordered) == routes(sky)
        assert one(reordered, GATEWAY) == one(sky, GATEWAY)

    def test_health_check_asks_the_unauthenticated_health_path(self, sky: RunResult) -> None:
        policies = [
            plain(r.inputs) for r in of_type(sky, "kubernetes:networking.gke.io/v1:HealthCheckPolicy")
        ]
        assert {p["metadata"]["namespace"] for p in policies} == {"team1", "team2"}
        for policy in policies:
            check = policy["spec"]["default"]["config"]["httpHealthCheck"]
            assert check == {"port": 46580, "requestPath": "/api/health"}

    def test_backend_timeout_is_the_chart_ingress_hour(self, sky: RunResult) -> None:
        """skypilot 0.13.0 templates/ingress.yaml proxy-read-timeout 3600; GKE's default is 30 s."""
        policies = [plain(r.inputs) for r in of_type(sky, "kubernetes:networking.gke.io/v1:GCPBackendPolicy")]
        assert {p["metadata"]["namespace"] for p in policies} == {"team1", "team2"}
        for policy in policies:
            namespace = policy["metadata"]["namespace"]
            assert policy["spec"] == {
                "default": {"timeoutSec": 3600},
                "targetRef": {"group": "", "kind": "Service", "name": f"skypilot-{namespace}-api-service"},
            }

    @pytest.mark.parametrize(
        ("change", "path"),
        [
            ({"domain": None}, "domain: missing"),
            ({"dnsZone": None}, "dnsZone: missing"),
            (
                {"proxySubnetRange": "10.129.0.0/27"},
                "proxySubnetRange: got '10.129.0.0/27', expected a range of /26",
            ),
            ({"proxySubnetRange": "nonsense"}, "proxySubnetRange: got 'nonsense', expected an IPv4 CIDR"),
        ],
    )
    def test_missing_or_wrong_keys_fail_with_one_line(self, change: dict[str, Any], path: str) -> None:
        gateway = {
            k: v for k, v in {**config_value("skypilot", GATEWAY_KEY), **change}.items() if v is not None
        }
        with pytest.raises(ConfigError) as raised:
            run_program(ROOT, stack_files("skypilot", {GATEWAY_KEY: gateway}))
        lines = [line for line in str(raised.value).splitlines() if GATEWAY_KEY in line]
        assert len(lines) == 1 and f"{GATEWAY_KEY}.{path}" in lines[0], str(raised.value)


def rendered(stack: str = "skypilot") -> list[dict[str, Any]]:
    return [props for type_token, props, _, _ in stack_items(stack) if type_token.startswith("kubernetes:")]


class TestNoUnauthenticatedPath:
    def test_no_ingress_nginx_anywhere(self, sky: RunResult) -> None:
        charts = {r.inputs["chart"] for r in of_type(sky, RELEASE)}
        assert "ingress-nginx" not in charts
        for release in of_type(sky, RELEASE):
            if release.inputs["chart"] == "skypilot":
                values = release.inputs["values"]
                assert values["ingress-nginx"] == {"enabled": False}
                assert values["ingress"] == {"enabled": False}
        objects_ = rendered()
        assert not [o for o in objects_ if o.get("kind") in ("Ingress", "IngressClass")]
        assert not [o for o in objects_ if "ingress-nginx" in json.dumps(o.get("metadata", {}))]

    def test_no_service_outside_the_cluster_but_through_the_gateway(self) -> None:
        services = [o for o in rendered() if o.get("kind") == "Service"]
        assert services
        for service in services:
            assert service.get("spec", {}).get("type", "ClusterIP") == "ClusterIP", service["metadata"]

    def test_every_server_starts_with_basic_auth_from_the_team_secret(self) -> None:
        """skypilot 0.13.0: --enable-basic-auth sets ENABLE_BASIC_AUTH, which installs
        BasicAuthMiddleware; SKYPILOT_INITIAL_BASIC_AUTH seeds the one user."""
        objects_ = rendered()
        deployments = [
            o
            for o in objects_
            if o.get("kind") == "Deployment" and o["metadata"]["name"].startswith("skypilot-")
        ]
        assert len(deployments) == 2
        for deployment in deployments:
            (container,) = [
                c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "skypilot-api"
            ]
            script = container["args"][-1]
            assert "sky api start --deploy --enable-basic-auth --foreground" in script
            env = {e["name"]: e for e in container["env"]}
            assert "SKYPILOT_DISABLE_BASIC_AUTH_MIDDLEWARE" not in env
            secret = env["SKYPILOT_INITIAL_BASIC_AUTH"]["valueFrom"]["secretKeyRef"]
            release = f"skypilot-{deployment['metadata']['namespace']}"
            assert secret == {"name": f"{release}-initial-basic-auth", "key": "auth"}
            assert [
                o for o in objects_ if o.get("kind") == "Secret" and o["metadata"]["name"] == secret["name"]
            ], "the chart renders the Secret the server reads"


def server_pod(namespace: str) -> Pod:
    return Pod(namespace, f"skypilot-{namespace}-api", objects.server_pod_labels(f"skypilot-{namespace}"))


class TestNetworkPolicies:
    """tests/netpol_eval.py over the stack's NetworkPolicies (Dataplane V2 is on in skypilot)."""

    @pytest.fixture(scope="class")
    def cluster(self, sky: RunResult) -> Cluster:
        labels: dict[str, dict[str, str]] = {n: {} for n in ("team1", "team2", "kube-system")}
        return Cluster(labels, [plain(r.inputs) for r in of_type(sky, NETPOL)])

    def test_proxies_and_probes_reach_the_server_port_only(self, cluster: Cluster) -> None:
        for namespace in ("team1", "team2"):
            server = server_pod(namespace)
            for source in (
                outside("proxy", "10.129.1.7"),
                outside("probe", "35.191.3.4"),
                outside("hc", "130.211.0.9"),
            ):
                assert cluster.allows(source, server, 46580), (source, namespace)
                assert not cluster.allows(source, server, 9090), (source, namespace)

    def test_proxies_do_not_reach_task_pods(self, cluster: Cluster) -> None:
        task = Pod("team1", "sky-task-head", {"skypilot-cluster": "c1"})
        assert not cluster.allows(outside("proxy", "10.129.1.7"), task, 46580)

    def test_other_sources_are_refused(self, cluster: Cluster) -> None:
        server = server_pod("team1")
        assert not cluster.allows(outside("vm", "10.128.0.5"), server, 46580)
        assert not cluster.allows(
            Pod("team2", "sky-task", {"skypilot-cluster": "c2"}, ip="10.4.0.9"), server, 46580
        )
        # the team's own task pods still reach their server (same namespace)
        assert cluster.allows(Pod("team1", "sky-task", {"skypilot-cluster": "c1"}), server, 46580)


class TestSchemas:
    """Against the Gateway API and GKE CRDs pinned in charts.lock.yaml (gateway-api-crds,
    gke-gateway-crds), with their CEL rules, from ../shared/schemas/gateway-api and
    gke-gateway-api; where neither they, the cache nor the network are, this is skipped and the
    preview reports the objects as not validated."""

    @pytest.fixture(scope="class")
    def gateway_objects(self, sky: RunResult) -> list[dict[str, Any]]:
        problems = [p for p in pinned_problems() if "gateway-api-crds" in p or "gke-gateway-crds" in p]
        if problems:
            pytest.skip(f"pinned Gateway API CRDs not available here: {problems[0]}")
        kinds = {"Gateway", "HTTPRoute", "HealthCheckPolicy", "GCPBackendPolicy"}
        return [o for o in render_manifests(sky.resources) if o["kind"] in kinds]

    def test_the_gateway_objects_validate(self, gateway_objects: list[dict[str, Any]]) -> None:
        assert len(gateway_objects) == 7
        assert validate_manifests(gateway_objects) == []

    def test_a_plain_http_listener_mode_is_refused_by_the_crd(
        self, gateway_objects: list[dict[str, Any]]
    ) -> None:
        (gateway,) = [copy.deepcopy(o) for o in gateway_objects if o["kind"] == "Gateway"]
        gateway["spec"]["listeners"][0]["tls"]["mode"] = "Passthrough"
        assert any("tls mode must be Terminate" in line for line in validate_manifests([gateway]))
