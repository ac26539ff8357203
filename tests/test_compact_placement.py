"""COMPACT placement where GKE allows it (issue 29): on by default for GPUDirect pools that are
single-zone, not queued, not on a reservation, and -- under flex-start -- A3 Ultra / A4 / H4D
(cluster-toolkit v1.95.0 gke-node-pool/main.tf preconditions, :mod:`gpu_batch_policy.facts.tas.placement`);
``compactPlacement: true`` where GKE refuses it is one line; the pack's flex-start rule agrees."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from gpu_batch_policy.primitives.values import plain

from stacks.errors import ConfigError
from tests.policies.pack_harness import Res, run
from tests.policies.pack_harness import policy as get_policy
from tests.stack_runner import config_value, run_stack

POOLS = "gpu-batch:gpuPools"


def _pools(index: int, **changes: Any) -> list[dict[str, Any]]:
    pools: list[dict[str, Any]] = copy.deepcopy(config_value("gpudirect", POOLS))
    pools[index].update(changes)
    for key in [k for k, v in changes.items() if v is None]:
        del pools[index][key]
    return pools


def _extra(**changes: Any) -> list[dict[str, Any]]:
    """The example pools plus one more A3 Ultra GPUDirect pool (no flavor routes to it)."""
    pools: list[dict[str, Any]] = copy.deepcopy(config_value("gpudirect", POOLS))
    extra = {"name": "a3ultra-x", "machineType": "a3-ultragpu-8g", "network": "gpudirect", "maxNodes": 2}
    pools.append({**extra, **changes})
    return pools


def _placement(pools: list[dict[str, Any]]) -> dict[str, Any]:
    result = run_stack("gpudirect", {POOLS: pools})
    found = {
        r.name: (r.inputs.get("placementPolicy") or {}).get("type")
        for r in result.resources
        if r.type == "gcp:container/nodePool:NodePool"
    }
    resources = [Res(r.type, r.name, plain(r.inputs), r.urn) for r in result.resources]
    assert run(get_policy("gke-compact-placement-flex-start"), resources).clean
    return found


def test_the_example_stack_keeps_its_pools_as_they_are() -> None:
    # A reservation pool (dense already) and a queued pool (GKE refuses COMPACT): none.
    found = _placement(config_value("gpudirect", POOLS))
    assert found["a3mega-tcpxo-pool"] is None and found["a3ultra-rdma-pool"] is None


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"provisioning": "spot"}, "COMPACT"),
        ({"provisioning": "on-demand"}, "COMPACT"),
        ({"provisioning": "flex-start"}, "COMPACT"),  # a3-ultragpu-: GKE allows it
        ({"provisioning": "spot", "network": "none"}, None),  # not a GPUDirect pool: not wanted
        ({"provisioning": "spot", "compactPlacement": False}, None),  # as written
    ],
)
def test_a3_ultra_pool_gets_compact_where_gke_allows_it(
    changes: dict[str, Any], expected: str | None
) -> None:
    assert _placement(_extra(**changes))["a3ultra-x-pool"] == expected


def test_flex_start_a3_mega_stays_spread_and_a_reservation_pool_too() -> None:
    mega_flex = _pools(0, provisioning="flex-start", reservation=None, compactPlacement=None)
    assert _placement(mega_flex)["a3mega-tcpxo-pool"] is None
    assert _placement(_pools(0, compactPlacement=None))["a3mega-tcpxo-pool"] is None


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"provisioning": "flex-start", "reservation": None, "compactPlacement": True},
            "gpu-batch:gpuPools[0].compactPlacement: got true, expected false (COMPACT placement with DWS "
            "flex-start is only supported for A3 Ultra, A4 and H4D)",
        ),
        (
            {"compactPlacement": True, "nodeLocations": ["us-central1-a", "us-central1-b"]},
            "gpu-batch:gpuPools[0].compactPlacement: got true, expected false (COMPACT placement is only "
            "available for node pools in a single zone)",
        ),
    ],
)
def test_compact_where_gke_refuses_it_is_one_line(changes: dict[str, Any], expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        run_stack("gpudirect", {POOLS: _pools(0, **changes)})
    assert expected in str(caught.value), str(caught.value)
