"""Issue 20 on the kai stack: each defect put back into the real program's resources is caught.

The program runs under the preview mocks (``tests/stack_runner.py``) and the pack judges its
resources as the engine would hand them over, releases included (the pack renders them with the
real Helm engine and adds the RuntimeClasses the GPU Operator's controller creates).  Each test
first shows today's stack clean for the rule, then puts one defect back:

- the pool's GPUs from GKE's driver and device plugin while KAI pods ask for fractions;
- the ``gke-no-default-nvidia-gpu-device-plugin`` label missing from the GPU Operator pool;
- the critical-priority ResourceQuota missing from the operator's namespace;
- KAI's fraction runtime class set to ``""`` under the GPU Operator (issue 10's workaround).

Config mistakes around the same settings end in one config-error line (``stacks/checks/gpu_stack.py``).
"""

from __future__ import annotations

import copy
import functools
import json
from typing import Any

import pytest
from gpu_batch_policy.primitives.values import plain

from stacks.errors import ConfigError
from tests.policies.pack_harness import Res, Run, policy, run
from tests.stack_runner import config_value, run_stack, shared_unless_edited, unedited_run

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

POOLS = "gpu-batch:gpuPools"
NODE_POOL = "gcp:container/nodePool:NodePool"
RESOURCE_QUOTA = "kubernetes:core/v1:ResourceQuota"
RELEASE = "kubernetes:helm.sh/v3:Release"
RULES = (
    "gpu-pool-driver-stack",
    "kai-fractions-need-gpu-operator",
    "gpu-operator-critical-quota",
    "kai-runtime-class-on-gke",
    "runtime-and-priority-classes-exist",
)


@functools.lru_cache(maxsize=4)
def _program(pools_json: str | None) -> tuple[Res, ...]:
    edits = None if pools_json is None else {POOLS: pools_json}
    return tuple(
        Res(r.type, r.name, plain(r.inputs), r.urn) for r in shared_unless_edited("kai", edits).resources
    )


def program(pools: list[dict[str, Any]] | None = None) -> list[Res]:
    return copy.deepcopy(list(_program(None if pools is None else json.dumps(pools))))


def judge(rule: str, resources: list[Res]) -> Run:
    return run(policy(rule), resources)


def kai_pools(**changes: Any) -> list[dict[str, Any]]:
    pools: list[dict[str, Any]] = copy.deepcopy(config_value("kai", POOLS))
    pools[0].update(changes)
    return [{k: v for k, v in pool.items() if v is not None} for pool in pools]


@pytest.mark.parametrize("rule", RULES)
def test_the_kai_stack_is_clean(rule: str) -> None:
    result = judge(rule, program())
    assert result.clean, result.text()


def test_gke_managed_drivers_with_fractions_are_caught() -> None:
    resources = program(kai_pools(gpuStack="gke"))
    assert not [r for r in resources if r.type == RELEASE and r.props["chart"] == "gpu-operator"]
    result = judge("kai-fractions-need-gpu-operator", resources)
    (message,) = result.messages
    assert "raycluster-half-gpu" in result.text() and "'l4-pool' (gke)" in message
    assert "pods of shared-gpu ask KAI for part of a GPU (gpu-fraction: 0.5)" in message
    assert "gpuStack: gpu-operator" in message
    # ...and the class KAI injects into them exists nowhere, with the operator as the fix.
    (message,) = judge("kai-runtime-class-on-gke", resources).messages
    assert "install the NVIDIA GPU Operator" in message


def _gpu_pool(resources: list[Res]) -> Res:
    (pool,) = [r for r in resources if r.type == NODE_POOL and r.props.get("name") == "l4-pool"]
    return pool


def test_a_missing_device_plugin_label_is_caught() -> None:
    resources = program()
    labels = _gpu_pool(resources).props["nodeConfig"]["labels"]
    assert labels.pop("gke-no-default-nvidia-gpu-device-plugin") == "true"
    (message,) = judge("gpu-pool-driver-stack", resources).messages
    assert "GKE NodePool 'l4-pool'" in message
    assert "nodeConfig.labels.gke-no-default-nvidia-gpu-device-plugin is unset" in message


def test_a_gke_driver_on_the_operator_pool_is_caught() -> None:
    resources = program()
    accelerator = _gpu_pool(resources).props["nodeConfig"]["guestAccelerators"][0]
    assert accelerator["gpuDriverInstallationConfig"]["gpuDriverVersion"] == "INSTALLATION_DISABLED"
    accelerator["gpuDriverInstallationConfig"]["gpuDriverVersion"] = "LATEST"
    (message,) = judge("gpu-pool-driver-stack", resources).messages
    assert "gpuDriverVersion is 'LATEST' while the NVIDIA GPU Operator manages the pool" in message


