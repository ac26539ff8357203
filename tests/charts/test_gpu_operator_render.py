"""The GPU Operator v26.7.0 chart rendered by the real Helm engine with the kai stack's own values.

Asserts what the GKE route depends on (reference/gpu-sharing-on-gke.md §1): the ClusterPolicy's
driver, toolkit and CDI settings; that every operand tolerates the GPU pools' taint (the rendered
DaemonSets directly, the operator-created ones through ``spec.daemonsets.tolerations``, which
gpu-operator ``controllers/object_controls.go`` ``applyCommonDaemonsetConfig`` copies onto each
operand @ v26.7.0); the control-plane pieces on the system pool; and that the RuntimeClass
``nvidia`` is not a Helm object but follows from the ClusterPolicy.
"""

from __future__ import annotations

from typing import Any

import pytest
from gpu_batch_policy.facts.charts.operator_runtime import operand_manifests, runtime_class_names
from gpu_batch_policy.facts.charts.render import RenderedObject
from gpu_batch_policy.facts.fit.placement import NodeTaint, tolerates

from components.gke import SYSTEM_POOL_SELECTOR
from components.gpu_operator import DRIVER_INSTALL_DIR, TOOLKIT_INSTALL_DIR
from components.gpu_pool import GPU_TAINT_KEY, GPU_TAINT_VALUE
from tests.charts.test_render import objects, of_kind

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

GPU_TAINT = NodeTaint(GPU_TAINT_KEY, GPU_TAINT_VALUE, "NoSchedule")


def operator_objects() -> list[dict[str, Any]]:
    return objects("kai", "gpu-operator")


def cluster_policy() -> dict[str, Any]:
    (policy,) = of_kind(operator_objects(), "ClusterPolicy")
    return policy


def test_cluster_policy_driver_toolkit_and_cdi() -> None:
    spec = cluster_policy()["spec"]
    assert spec["driver"]["enabled"] is True, "NVIDIA's Driver Manager route"
    assert spec["hostPaths"]["driverInstallDir"] == DRIVER_INSTALL_DIR == "/run/nvidia/driver"
    assert spec["toolkit"]["installDir"] == TOOLKIT_INSTALL_DIR == "/usr/local/nvidia"
    assert {"name": "RUNTIME_CONFIG_SOURCE", "value": "file"} in spec["toolkit"]["env"]
    assert spec["cdi"]["enabled"] is True
    assert "nriPluginEnabled" not in spec["cdi"], "NRI would delete the nvidia RuntimeClass"
    assert spec["operator"]["runtimeClass"] == "nvidia"


def test_every_operand_tolerates_the_gpu_taint() -> None:
    policy = cluster_policy()
    # The operator-created operands (driver, toolkit, device plugin, validator, DCGM, GFD, ...).
    assert tolerates(policy["spec"]["daemonsets"]["tolerations"], GPU_TAINT) is True
    assert policy["spec"]["daemonsets"]["priorityClassName"] == "system-node-critical"
    daemonsets = of_kind(operator_objects(), "DaemonSet")
    assert daemonsets, "NFD's worker is rendered by Helm"
    for daemonset in daemonsets:
        tolerations = daemonset["spec"]["template"]["spec"].get("tolerations", [])
        assert tolerates(tolerations, GPU_TAINT) is True, daemonset["metadata"]["name"]


def test_control_plane_pieces_run_on_the_system_pool() -> None:
    deployments = of_kind(operator_objects(), "Deployment")
    assert len(deployments) == 3, [d["metadata"]["name"] for d in deployments]
    for deployment in deployments:
        selector = deployment["spec"]["template"]["spec"]["nodeSelector"]
        assert SYSTEM_POOL_SELECTOR.items() <= selector.items(), deployment["metadata"]["name"]
        assert deployment["spec"]["template"]["spec"]["priorityClassName"] == "system-node-critical"


def test_the_nvidia_runtime_class_comes_from_the_cluster_policy_not_helm() -> None:
    assert not of_kind(operator_objects(), "RuntimeClass")
    assert runtime_class_names(cluster_policy()) == ["nvidia", "nvidia-legacy", "nvidia-cdi"]
    nri = {"spec": {**cluster_policy()["spec"], "cdi": {"enabled": True, "nriPluginEnabled": True}}}
    assert runtime_class_names(nri) == []


def test_the_modelled_operands_follow_the_cluster_policy() -> None:
    rendered = [RenderedObject("t", o) for o in operator_objects()]
    operands = {m["metadata"]["name"]: m["spec"]["template"]["spec"] for m in operand_manifests(rendered)}
    assert set(operands) == {
        "nvidia-driver-daemonset",
        "nvidia-container-toolkit-daemonset",
        "nvidia-operator-validator",
        "nvidia-device-plugin-daemonset",
        "nvidia-dcgm-exporter",
        "gpu-feature-discovery",
    }
    for name, pod in operands.items():
        assert tolerates(pod["tolerations"], GPU_TAINT) is True, name
        assert pod["runtimeClassName"] == "nvidia" and pod["priorityClassName"] == "system-node-critical"
        assert pod["containers"][0]["image"].startswith("nvcr.io/nvidia/"), name
