"""How a GKE GPU pool's pods get their GPUs: GKE's driver and device plugin, or the NVIDIA GPU Operator.

One place for the facts the pack rules (``rules/gpu_stack.py``), the capacity report and the stack
config checks (``stacks/checks/gpu_stack.py``) share (reference/gpu-sharing-on-gke.md):

- **GKE-managed** (the default): GKE installs the driver (``guestAccelerators[].
  gpuDriverInstallationConfig.gpuDriverVersion`` DEFAULT/LATEST; *unset* also installs the
  default since GKE 1.30.1-gke.1156000, pulumi_gcp 10.2.0 ``container/_inputs.py``
  ``gpu_driver_version``) and runs its device plugin (GoogleCloudPlatform/container-engine-
  accelerators), which hands devices only to containers that request ``nvidia.com/gpu``.  Its
  optional sharing (``gpuSharingConfig``: TIME_SHARING or MPS, ``maxSharedClientsPerGpu`` N)
  advertises N ``nvidia.com/gpu`` per physical GPU (CEA ``pkg/gpu/nvidia/manager.go``).
- **GPU Operator**: GKE must install no driver (``INSTALLATION_DISABLED``) and must not run its
  device plugin (node label ``gke-no-default-nvidia-gpu-device-plugin=true``), because the
  operator's driver and device plugin take their place (NVIDIA/cloud-native-docs
  ``gpu-operator/google-gke.rst``: "disable GKE features that are not supported with the
  Operator").  Its operands run on every node whose NFD labels show an NVIDIA PCI device unless the
  node is labelled ``nvidia.com/gpu.deploy.operands=false`` (NVIDIA/gpu-operator
  ``controllers/state_manager.go`` ``gpuNodeLabels``, ``hasOperandsDisabled`` @ v26.7.0), so with
  the operator installed every GPU pool is an operator pool unless opted out.  GKE's sharing lives
  in GKE's device plugin, which such a pool turns off, so the two never apply to the same pool.

Every check here takes plain values (:class:`GpuSetup`), so the pack (wire properties) and the
stack config (typed keys) ask exactly the same question.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..primitives.values import Unknown, as_str, dig
from .model import NodePool, StackModel
from .open_world import World

DEVICE_PLUGIN_LABEL = "gke-no-default-nvidia-gpu-device-plugin"
OPERANDS_LABEL = "nvidia.com/gpu.deploy.operands"
INSTALLATION_DISABLED = "INSTALLATION_DISABLED"
GPU_OPERATOR_CHART = "gpu-operator"
SHARING_STRATEGIES = ("TIME_SHARING", "MPS")
# GKE's documented range of maxSharedClientsPerGpu (ComputeClass gpuSharing 2-48; the node-pool
# maximum of 48 is the figure GKE's sharing pages quote, reference/gpu-sharing-on-gke.md §3).
MIN_SHARED_CLIENTS = 2
MAX_SHARED_CLIENTS = 48

Setting = Literal["driver", "device-plugin-label", "sharing-strategy", "shared-clients", "image-type"]
Source = Literal["gke", "gpu-operator", "conflict", "none", "unknown"]


@dataclass(frozen=True)
class GpuSetup:
    """One pool's GPU settings, as plain values (None = unset)."""

    driver_version: str | Unknown | None
    device_plugin_label: str | Unknown | None
    operands_label: str | Unknown | None
    sharing_strategy: str | Unknown | None
    max_shared_clients: int | Unknown | None
    # nodeConfig.imageType; None = GKE's default, COS_CONTAINERD.
    image_type: str | Unknown | None = None

    @property
    def shared(self) -> bool:
        return self.sharing_strategy is not None


@dataclass(frozen=True)
class SetupProblem:
    """One wrong setting: which, its value, what is expected and why (one line each)."""

    setting: Setting
    value: object
    expected: str


def setup_of(pool: NodePool) -> GpuSetup:
    """The pool's settings from its first accelerator that sets them, and its labels."""
    driver: str | Unknown | None = None
    strategy: str | Unknown | None = None
    clients: int | Unknown | None = None
    for acc in pool.accelerators:
        driver = driver if driver is not None else acc.driver_version
        if strategy is None and acc.sharing_strategy is not None:
            strategy, clients = acc.sharing_strategy, acc.max_shared_clients
    return GpuSetup(
        driver_version=driver,
        device_plugin_label=pool.labels.get(DEVICE_PLUGIN_LABEL),
        operands_label=pool.labels.get(OPERANDS_LABEL),
        sharing_strategy=strategy,
        max_shared_clients=clients,
        image_type=as_str(pool.res.get("nodeConfig", "imageType")),
    )


def operator_driver_container(model: StackModel) -> bool | None:
    """Whether the stack's GPU Operator installs the driver itself (ClusterPolicy ``spec.driver.
    enabled``; unset = on, gpu-operator ``api/nvidia/v1/clusterpolicy_types.go`` ``DriverSpec.
    IsEnabled``); None when no ClusterPolicy is in the stack (an operator installed elsewhere)."""
    policies = model.kube_objects("nvidia.com", "ClusterPolicy")
    if not policies:
        return None
    enabled = [dig(p.props, "spec", "driver", "enabled") for p in policies]
    if any(isinstance(e, Unknown) for e in enabled):
        return None
    return any(e is not False for e in enabled)


def operator_installed(model: StackModel, world: World) -> bool:
    """The GPU Operator runs on the cluster: its release is in the stack, or listed external."""
    return bool(model.helm_releases(GPU_OPERATOR_CHART)) or world.has_install(GPU_OPERATOR_CHART)


