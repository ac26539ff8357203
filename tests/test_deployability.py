"""Issue 10: what a real `pulumi up` of each stack would hit, checked in the recorded plan."""

from __future__ import annotations

import pytest
import yaml

from preview.harness import RunResult
from preview.mocks import OFFLINE_ENGINE_VERSIONS
from preview.plan import plan_document
from preview.records import is_secret
from stacks.errors import ConfigError
from tests.stack_runner import config_value, custom_objects, of_type, run_stack, unedited_run

REQUEST_SELECTOR = {
    "key": "autoscaling.gke.io/provisioning-request",
    "valueFromProvisioningClassDetail": "ResizeRequestName",
}


@pytest.fixture(scope="module")
def prod() -> RunResult:
    return unedited_run("prod")


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_queued_provisioning_configs_pin_pods_to_their_nodes(stack: str) -> None:
    configs = list(custom_objects(unedited_run(stack), "ProvisioningRequestConfig"))
    assert configs
    for prc in configs:
        assert prc["spec"]["provisioningClassName"] == "queued-provisioning.gke.io"
        assert prc["spec"]["podSetUpdates"] == {"nodeSelector": [REQUEST_SELECTOR]}


def test_check_capacity_configs_get_no_request_selector() -> None:
    (prc,) = custom_objects(unedited_run("skypilot"), "ProvisioningRequestConfig")
    assert "podSetUpdates" not in prc["spec"]


def test_prod_sets_no_preemption_field_fair_sharing_ignores(prod: RunResult) -> None:
    queues = list(custom_objects(prod, "ClusterQueue"))
    assert len(queues) == 4  # a ClusterQueue per team and GPU type (issue 21)
    for cq in queues:
        assert cq["spec"]["fairSharing"]["weight"] == "1"
        assert cq["spec"]["preemption"]["borrowWithinCohort"] in (None, {"policy": "Never"})


def _protected(result: RunResult, type_token: str) -> dict[str, bool]:
    return {r.name: r.protect for r in result.resources if r.type == type_token}


def test_prod_protects_the_cluster_and_every_pool(prod: RunResult) -> None:
    assert set(_protected(prod, "gcp:container/cluster:Cluster").values()) == {True}
    pools = _protected(prod, "gcp:container/nodePool:NodePool")
    # system, tenant CPU (issue 27: tenant pods off the operators' pool), L4 and H100
    assert len(pools) == 4 and set(pools.values()) == {True}


def test_dev_protects_nothing() -> None:
    assert not any(r.protect for r in unedited_run("dev").resources)


def test_protect_is_in_the_plan(prod: RunResult) -> None:
    document = plan_document("gpu-batch", "prod", prod.resources, prod.outputs)
    protected = {r["name"] for r in document["resources"] if r.get("protect")}
    assert protected == {
        "gpu-batch-prod-cluster",
        "gpu-batch-prod-system",
        "gpu-batch-prod-tenant-cpu",
        "l4-queued-pool",
        "h100-queued-pool",
    }


class TestPrivateNodes:
    """prod: Cloud NAT for the region, and the control plane reaches the webhook ports (issue 10 #1)."""

    def test_router_and_nat_for_the_clusters_region(self, prod: RunResult) -> None:
        (router,) = of_type(prod, "gcp:compute/router:Router")
        (nat,) = of_type(prod, "gcp:compute/routerNat:RouterNat")
        assert router.inputs["region"] == "us-central1" and router.inputs["network"] == "default"
        assert nat.inputs["region"] == "us-central1"
        # Issue 21: only the cluster's subnetwork, never every subnetwork of the network.
        assert nat.inputs["sourceSubnetworkIpRangesToNat"] == "LIST_OF_SUBNETWORKS"
        assert router.urn in nat.property_dependencies["router"]

    def test_webhook_firewall_from_the_control_plane(self, prod: RunResult) -> None:
        (rule,) = of_type(prod, "gcp:compute/firewall:Firewall")
        assert rule.inputs["sourceRanges"] == ["172.16.0.32/28"]
        assert rule.inputs["direction"] == "INGRESS"
        assert rule.inputs["allows"] == [{"protocol": "tcp", "ports": ["8082", "9443"]}]
        assert rule.inputs["targetTags"] == ["gpu-batch-prod-node"]
        for pool in of_type(prod, "gcp:container/nodePool:NodePool"):
            assert pool.inputs["nodeConfig"]["tags"] == ["gpu-batch-prod-node"]

    def test_operators_install_after_nat_and_firewall(self, prod: RunResult) -> None:
        # Two providers on the one cluster since issue 28: the ordinary one and the upserting one
        # for retained CRDs (components/k8s_provider.py); everything either installs waits.
        providers = of_type(prod, "pulumi:providers:kubernetes")
        nat = of_type(prod, "gcp:compute/routerNat:RouterNat")[0].urn
        rule = of_type(prod, "gcp:compute/firewall:Firewall")[0].urn
        assert len(providers) == 2
        for provider in providers:
            assert {nat, rule} <= set(provider.dependencies), provider.name

    def test_skypilot_opens_no_ingress_webhook_port(self) -> None:
        """Issue 27: no ingress-nginx (and no webhook of its own on 8443): only Kueue's ports."""
        private = {**config_value("skypilot", "gpu-batch:cluster"), "privateNodes": True}
        (rule,) = of_type(
            run_stack("skypilot", {"gpu-batch:cluster": private}), "gcp:compute/firewall:Firewall"
        )
        assert rule.inputs["allows"] == [{"protocol": "tcp", "ports": ["8082", "9443"]}]

    def test_public_clusters_get_neither(self) -> None:
        dev = unedited_run("dev")
        assert not of_type(dev, "gcp:compute/routerNat:RouterNat")
        assert not of_type(dev, "gcp:compute/firewall:Firewall")