def test_a_missing_critical_priority_quota_is_caught() -> None:
    resources = [r for r in program() if r.type != RESOURCE_QUOTA]
    (message,) = judge("gpu-operator-critical-quota", resources).messages
    assert "namespace 'gpu-operator' has no ResourceQuota scoped to PriorityClass" in message


def test_an_empty_kai_runtime_class_under_the_operator_is_caught() -> None:
    resources = program()
    (kai,) = [r for r in resources if r.type == RELEASE and r.props["chart"].endswith("/kai-scheduler")]
    assert kai.props["values"]["admission"]["gpuFractionRuntimeClassName"] == "nvidia"
    kai.props["values"]["admission"]["gpuFractionRuntimeClassName"] = ""
    (message,) = judge("kai-runtime-class-on-gke", resources).messages
    assert "nothing reads the NVIDIA_VISIBLE_DEVICES" in message


def test_the_kai_workloads_wait_for_the_operator_runtime_class() -> None:
    result = unedited_run("kai")
    (gate,) = [r for r in result.resources if r.name == "gpu-runtime-class-ready"]
    (release,) = [r for r in result.resources if r.name == "gpu-operator-release"]
    assert release.urn in gate.dependencies
    for name in ("team-a-raycluster-half-gpu", "team-a-raycluster-sample"):
        (workload,) = [r for r in result.resources if r.name == name]
        assert gate.urn in workload.dependencies, name


# --- config checks (one line each, reusing the pack's gpu_stack logic) -------------------------
def config_error(pools: list[dict[str, Any]]) -> str:
    with pytest.raises(ConfigError) as caught:
        run_stack("kai", {POOLS: pools})
    return str(caught.value)


@pytest.mark.parametrize(
    ("changes", "line"),
    [
        (
            {"driverVersion": "LATEST"},
            "gpu-batch:gpuPools[0].driverVersion: got 'LATEST', expected INSTALLATION_DISABLED",
        ),
        (
            {"gpuSharing": {"strategy": "TIME_SHARING", "maxSharedClientsPerGpu": 2}},
            "gpu-batch:gpuPools[0].gpuSharing.strategy: got 'TIME_SHARING', expected no gpuSharing with "
            "gpuStack: gpu-operator",
        ),
        (
            {"gpuStack": "gke", "gpuSharing": {"strategy": "MPS", "maxSharedClientsPerGpu": 64}},
            "gpu-batch:gpuPools[0].gpuSharing.maxSharedClientsPerGpu: got 64, expected 2 to 48",
        ),
        (
            {"gpuStack": "gke", "driverVersion": "INSTALLATION_DISABLED"},
            "gpu-batch:gpuPools[0].driverVersion: got 'INSTALLATION_DISABLED', expected a driver",
        ),
        (
            {"gpuStack": "gke", "gpuSharing": {"strategy": "SPACE", "maxSharedClientsPerGpu": 2}},
            "gpu-batch:gpuPools[0].gpuSharing.strategy",
        ),
    ],
)
def test_config_mistakes_are_one_line(changes: dict[str, Any], line: str) -> None:
    assert line in config_error(kai_pools(**changes))


def test_the_operator_operands_count_toward_gpu_node_fit() -> None:
    """The operand DaemonSets exist only at run time; the pack models them from the ClusterPolicy."""
    resources = program()
    assert judge("pod-template-fits-a-node", resources).clean
    (operator,) = [r for r in resources if r.type == RELEASE and r.props["chart"] == "gpu-operator"]
    operator.props["values"]["driver"]["resources"] = {"requests": {"memory": "64Gi"}}
    (message,) = judge("pod-template-fits-a-node", resources).messages
    assert "DaemonSet 'gpu-operator/nvidia-driver-daemonset'" in message
    assert "GKE NodePool 'l4-pool'" in message


def test_gke_sharing_needs_its_minimum_gke_version() -> None:
    cluster = {**config_value("kai", "gpu-batch:cluster"), "minMasterVersion": "1.26"}
    pools = kai_pools(gpuStack="gke", gpuSharing={"strategy": "MPS", "maxSharedClientsPerGpu": 4})
    with pytest.raises(ConfigError) as caught:
        run_stack("kai", {POOLS: pools, "gpu-batch:cluster": cluster})
    assert (
        "gpu-batch:cluster.minMasterVersion: got '1.26', expected 1.27.7-gke.1088000 or newer: "
        "pool l4-pool uses GKE MPS"
    ) in str(caught.value)


def test_cos_nodes_under_the_driver_manager_are_caught() -> None:
    resources = program()
    config = _gpu_pool(resources).props["nodeConfig"]
    assert config["imageType"] == "UBUNTU_CONTAINERD"
    config["imageType"] = "COS_CONTAINERD"
    (message,) = judge("gpu-pool-driver-stack", resources).messages
    assert "nodeConfig.imageType is 'COS_CONTAINERD'" in message
