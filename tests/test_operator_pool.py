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
from gpu_batch_policy.model import StackModel
from gpu_batch_policy.model.base import build_resource
from gpu_batch_policy.rules import operator_pool

from stacks.errors import ConfigError
from tests.stack_runner import config_value, run_stack
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


class TestTenantPool:
    @pytest.mark.parametrize("stack", STACKS_WITH_TENANT_POOL)
    def test_cpu_pod_sets_land_on_the_tenant_pool_not_the_operators(self, stack: str) -> None:
        result = run_stack(stack)
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
        found = findings(
            operator_pool.check_operator_pool, model(items(stack, flavors_on(stack, "system"))), stack, RULE
        )
        assert len(found) == 1, found
        assert "ResourceFlavor 'cpu'" in found[0] and "node pool 'system'" in found[0]

    def test_operators_really_run_on_the_system_pool(self) -> None:
        """The premise: the rendered KubeRay and Kueue Deployments select the system pool."""
        pools = operator_pool.operator_pools(model(items("prod")))
        ((pool, running),) = pools.values()
        assert pool.name == "system"
        assert running == [
            "Deployment 'kueue-system/kueue-controller-manager' (apps/v1) [rendered by Helm release 'kueue']",
            "Deployment 'kuberay-system/kuberay-operator' (apps/v1) [rendered by Helm release 'kuberay-operator']",
        ]

    def test_level(self) -> None:
        assert level(RULE, "prod") == level(RULE, "gpudirect") == "mandatory"
        assert level(RULE, "dev") == "advisory"

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