def test_master_authorized_networks() -> None:
    cluster = config_value("prod", "gpu-batch:cluster")
    cluster = {**cluster, "dnsEndpoint": False}  # authorized networks filter the IP endpoint
    closed = run_stack("prod", {"gpu-batch:cluster": {**cluster, "masterAuthorizedNetworks": []}})
    config = of_type(closed, "gcp:container/cluster:Cluster")[0].inputs["masterAuthorizedNetworksConfig"]
    assert config == {"cidrBlocks": [], "gcpPublicCidrsAccessEnabled": False}
    some = run_stack(
        "prod", {"gpu-batch:cluster": {**cluster, "masterAuthorizedNetworks": ["203.0.113.0/24"]}}
    )
    blocks = of_type(some, "gcp:container/cluster:Cluster")[0].inputs["masterAuthorizedNetworksConfig"]
    assert blocks["cidrBlocks"] == [{"cidrBlock": "203.0.113.0/24", "displayName": "203.0.113.0/24"}]


def test_nodes_run_as_a_dedicated_least_privilege_account(prod: RunResult) -> None:
    (account,) = of_type(prod, "gcp:serviceaccount/account:Account")
    assert account.inputs["accountId"] == "gpu-batch-prod-nodes"
    roles = sorted(
        m.inputs["role"]
        for m in of_type(prod, "gcp:projects/iAMMember:IAMMember")
        if not str(m.inputs["member"]).startswith(("group:", "user:"))  # team members' clusterViewer
    )
    assert roles == ["roles/artifactregistry.reader", "roles/container.defaultNodeServiceAccount"]
    for pool in of_type(prod, "gcp:container/nodePool:NodePool"):
        assert account.urn in pool.property_dependencies["nodeConfig"]


@pytest.mark.parametrize(
    ("edit", "line"),
    [
        (
            {"masterIpv4CidrBlock": "172.16.0.0/24"},
            "config error: gpu-batch:cluster.masterIpv4CidrBlock: got '172.16.0.0/24', expected a private "
            "/28 CIDR block such as 172.16.0.32/28",
        ),
        (
            {"masterAuthorizedNetworks": ["10.0.0.0/8", "office"]},
            "config error: gpu-batch:cluster.masterAuthorizedNetworks[1]: got 'office', expected a CIDR "
            "block such as 203.0.113.0/24",
        ),
    ],
)
def test_bad_network_keys_are_one_line_each(edit: dict[str, object], line: str) -> None:
    # dnsEndpoint off: authorized networks then filter a real IP endpoint (stacks/checks/access.py).
    cluster = {**config_value("prod", "gpu-batch:cluster"), "dnsEndpoint": False, **edit}
    with pytest.raises(ConfigError) as caught:
        run_stack("prod", {"gpu-batch:cluster": cluster})
    assert str(caught.value).splitlines() == [line]


DYNAMIC = "pulumi-python:dynamic:Resource"


@pytest.mark.parametrize(
    ("stack", "gate", "release", "queue_kinds"),
    [
        ("dev", "kueue-webhooks-ready", "kueue-release", ("ClusterQueue", "LocalQueue", "ResourceFlavor")),
        ("prod", "kueue-webhooks-ready", "kueue-release", ("ClusterQueue", "Cohort", "AdmissionCheck")),
        ("skypilot", "kueue-webhooks-ready", "kueue-release", ("ClusterQueue", "LocalQueue")),
        ("kai", "kai-webhooks-ready", "kai-scheduler-release", ("Queue",)),
    ],
)
def test_queue_objects_wait_for_the_readiness_gate(
    stack: str, gate: str, release: str, queue_kinds: tuple[str, ...]
) -> None:
    """Release -> gate -> queue objects, in the recorded plan (issue 10 #4)."""
    result = unedited_run(stack)
    by_name = {r.name: r for r in result.resources}
    gate_record = by_name[gate]
    assert gate_record.type == DYNAMIC
    assert by_name[release].urn in gate_record.dependencies
    assert is_secret(gate_record.inputs["kubeconfig"])
    objects = [
        r
        for r in result.resources
        if r.type.startswith("kubernetes:") and r.type.rsplit(":", 1)[-1] in queue_kinds
    ]
    assert objects
    for obj in objects:
        assert gate_record.urn in obj.dependencies, obj.name


