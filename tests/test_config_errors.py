"""Every class of stack-config mistake ends in one line: key path, value given, what is expected.

Each case edits one thing in the dev stack and runs the real program, so a regression in the
models, the cross-key checks or the loader's error translation shows up here.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from stacks.errors import ConfigError
from tests.stack_runner import config_value, run_stack

CLUSTER = "gpu-batch:cluster"
POOLS = "gpu-batch:gpuPools"


def _pool(**changes: Any) -> list[dict[str, Any]]:
    pool = copy.deepcopy(config_value("dev", POOLS)[0])
    for key, value in changes.items():
        if value is None:
            pool.pop(key, None)
        else:
            pool[key] = value
    return [pool]


def _cluster(path: str, value: Any) -> dict[str, Any]:
    cluster: dict[str, Any] = copy.deepcopy(config_value("dev", CLUSTER))
    node = cluster
    *parents, leaf = path.split(".")
    for part in parents:
        node = node[part]
    node[leaf] = value
    return cluster


def config_error(edits: dict[str, Any], drop: tuple[str, ...] = ()) -> str:
    with pytest.raises(ConfigError) as caught:
        run_stack("dev", edits, drop)
    return str(caught.value)


CASES = [
    # (edits, expected path, expected fragment of the message)
    ({POOLS: _pool(maxNodes="10")}, f"{POOLS}[0].maxNodes", "got '10', expected an integer"),
    ({POOLS: _pool(maxNodes=-1)}, f"{POOLS}[0].maxNodes", "got -1, expected a number >= 1"),
    ({POOLS: _pool(maxNodes=0)}, f"{POOLS}[0].maxNodes", "got 0, expected a number >= 1"),
    ({POOLS: _pool(maxNode=3)}, f"{POOLS}[0].maxNode", "did you mean maxNodes?"),
    ({POOLS: _pool(maxNodes=None)}, f"{POOLS}[0].maxNodes", "missing, expected"),
    ({POOLS: _pool(name="")}, f"{POOLS}[0].name", "got '', expected"),
    ({POOLS: _pool(machineType="n1-standard-4")}, f"{POOLS}[0].machineType", "expected a GPU machine type"),
    ({POOLS: _pool(machineType="g2-standard4")}, f"{POOLS}[0].machineType", "did you mean g2-standard-4?"),
    ({POOLS: _pool(acceleratorType="nvidia-tesla-t4")}, f"{POOLS}[0].acceleratorType", "'nvidia-l4'"),
    (
        {POOLS: _pool(acceleratorCount=2)},
        f"{POOLS}[0].acceleratorCount",
        "expected 1, the GPUs g2-standard-4",
    ),
    ({POOLS: _pool(provisioning="preemptible")}, f"{POOLS}[0].provisioning", "expected one of"),
    ({POOLS: _pool(minNodes=1)}, f"{POOLS}[0].minNodes", "GKE refuses it on a queued pool"),
    ({POOLS: _pool(reservation="my-res")}, f"{POOLS}[0].reservation", "GKE refuses it on a queued pool"),
    ({POOLS: _pool(compactPlacement=True)}, f"{POOLS}[0].compactPlacement", "GKE refuses it"),
    ({POOLS: _pool(autoRepair=True)}, f"{POOLS}[0].autoRepair", "GKE refuses it"),
    (
        {POOLS: _pool(provisioning="on-demand", minNodes=5, maxNodes=2)},
        f"{POOLS}[0].minNodes",
        "expected at most maxNodes (2)",
    ),
    ({POOLS: _pool(provisioning="reservation")}, f"{POOLS}[0].reservation", "missing, expected the name"),
    ({POOLS: _pool(maxRunDuration="3600s")}, f"{POOLS}[0].maxRunDuration", "only flex-start"),
    ({POOLS: _pool() + _pool()}, f"{POOLS}[1].name", "not used by another GPU pool"),
    ({POOLS: {"name": "x"}}, POOLS, "expected a list"),
    (
        {CLUSTER: _cluster("location", "us west")},
        f"{CLUSTER}.location",
        "expected a GCP zone such as us-west1-b",
    ),
    (
        {CLUSTER: _cluster("minMasterVersion", "1.27")},
        f"{CLUSTER}.minMasterVersion",
        "1.28.3-gke.1098000 or newer",
    ),
    ({CLUSTER: _cluster("releaseChannel", "FAST")}, f"{CLUSTER}.releaseChannel", "expected one of"),
    (
        {CLUSTER: _cluster("deletionProtection", "yes")},
        f"{CLUSTER}.deletionProtection",
        "expected true or false",
    ),
    (
        {CLUSTER: _cluster("systemPool.minNodes", 3)},
        f"{CLUSTER}.systemPool.minNodes",
        "at most systemPool.maxNodes (1)",
    ),
    (
        {CLUSTER: _cluster("systemPool.maxNodes", 0)},
        f"{CLUSTER}.systemPool.maxNodes",
        "expected a number >= 1",
    ),
    (
        {"gpu-batch:gpuPool": []},
        "gpu-batch:gpuPool",
        "got 'gpuPool', expected a known key (did you mean gpuPools?)",
    ),
    ({POOLS: _pool(name="GPU_pool")}, f"{POOLS}[0].name", "expected a lowercase DNS label"),
]


@pytest.mark.parametrize(("edits", "path", "fragment"), CASES, ids=[f"{c[1]}:{c[2][:30]}" for c in CASES])
def test_each_mistake_is_one_clear_line(edits: dict[str, Any], path: str, fragment: str) -> None:
    message = config_error(edits)
    lines = message.splitlines()
    assert len(lines) == 1, message
    assert lines[0].startswith(f"config error: {path}: "), message
    assert fragment in lines[0], message


def test_missing_required_key() -> None:
    message = config_error({}, drop=(CLUSTER,))
    assert message == "config error: gpu-batch:cluster: missing, expected a value (this key is required)"


def test_missing_gcp_project() -> None:
    message = config_error({}, drop=("gcp:project",))
    assert message.startswith("config error: gcp:project: missing, expected the GCP project id")


def test_several_mistakes_give_one_line_each() -> None:
    message = config_error({POOLS: _pool(maxNodes=-1, driverVersion="OLD")})
    assert len(message.splitlines()) == 2
    assert f"{POOLS}[0].driverVersion" in message
