"""Checks of each GPU pool's driver / device-plugin source and GKE GPU sharing, before any resource exists.

The rules are the policy pack's (``policies/gpu_batch_policy/facts/gpu_stack.py``: ``operator_problems``,
``unserved_problems`` and ``sharing_problems``), asked here of the typed config so the program and the pack never
disagree: a ``gpu-operator`` pool with a GKE driver, GKE sharing on a ``gpu-operator`` pool (GKE's
sharing lives in the device plugin such a pool turns off), or a ``maxSharedClientsPerGpu`` outside
GKE's range.  Plus GKE's minimum versions for its sharing strategies
(cloud.google.com/kubernetes-engine/docs/how-to/timesharing-gpus: Standard 1.23.7-gke.1400;
how-to/nvidia-mps-gpus: 1.27.7-gke.1088000).
"""

from __future__ import annotations

from collections.abc import Iterator

from components.gpu_pool import OPERATOR_IMAGE_TYPE
from stacks.checks.cluster import POOLS_KEY, gke_version
from stacks.config.cluster import ClusterConfig, GpuPoolConfig
from stacks.errors import ConfigIssue
from stacks.quantity import POLICIES_DIR

assert POLICIES_DIR  # importing stacks.quantity put the pack's package on sys.path

from gpu_batch_policy.facts.gpu_stack import (  # noqa: E402
    INSTALLATION_DISABLED,
    GpuSetup,
    SetupProblem,
    operator_problems,
    sharing_problems,
    unserved_problems,
)

SHARING_MIN_VERSION = {"TIME_SHARING": "1.23.7-gke.1400", "MPS": "1.27.7-gke.1088000"}
_KEYS = {
    "driver": "driverVersion",
    "device-plugin-label": "gpuStack",
    "sharing-strategy": "gpuSharing.strategy",
    "shared-clients": "gpuSharing.maxSharedClientsPerGpu",
    "image-type": "gpuStack",
}


def pool_setup(pool: GpuPoolConfig) -> GpuSetup:
    """The settings the program will send for this pool (components/gpu_pool.py)."""
    operator = pool.gpu_stack == "gpu-operator"
    sharing = pool.gpu_sharing
    return GpuSetup(
        driver_version=pool.driver_version or (INSTALLATION_DISABLED if operator else "LATEST"),
        device_plugin_label="true" if operator else None,
        operands_label=None,
        sharing_strategy=sharing.strategy if sharing else None,
        max_shared_clients=sharing.max_shared_clients_per_gpu if sharing else None,
        image_type=OPERATOR_IMAGE_TYPE if operator else None,
    )


def _issue(at: str, pool: GpuPoolConfig, problem: SetupProblem) -> ConfigIssue:
    expected = problem.expected
    if problem.setting == "sharing-strategy" and pool.gpu_stack == "gpu-operator":
        expected = (
            "no gpuSharing with gpuStack: gpu-operator ("
            + expected.removeprefix("no GKE GPU sharing: ")
            + ")"
        )
    return ConfigIssue(f"{at}.{_KEYS[problem.setting]}", expected, problem.value)


def check_gpu_stacks(cluster: ClusterConfig, pools: list[GpuPoolConfig]) -> Iterator[ConfigIssue]:
    for index, pool in enumerate(pools):
        at = f"{POOLS_KEY}[{index}]"
        setup = pool_setup(pool)
        operator = pool.gpu_stack == "gpu-operator"
        # The program's GPU Operator runs NVIDIA's Driver Manager (components/gpu_operator.py).
        served = (
            operator_problems(setup, operator, driver_container=operator)
            if operator
            else unserved_problems(setup)
        )
        for problem in [*served, *sharing_problems(setup)]:
            yield _issue(at, pool, problem)
        version = cluster.min_master_version
        if pool.gpu_sharing is not None and version is not None:
            needed = SHARING_MIN_VERSION[pool.gpu_sharing.strategy]
            if gke_version(version) < gke_version(needed):
                yield ConfigIssue(
                    "gpu-batch:cluster.minMasterVersion",
                    f"{needed} or newer: pool {pool.name} uses GKE {pool.gpu_sharing.strategy}",
                    version,
                )