def test_no_gate_without_queue_objects() -> None:
    result = run_stack("dev", drop=("gpu-batch:kueueQueues", "gpu-batch:teams", "gpu-batch:workloads"))
    assert not of_type(result, DYNAMIC)


def _pod_verbs(result: RunResult) -> dict[str, list[str]]:
    """What each team's people (its ``<team>-submitter`` Role, components/tenancy.py) may do with
    pods; other Roles of the namespace (a SkyPilot task account's) are not the people's."""
    verbs = {}
    for r in result.resources:
        if r.type == "kubernetes:rbac.authorization.k8s.io/v1:Role" and r.inputs["metadata"]["name"].endswith(
            "-submitter"
        ):
            for rule in r.inputs["rules"]:
                if "pods" in rule["resources"]:
                    verbs[r.inputs["metadata"]["namespace"]] = rule["verbs"]
    return verbs


def test_prod_teams_submit_workload_kinds_not_bare_pods(prod: RunResult) -> None:
    """prod runs no pod integration, so a bare pod would bypass Kueue (issue 10 #9)."""
    verbs = _pod_verbs(prod)
    assert set(verbs) == {"research", "applied"}
    assert all("create" not in v for v in verbs.values())


def test_skypilot_pod_integration_is_scoped_to_the_team_namespaces() -> None:
    result = unedited_run("skypilot")
    assert all("create" in v for v in _pod_verbs(result).values())
    (kueue,) = [r for r in of_type(result, "kubernetes:helm.sh/v3:Release") if r.name == "kueue-release"]
    document = yaml.safe_load(kueue.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])
    assert document["managedJobsNamespaceSelector"] == {"matchLabels": {"gpu-batch/kueue-managed": "true"}}
    labelled = {
        r.inputs["metadata"]["name"]
        for r in of_type(result, "kubernetes:core/v1:Namespace")
        if r.inputs["metadata"].get("labels", {}).get("gpu-batch/kueue-managed") == "true"
    }
    assert labelled == {"team1", "team2"}


class TestGkeVersion:
    """No fixed minMasterVersion next to a release channel; the channel default is checked (hardening)."""

    def test_no_stack_pins_a_version(self) -> None:
        for stack in ("dev", "prod", "kai", "skypilot"):
            assert "minMasterVersion" not in config_value(stack, "gpu-batch:cluster"), stack

    def test_the_checked_channel_default_becomes_the_minimum(self, prod: RunResult) -> None:
        (cluster,) = of_type(prod, "gcp:container/cluster:Cluster")
        expected = OFFLINE_ENGINE_VERSIONS["releaseChannelDefaultVersion"]["STABLE"]
        assert cluster.inputs["minMasterVersion"] == expected
        assert prod.outputs["gkeVersion"]["channelDefault"] == expected

    def test_a_channel_too_old_for_queued_pools_is_one_line(self, monkeypatch: pytest.MonkeyPatch) -> None:
        old = {"releaseChannelDefaultVersion": {"REGULAR": "1.31.6-gke.1000000"}}
        monkeypatch.setattr("preview.mocks.OFFLINE_ENGINE_VERSIONS", old)
        with pytest.raises(ConfigError) as caught:
            run_stack("dev")
        assert str(caught.value).splitlines() == [
            "config error: gpu-batch:cluster.releaseChannel: got 'REGULAR', expected a channel whose default "
            "version is at least 1.32.2-gke.1652000 (queued pools need it; REGULAR's default in us-west1-b is "
            "1.31.6-gke.1000000), or minMasterVersion set to such a version"
        ]

    def test_an_explicit_minimum_below_flex_start_is_one_line(self) -> None:
        cluster = {**config_value("dev", "gpu-batch:cluster"), "minMasterVersion": "1.30"}
        with pytest.raises(ConfigError) as caught:
            run_stack("dev", {"gpu-batch:cluster": cluster})
        assert str(caught.value).splitlines() == [
            "config error: gpu-batch:cluster.minMasterVersion: got '1.30', expected 1.32.2-gke.1652000 or newer: "
            "pool(s) gpu-node-pool use flex-start with queued provisioning"
        ]

    def test_an_explicit_minimum_is_kept_and_not_looked_up(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr("preview.mocks.OFFLINE_ENGINE_VERSIONS", {})
        cluster = {**config_value("dev", "gpu-batch:cluster"), "minMasterVersion": "1.33.5-gke.1080000"}
        result = run_stack("dev", {"gpu-batch:cluster": cluster})
        assert (
            of_type(result, "gcp:container/cluster:Cluster")[0].inputs["minMasterVersion"]
            == "1.33.5-gke.1080000"
        )
