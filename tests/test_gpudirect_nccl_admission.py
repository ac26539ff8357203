"""Issue 39: a team's own GPU pod on a GPUDirect pool must load the NCCL settings.

The ValidatingAdmissionPolicy's CEL (``components/gpudirect/nccl_admission.py``) runs with
cel-python over pods as Kueue creates them (its flavor's ``nodeLabels`` in ``nodeSelector``): the
pod the program's own wiring makes is admitted, the same pod without the script line or (TCPXO)
without ``NCCL_LIB_DIR`` is refused, and pods off GPUDirect pools or without GPUs are not judged.
The pack's ``missing_nccl_env`` gives the same verdict on each, so the two cannot drift.
"""

from __future__ import annotations

import copy
from typing import Any

import celpy
import pytest
from celpy.adapter import json_to_cel
from gpu_batch_policy.facts.gpudirect.nccl_env import missing_nccl_env
from gpu_batch_policy.facts.gpudirect.profiles import PROFILES

from components.gpudirect.nccl_admission import policy_spec
from components.gpudirect.pod_wiring import pod_wiring
from components.workloads import RayPodArgs, pod_template

POOLS = {"TCPXO": ["a3mega-tcpxo"], "RDMA": ["a3ultra-rdma"]}
MACHINE = {"TCPXO": "a3-megagpu-8g", "RDMA": "a3-ultragpu-8g"}


def admitted(pod: dict[str, Any]) -> bool:
    env = celpy.Environment()
    verdicts = []
    for validation in policy_spec(POOLS)["validations"]:
        program = env.program(env.compile(validation["expression"]))
        verdicts.append(bool(program.evaluate({"object": json_to_cel(pod)})))
    return all(verdicts)


def wired_pod(stack: str, pool: str | None = None) -> dict[str, Any]:
    profile = PROFILES[MACHINE[stack]]
    template = pod_template(
        RayPodArgs(image="ray", cpu="8", memory="64Gi", gpu=8, gpudirect=pod_wiring(profile)), "ray-worker"
    )
    spec = copy.deepcopy(template["spec"])
    spec["nodeSelector"] = {"cloud.google.com/gke-nodepool": pool or POOLS[stack][0]}
    return {"kind": "Pod", "metadata": {"name": "w"}, "spec": spec}


@pytest.mark.parametrize("stack", sorted(POOLS))
def test_the_programs_wiring_is_admitted_and_agrees_with_the_pack(stack: str) -> None:
    pod = wired_pod(stack)
    assert admitted(pod)
    assert missing_nccl_env(PROFILES[MACHINE[stack]], pod["spec"]) == []


@pytest.mark.parametrize("stack", sorted(POOLS))
def test_a_gpu_container_without_the_script_is_refused(stack: str) -> None:
    pod = wired_pod(stack)
    del pod["spec"]["containers"][0]["args"]
    assert not admitted(pod)
    assert missing_nccl_env(PROFILES[MACHINE[stack]], pod["spec"])


def test_tcpxo_without_nccl_lib_dir_is_refused() -> None:
    pod = wired_pod("TCPXO")
    main = pod["spec"]["containers"][0]
    main["env"] = [e for e in main["env"] if e["name"] != "NCCL_LIB_DIR"]
    assert not admitted(pod)
    assert missing_nccl_env(PROFILES["a3-megagpu-8g"], pod["spec"])


def test_the_users_own_snippet_is_admitted() -> None:
    """The snippet docs/multi-node-training.md gives for a team's own Job on the TCPXO pool."""
    pod = wired_pod("TCPXO")
    main = pod["spec"]["containers"][0]
    main["command"] = ["/bin/bash", "-c"]
    main["args"] = ["source ${NCCL_LIB_DIR}/nccl-env-profile.sh\nexec python train.py\n"]
    assert admitted(pod)


def test_pods_off_gpudirect_pools_or_without_gpus_are_not_judged() -> None:
    bare = wired_pod("RDMA")
    del bare["spec"]["containers"][0]["args"]
    elsewhere = copy.deepcopy(bare)
    elsewhere["spec"]["nodeSelector"] = {"cloud.google.com/gke-nodepool": "l4-pool"}
    assert admitted(elsewhere)
    unpinned = copy.deepcopy(bare)
    del unpinned["spec"]["nodeSelector"]
    assert admitted(unpinned)
    cpu_only = copy.deepcopy(bare)
    cpu_only["spec"]["containers"] = [{"name": "sidecar", "image": "busybox"}]
    assert admitted(cpu_only)
    # The TCPXO rule does not judge the RDMA pool and vice versa.
    rdma_on_tcpxo_rule = wired_pod("RDMA", pool="a3ultra-rdma")
    assert admitted(rdma_on_tcpxo_rule)