def operator_manages(setup: GpuSetup, installed: bool) -> bool | None:
    """Whether the operator's operands run on the pool's GPU nodes (None: the opt-out label is unknown)."""
    if not installed:
        return False
    if isinstance(setup.operands_label, Unknown):
        return None
    return setup.operands_label != "false"


def sharing_problems(setup: GpuSetup) -> list[SetupProblem]:
    """GKE's own checks of ``gpuSharingConfig`` (known values only)."""
    strategy, clients = setup.sharing_strategy, setup.max_shared_clients
    problems: list[SetupProblem] = []
    if strategy is None or isinstance(strategy, Unknown):
        return problems
    if strategy not in SHARING_STRATEGIES:
        problems.append(SetupProblem("sharing-strategy", strategy, " or ".join(SHARING_STRATEGIES)))
    if clients is None or (
        not isinstance(clients, Unknown) and not MIN_SHARED_CLIENTS <= clients <= MAX_SHARED_CLIENTS
    ):
        problems.append(
            SetupProblem(
                "shared-clients",
                clients,
                f"{MIN_SHARED_CLIENTS} to {MAX_SHARED_CLIENTS} containers per GPU with {strategy}",
            )
        )
    return problems


def operator_problems(
    setup: GpuSetup, manages: bool, driver_container: bool | None = None
) -> list[SetupProblem]:
    """What conflicts with the GPU Operator on a pool it manages (nothing when it does not).
    ``driver_container``: the operator installs the driver itself (NVIDIA's Driver Manager), which
    NVIDIA documents on GKE for Ubuntu node images only -- COS gets its driver from Google's
    installer (NVIDIA/cloud-native-docs ``gpu-operator/google-gke.rst`` "Using NVIDIA Driver
    Manager" vs "Using the Google Driver Installer").  Unknown values are never a problem here."""
    if not manages:
        return []
    driver, label, image = setup.driver_version, setup.device_plugin_label, setup.image_type
    problems: list[SetupProblem] = []
    if driver_container and not isinstance(image, Unknown) and not (image or "").startswith("UBUNTU"):
        problems.append(
            SetupProblem(
                "image-type",
                image,
                "UBUNTU_CONTAINERD: the operator's driver container (driver.enabled) supports Ubuntu "
                "nodes on GKE, not COS (COS needs driver.enabled: false and Google's driver installer)",
            )
        )
    if not isinstance(driver, Unknown) and driver != INSTALLATION_DISABLED:
        problems.append(
            SetupProblem(
                "driver",
                driver,
                f"{INSTALLATION_DISABLED}: GKE would install its own driver beside the operator's "
                "(unset installs GKE's default driver since 1.30.1-gke.1156000)",
            )
        )
    if not isinstance(label, Unknown) and label != "true":
        problems.append(
            SetupProblem(
                "device-plugin-label",
                label,
                "\"true\": GKE's device plugin would advertise nvidia.com/gpu beside the operator's",
            )
        )
    if setup.shared and not isinstance(setup.sharing_strategy, Unknown):
        problems.append(
            SetupProblem(
                "sharing-strategy",
                setup.sharing_strategy,
                "no GKE GPU sharing: it lives in GKE's device plugin, which a GPU Operator pool turns off",
            )
        )
    return problems


def unserved_problems(setup: GpuSetup) -> list[SetupProblem]:
    """GKE's driver or device plugin turned off on a pool no GPU Operator manages.  Another
    program may install a driver or device plugin its own way (GKE's "Manually install drivers"),
    so the pack only reports such a pool as having no known source; the stack config, whose
    program installs nothing else, refuses it."""
    if setup.driver_version == INSTALLATION_DISABLED:
        return [
            SetupProblem(
                "driver",
                setup.driver_version,
                "a driver: GKE installs none and no GPU Operator manages this pool (use gpuStack: "
                "gpu-operator, or LATEST)",
            )
        ]
    if setup.device_plugin_label == "true":
        return [
            SetupProblem(
                "device-plugin-label",
                setup.device_plugin_label,
                "no label: GKE's device plugin is off and no GPU Operator manages this pool, so no pod gets a GPU",
            )
        ]
    return []


def gpu_source(setup: GpuSetup, manages: bool | None) -> Source:
    """Who gives pods this pool's GPUs (None ``manages``: cannot tell yet)."""
    if manages is None or any(
        isinstance(v, Unknown) for v in (setup.driver_version, setup.device_plugin_label)
    ):
        return "unknown"
    if manages:
        return "conflict" if operator_problems(setup, manages) else "gpu-operator"
    return "none" if unserved_problems(setup) else "gke"


def describe_source(setup: GpuSetup, source: Source) -> str:
    """One cell of the report's pool table."""
    if source == "gpu-operator":
        return "GPU Operator: NVIDIA driver + device plugin, RuntimeClass nvidia (KAI fractions work)"
    if source == "gke":
        driver = setup.driver_version if isinstance(setup.driver_version, str) else "default"
        text = f"GKE: driver {driver} + GKE device plugin"
        if setup.shared and isinstance(setup.sharing_strategy, str):
            clients = setup.max_shared_clients if isinstance(setup.max_shared_clients, int) else "?"
            text += f", {setup.sharing_strategy} x{clients} (each GPU = {clients} nvidia.com/gpu)"
        return text + " (no KAI fractions)"
    if source == "conflict":
        return "CONFLICT: GPU Operator and GKE's driver/device plugin on the same nodes"
    if source == "none":
        return "NONE: GKE's driver or device plugin is off and no GPU Operator manages the pool"
    return "unknown until apply"
