"""Day two (issue 21): the routine edits a platform team makes on every later `pulumi up`.

Each test runs the stack's real program twice under the SDK's mocks, before and after one config
edit, and compares the two recorded plans the way the engine would: a changed input that the
provider marks ForceNew replaces the resource (:mod:`preview.replacements`, from
terraform-provider-google's node pool, node config and cluster schemas), unless the resource's
``ignoreChanges`` keeps the old value.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.gates.runtime import must_wait_again
from components.readiness_gate import fingerprint
from preview.records import RecordedResource
from preview.replacements import CLUSTER, NODE_POOL, replacing_paths
from tests.stack_runner import config_value, of_type, run_stack, unedited_run

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

ROUTER_NAT = "gcp:compute/routerNat:RouterNat"
ROUTER = "gcp:compute/router:Router"
FIREWALL = "gcp:compute/firewall:Firewall"
IAM_MEMBER = "gcp:projects/iAMMember:IAMMember"


def _by_name(records: list[RecordedResource], type_token: str) -> dict[str, RecordedResource]:
    return {r.name: r for r in records if r.type == type_token}


def replaced(stack: str, key: str, edit: Any) -> dict[str, list[str]]:
    """Per node pool and cluster: the ForceNew paths an edit of ``key`` changes (ignoreChanges
    applied), for the stack as written vs the stack with ``edit`` applied to a copy of ``key``."""
    value = copy.deepcopy(config_value(stack, key))
    edit(value)
    before, after = unedited_run(stack).resources, run_stack(stack, {key: value}).resources
    changed: dict[str, list[str]] = {}
    for type_token in (NODE_POOL, CLUSTER):
        old, new = _by_name(before, type_token), _by_name(after, type_token)
        for name in old.keys() & new.keys():
            paths = replacing_paths(type_token, old[name].inputs, new[name].inputs, new[name].ignore_changes)
            if paths:
                changed[name] = paths
    return changed


def _set(path: tuple[str | int, ...], value: Any) -> Any:
    def apply(doc: Any) -> None:
        for step in path[:-1]:
            doc = doc[step]
        doc[path[-1]] = value

    return apply


@pytest.mark.parametrize(
    ("stack", "key", "path", "value"),
    [
        ("prod", "gpu-batch:cluster", ("systemPool", "minNodes"), 2),
        ("prod", "gpu-batch:cluster", ("systemPool", "maxNodes"), 5),
        ("prod", "gpu-batch:gpuPools", (0, "maxNodes"), 12),
        ("dev", "gpu-batch:gpuPools", (0, "maxNodes"), 20),
    ],
)
def test_routine_size_edits_replace_nothing(
    stack: str, key: str, path: tuple[str | int, ...], value: int
) -> None:
    """minNodes feeds ``initialNodeCount``, ForceNew in resource_container_node_pool.go; the pools
    keep it in ``ignoreChanges``, so the edit updates the autoscaling limits in place."""
    assert replaced(stack, key, _set(path, value)) == {}


def test_without_ignore_changes_the_same_edit_would_replace_the_system_pool() -> None:
    """The check above can fail: the raw inputs do differ in the ForceNew ``initialNodeCount``."""
    value = copy.deepcopy(config_value("prod", "gpu-batch:cluster"))
    value["systemPool"]["minNodes"] = 2
    old = _by_name(unedited_run("prod").resources, NODE_POOL)["gpu-batch-prod-system"]
    new = _by_name(run_stack("prod", {"gpu-batch:cluster": value}).resources, NODE_POOL)[
        "gpu-batch-prod-system"
    ]
    assert replacing_paths(NODE_POOL, old.inputs, new.inputs) == ["initialNodeCount"]
    assert new.ignore_changes == ["initialNodeCount"]


def test_keys_that_must_replace_are_reported() -> None:
    """A different driver version is ForceNew (node_config.go, gpu_driver_installation_config)."""
    changed = replaced("dev", "gpu-batch:gpuPools", _set((0, "driverVersion"), "DEFAULT"))
    assert changed == {
        "gpu-node-pool-pool": ["nodeConfig.guestAccelerators.gpuDriverInstallationConfig.gpuDriverVersion"]
    }


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_turning_dataplane_v2_on_or_off_replaces_the_cluster(stack: str) -> None:
    """``datapath_provider`` is ForceNew (terraform-provider-google
    resource_container_cluster.go): the plan diff must show a new cluster, which the protected
    prod stack then refuses (issue 27 #3)."""
    flipped = not config_value(stack, "gpu-batch:cluster").get("dataplaneV2", False)
    changed = replaced(stack, "gpu-batch:cluster", _set(("dataplaneV2",), flipped))
    assert [paths for name, paths in changed.items() if "cluster" in name] == [["datapathProvider"]]


def test_the_master_version_is_set_once_from_the_channel_default() -> None:
    """Re-derived every run, a newer channel default would raise ``minMasterVersion`` and the
    provider upgrades the master at once; the cluster keeps the creation-time value instead.  A
    version the user writes is applied (not ignored)."""
    [cluster] = of_type(unedited_run("prod"), CLUSTER)
    assert "minMasterVersion" in cluster.ignore_changes and cluster.inputs["minMasterVersion"]
    value = copy.deepcopy(config_value("prod", "gpu-batch:cluster"))
    value["minMasterVersion"] = "1.34"
    [pinned] = of_type(run_stack("prod", {"gpu-batch:cluster": value}), CLUSTER)
    assert pinned.inputs["minMasterVersion"] == "1.34" and "minMasterVersion" not in pinned.ignore_changes


def test_the_default_pool_runs_as_the_node_account_without_replacing_clusters() -> None:
    """The cluster's short-lived default pool no longer uses the Compute Engine default account;
    ``nodeConfig`` is ForceNew on the cluster, so it is in ``ignoreChanges`` for existing ones."""
    [cluster] = of_type(unedited_run("prod"), CLUSTER)
    assert cluster.inputs["nodeConfig"]["serviceAccount"]  # the dedicated account's email
    assert "nodeConfig" in cluster.ignore_changes


def test_pools_wait_for_their_service_accounts_roles() -> None:
    """Nodes created before ``roles/container.defaultNodeServiceAccount`` is bound cannot report
    node status or write logs (GKE "Configure GKE node service accounts")."""
    result = unedited_run("prod")
    bindings = {r.urn for r in of_type(result, IAM_MEMBER) if "nodes-" in r.name}
    assert len(bindings) == 2
    for pool in of_type(result, NODE_POOL):
        assert bindings <= set(pool.dependencies), pool.name


def test_nat_serves_only_the_clusters_subnetwork() -> None:
    """Not ALL_SUBNETWORKS_ALL_IP_RANGES, which the Compute API refuses beside another NAT."""
    [nat] = of_type(unedited_run("prod"), ROUTER_NAT)
    assert nat.inputs["sourceSubnetworkIpRangesToNat"] == "LIST_OF_SUBNETWORKS"
    [subnet] = nat.inputs["subnetworks"]
    assert subnet["name"].endswith("/regions/us-central1/subnetworks/default")
    assert subnet["sourceIpRangesToNats"] == ["ALL_IP_RANGES"]


def test_an_existing_nat_and_firewall_are_reused() -> None:
    value = copy.deepcopy(config_value("prod", "gpu-batch:cluster"))
    value["existingNat"] = "host-project-nat"
    value["existingWebhookFirewall"] = "gke-webhooks"
    result = run_stack("prod", {"gpu-batch:cluster": value})
    assert not of_type(result, ROUTER_NAT) and not of_type(result, ROUTER) and not of_type(result, FIREWALL)
    assert of_type(unedited_run("prod"), FIREWALL)


@pytest.mark.parametrize("stack", ["dev", "prod", "kai", "skypilot"])
def test_every_release_sets_its_helm_timeout(stack: str) -> None:
    """``atomic`` implies Helm's ``--wait``; with no ``timeout`` the release rolls back after
    Helm's 300 s default, whatever it waits for (a LoadBalancer address, a PVC, DaemonSets on
    every node).  Each release names its own, sized in its component."""
    releases = of_type(unedited_run(stack), "kubernetes:helm.sh/v3:Release")
    assert releases
    for release in releases:
        assert release.inputs.get("atomic") is True, release.name
        assert release.inputs.get("timeout", 0) >= 300, release.name
    if stack == "kai":
        timeouts = {r.name: r.inputs["timeout"] for r in releases}
        assert max(timeouts.values()) > 300  # the GPU Operator waits for NFD on every node


@pytest.mark.parametrize(
    ("stack", "gate", "release"),
    [
        ("dev", "kueue-webhooks-ready", "kueue-release"),
        ("kai", "kai-webhooks-ready", "kai-scheduler-release"),
        ("kai", "gpu-runtime-class-ready", "gpu-operator-release"),
    ],
)
def test_gates_carry_their_releases_fingerprint(stack: str, gate: str, release: str) -> None:
    """A gate waits again on ``pulumi up`` exactly when its release is upgraded: the release's
    chart, version and values are one of the gate's inputs (components/readiness_gate.py)."""
    records = unedited_run(stack).resources
    by_name = {r.name: r for r in records}
    installed = by_name[release].inputs
    expected = fingerprint([installed["chart"], installed["version"], installed.get("values", {})])
    assert by_name[gate].inputs["installed"] == expected


def test_a_kueue_values_edit_makes_the_gate_wait_again() -> None:
    """Editing what Kueue's release installs (here its waitForPodsReady timeout) changes the
    gate's input, so the engine updates the gate -- and its provider's ``update`` probes again
    (``must_wait_again``) -- before the queue objects that depend on it."""
    before = {r.name: r for r in unedited_run("dev").resources}["kueue-webhooks-ready"]
    kueue = copy.deepcopy(config_value("dev", "gpu-batch:kueue"))
    kueue["waitForPodsReady"]["timeout"] = "20m"
    after = {r.name: r for r in run_stack("dev", {"gpu-batch:kueue": kueue}).resources}[
        "kueue-webhooks-ready"
    ]
    assert before.inputs["installed"] != after.inputs["installed"]
    assert must_wait_again(before.inputs, after.inputs)


def test_a_pool_network_change_replaces_the_pool() -> None:
    """``network_config.additional_node_network_configs`` is ForceNew (resource_container_node_pool.go
    ``schemaNodePool``): GKE cannot change a node's interfaces, so dropping GPUDirect from a pool
    replaces it."""
    changed = replaced("gpudirect", "gpu-batch:gpuPools", _set((1, "network"), "none"))
    assert list(changed) == ["a3ultra-rdma-pool"]
    assert changed["a3ultra-rdma-pool"][0] == "networkConfig.additionalNodeNetworkConfigs"


def test_turning_gpudirect_on_replaces_the_pool_and_dataplane_v2_is_forcenew() -> None:
    """GPUDirect on prod's A3 High pool adds its 4 NICs (pool replaced).  It needs Dataplane V2,
    which prod already runs (``dataplaneV2: true``); turning that off is a new cluster, as
    ``datapath_provider`` is ForceNew (resource_container_cluster.go)."""
    changed = replaced("prod", "gpu-batch:gpuPools", lambda pools: pools[1].update(network="gpudirect"))
    assert list(changed) == ["h100-queued-pool"]
    assert changed["h100-queued-pool"][0] == "networkConfig.additionalNodeNetworkConfigs"
    assert config_value("prod", "gpu-batch:cluster")["dataplaneV2"] is True
    off = replaced("prod", "gpu-batch:cluster", lambda cluster: cluster.update(dataplaneV2=False))
    assert any("datapathProvider" in paths for paths in off.values())  # a cluster input only
