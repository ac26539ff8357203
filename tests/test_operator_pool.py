"""Issue 27, item 2: tenant pods without GPUs off the pool where the operators run.

Prod (and gpudirect) used to route every CPU-only pod set -- every Ray head -- to the ``cpu``
flavor on the system pool, next to the KubeRay operator, whose token creates pods and reads
Secrets in every namespace.  They now have a tenant CPU pool (``gpu-batch:cluster.tenantPool``)
and the flavor selects it.  The pack's ``kueue-flavor-on-operator-pool`` finds the operator pool
from the pools the rendered operator Deployments run on, never from a pool's name.
"""

from __future__ import annotations

from typing import Any

import pytest
from gpu_batch_policy.facts.model import StackModel
from gpu_batch_policy.facts.model.base import build_resource
from gpu_batch_policy.rules.tenancy import operator_pool

from components.gke import SYSTEM_POOL_TOLERATIONS
from stacks.errors import ConfigError
from tests.stack_runner import config_value, run_stack, unedited_run
from tests.test_tenancy_findings import Item, findings, items, level

RULE = "kueue-flavor-on-operator-pool"
NODE_POOL = "gcp:container/nodePool:NodePool"
STACKS_WITH_TENANT_POOL = ["prod", "gpudirect"]


def model(declared: list[Item]) -> StackModel:
    """The pack's own model: declared resources plus what the real Helm engine renders from
    each release, every rendered object tied to its release (``rendered_from``)."""
    return StackModel.with_releases_rendered(build_resource(t, p, u, n) for t, p, u, n in declared)


def flavors_on(stack: str, pool: str) -> dict[str, Any]:
    """The stack's queues with its `cpu` flavor pointed at ``pool``."""
    queues = config_value(stack, "gpu-batch:kueueQueues")
    (cpu,) = [f for f in queues["resourceFlavors"] if f["name"] == "cpu"]
    cpu["pool"] = pool
    return {"gpu-batch:kueueQueues": queues}


def cpu_flavor_on_system(stack: str, *, tolerate: bool) -> list[Item]:
    """The stack's resources with its rendered `cpu` ResourceFlavor selecting the system pool,
    with or without a toleration for the system pool's taint."""
    out: list[Item] = []
    for type_, given, urn, name in items(stack):
        props = given
        if type_.endswith(":ResourceFlavor") and props["metadata"]["name"] == "cpu":
            spec = {**props["spec"], "nodeLabels": {"cloud.google.com/gke-nodepool": "system"}}
            spec["tolerations"] = [dict(t) for t in SYSTEM_POOL_TOLERATIONS] if tolerate else []
            props = {**props, "spec": spec}
        out.append((type_, props, urn, name))
    return out


class TestTenantPool:
    @pytest.mark.parametrize("stack", STACKS_WITH_TENANT_POOL)
    def test_cpu_pod_sets_land_on_the_tenant_pool_not_the_operators(self, stack: str) -> None:
        result = unedited_run(stack)
        pools = {r.inputs["name"]: r.inputs for r in result.resources if r.type == NODE_POOL}
        system = config_value(stack, "gpu-batch:cluster").get("systemPool", {}).get("name", "system")
        tenant = config_value(stack, "gpu-batch:cluster")["tenantPool"]["name"]
        assert pools[system]["nodeConfig"]["labels"] == {"gpu-batch/pool-role": "system"}
        assert pools[tenant]["nodeConfig"]["labels"] == {"gpu-batch/pool-role": "tenant"}
        (cpu,) = [
            r.inputs
            for r in result.resources
            if r.type.endswith(":ResourceFlavor") and r.inputs["metadata"]["name"] == "cpu"
        ]
        assert cpu["spec"]["nodeLabels"] == {"cloud.google.com/gke-nodepool": tenant}

    @pytest.mark.parametrize("stack", STACKS_WITH_TENANT_POOL)
    def test_shipped_stacks_pass_and_the_system_pool_flavor_is_caught(self, stack: str) -> None:
        assert not findings(operator_pool.check_operator_pool, model(items(stack)), stack, RULE)
        # Another program's flavor (the pack judges any program) that selects the system pool
        # and tolerates its platform-only taint: its pods would run next to the operators.
        found = findings(
            operator_pool.check_operator_pool, model(cpu_flavor_on_system(stack, tolerate=True)), stack, RULE
        )
        assert len(found) == 1, found
        assert "ResourceFlavor 'cpu'" in found[0] and "node pool 'system'" in found[0]
        # Without the toleration the taint keeps its pods off the pool: nothing lands there.
        untolerated = model(cpu_flavor_on_system(stack, tolerate=False))
        assert not findings(operator_pool.check_operator_pool, untolerated, stack, RULE)

    @pytest.mark.parametrize("stack", STACKS_WITH_TENANT_POOL)
    def test_the_system_pool_is_tainted_for_the_platform_only(self, stack: str) -> None:
        """The taint GKE's own components tolerate; every operator release tolerates it."""
        result = unedited_run(stack)
        system = config_value(stack, "gpu-batch:cluster").get("systemPool", {}).get("name", "system")
        (pool,) = [r.inputs for r in result.resources if r.type == NODE_POOL and r.inputs["name"] == system]
        assert pool["nodeConfig"]["taints"] == [
            {"key": "components.gke.io/gke-managed-components", "value": "true", "effect": "NO_SCHEDULE"}
        ]

    def test_a_stack_without_a_tenant_pool_keeps_its_system_pool_untainted(self) -> None:
        result = unedited_run("dev")
        (pool,) = [r.inputs for r in result.resources if r.type == NODE_POOL and r.inputs["name"] == "system"]
        assert not pool["nodeConfig"].get("taints")

    def test_operators_really_run_on_the_system_pool(self) -> None:
        """The premise: the rendered KubeRay and Kueue Deployments select the system pool."""
        pools = operator_pool.operator_pools(model(items("prod")))
        ((pool, running),) = pools.values()
        assert pool.name == "system"
        assert sorted(running) == [  # in the model's order, which is the URNs' (canonical_order)
            "Deployment 'kuberay-system/kuberay-operator' (apps/v1) [rendered by Helm release 'kuberay-operator']",
            "Deployment 'kueue-system/kueue-controller-manager' (apps/v1) [rendered by Helm release 'kueue']",
        ]

    def test_level(self) -> None:
        assert level(RULE, "prod") == level(RULE, "gpudirect") == "mandatory"
        assert level(RULE, "dev") == "advisory"

    def test_a_flavor_on_the_tainted_system_pool_is_one_line(self) -> None:
        with pytest.raises(ConfigError) as err:
            run_stack("prod", flavors_on("prod", "system"))
        (line,) = str(err.value).splitlines()[-1:]
        assert "gpu-batch:kueueQueues.resourceFlavors[" in line and ".pool: got 'system'" in line
        assert "components.gke.io/gke-managed-components" in line

    def test_an_unknown_tenant_pool_in_a_flavor_is_one_line(self) -> None:
        with pytest.raises(ConfigError) as err:
            run_stack("prod", flavors_on("prod", "tenant-gpu"))
        assert "resourceFlavors[0].pool" in str(err.value) and "tenant-gpu" in str(err.value)

    def test_a_tenant_pool_named_like_the_system_pool_is_refused(self) -> None:
        cluster = config_value("prod", "gpu-batch:cluster")
        cluster["tenantPool"]["name"] = "system"
        with pytest.raises(ConfigError) as err:
            run_stack("prod", {"gpu-batch:cluster": cluster})
        assert "cluster.tenantPool.name" in str(err.value) and "system" in str(err.value)


