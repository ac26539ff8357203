"""GKE's own GPU sharing on a pool (issue 20 item 4): what the program sends and what queues count.

With ``gpuSharing`` GKE's device plugin advertises ``maxSharedClientsPerGpu`` ``nvidia.com/gpu`` per
physical GPU (container-engine-accelerators ``pkg/gpu/nvidia/manager.go``), so the pool's exported
capacity, the pack's pool capacity and the report's largest gang all count those units.
"""

from __future__ import annotations

import copy
from typing import Any

from preview.report import render_report
from tests.stack_runner import config_value, named, run_stack
from tests.test_report import _row

POOLS = "gpu-batch:gpuPools"


def shared_dev_pools(clients: int = 4) -> list[dict[str, Any]]:
    pools: list[dict[str, Any]] = copy.deepcopy(config_value("dev", POOLS))
    pools[0]["gpuSharing"] = {"strategy": "TIME_SHARING", "maxSharedClientsPerGpu": clients}
    return pools


def test_the_pool_gets_gke_sharing_and_counts_units() -> None:
    result = run_stack("dev", {POOLS: shared_dev_pools()})
    pool = named(result, "gpu-node-pool-pool")
    (accelerator,) = pool.inputs["nodeConfig"]["guestAccelerators"]
    assert accelerator["gpuSharingConfig"] == {
        "gpuSharingStrategy": "TIME_SHARING",
        "maxSharedClientsPerGpu": 4,
    }
    assert accelerator["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "LATEST"}
    assert "gke-no-default-nvidia-gpu-device-plugin" not in pool.inputs["nodeConfig"]["labels"]


def test_the_report_counts_shared_units_and_says_so() -> None:
    report = render_report("dev", run_stack("dev", {POOLS: shared_dev_pools()}).resources, None)
    row = _row(report, "gpu-node-pool")
    assert row.startswith("| gpu-node-pool | g2-standard-4 | 4 | 10 | 40 |"), row
    assert "TIME_SHARING x4 (each GPU = 4 nvidia.com/gpu)" in row
    # The seed queue's largest gang is bounded by the pool's 40 shared units, not 10 GPUs.
    assert _row(report, "cluster-queue").startswith("| cluster-queue | - | l4-dws | 10000 | 0 | 40 |")