KAI_QUEUE = "kubernetes:scheduling.run.ai/v2:Queue"


def kai_items(
    edits: dict[str, Any] | None = None, *, shard: str | None = None, key: str | None = None
) -> list[Item]:
    """The kai stack; ``shard``: label its leaf queue and its GPU pool with that node-pool value
    (``key``: the release's ``global.nodePoolLabelKey``)."""
    label = key or operator_pool.KAI_NODE_POOL_LABEL
    out: list[Item] = []
    for type_, given, urn, name in items("kai", edits):
        props = given
        if shard is not None and type_ == KAI_QUEUE and props["metadata"]["name"] == "team-a":
            props = {**props, "metadata": {**props["metadata"], "labels": {label: shard}}}
        if shard is not None and type_ == NODE_POOL and props["name"] == "l4-pool":
            node_config = {
                **props["nodeConfig"],
                "labels": {**props["nodeConfig"].get("labels", {}), label: shard},
            }
            props = {**props, "nodeConfig": node_config}
        if key is not None and type_ == "kubernetes:helm.sh/v3:Release" and props["name"] == "kai-scheduler":
            values = {**props["values"], "global": {**props["values"]["global"], "nodePoolLabelKey": key}}
            props = {**props, "values": values}
        out.append((type_, props, urn, name))
    return out


class TestKaiPlacement:
    """KAI v0.17.0 shards by the node-pool label: a leaf queue's pods land on its shard's nodes."""

    def test_the_default_shard_on_an_untainted_system_pool_is_flagged_once_per_leaf(self) -> None:
        found = findings(operator_pool.check_operator_pool, model(kai_items()), "kai", RULE)
        assert len(found) == 1, found  # team-a; its parent queue holds no pods
        assert "KAI Queue 'team-a'" in found[0] and "KAI's default shard" in found[0]
        assert "node pool 'system'" in found[0] and "kai-operator" in found[0]

    def test_a_tainted_system_pool_keeps_the_default_shard_off_it(self) -> None:
        cluster = config_value("kai", "gpu-batch:cluster")
        cluster["tenantPool"] = {"name": "tenant-cpu"}
        m = model(kai_items({"gpu-batch:cluster": cluster}))
        assert operator_pool.operator_pools(m)  # the operators still run there (they tolerate it)
        assert not findings(operator_pool.check_operator_pool, m, "kai", RULE)

    def test_a_shard_of_gpu_nodes_only_passes(self) -> None:
        assert not findings(operator_pool.check_operator_pool, model(kai_items(shard="gpu")), "kai", RULE)

    def test_the_release_s_own_node_pool_key_is_the_one_read(self) -> None:
        # The queue and pool carry `team/pool`; KAI reads that key, so team-a's shard is the GPU pool.
        m = model(kai_items(shard="gpu", key="team/pool"))
        assert not findings(operator_pool.check_operator_pool, m, "kai", RULE)
        # Read with the default key instead, team-a would be in the default shard (flagged).
        assert operator_pool.kai_node_pool_key(m) == "team/pool"
