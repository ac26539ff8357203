"""The GPUDirect wiring a GPU workload pod copies from Google's NCCL test Pod, read at run time.

GoogleCloudPlatform/container-engine-accelerators @ 992db812 publishes, per stack, the Pod that runs
NCCL over the GPU NICs (``gpudirect-tcpx/nccl-test-latest.yaml``, ``gpudirect-tcpxo/
nccl-test-latest.yaml``, ``gpudirect-rdma/nccl-test.yaml`` / ``nccl-test-a4.yaml``; the profile's
``test_pod``, pinned in ``charts.lock.yaml``).  From its first Pod we take exactly what makes NCCL
use GPUDirect, and nothing test-specific:

- the pod annotations: ``networking.gke.io/default-interface``, ``networking.gke.io/interfaces``
  (GKE multi-networking attaches those Networks to the pod) and, for TCPX/TCPXO,
  ``devices.gke.io/container.<rxdm>`` (the NRI device injector hands the RxDM sidecar the GPUs);
- for TCPX/TCPXO, the RxDM sidecar container (``tcpgpudmarxd``) whole;
- the pod's hostPath and emptyDir volumes (GKE's NVIDIA libraries, the gIB plugin for RDMA -- the
  A4X test Pod declares it without mounting it --, ``/dev/aperture_devices`` for TCPXO, the RxDM
  socket, ``/dev/shm``), but not a ConfigMap volume (TCPX's ``nccl-configmap`` holds the test's
  scripts);
- on the GPU container: those mounts, its env (``LD_LIBRARY_PATH``; ``NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY``
  for TCPXO) and its added capabilities (``IPC_LOCK`` for TCPX).

The Networks the manifest names must be the ones the stack declares for the profile
(``gpu_batch_policy.facts.gpudirect.wiring.expected_networks``); otherwise the pinned manifest changed
meaning and the program stops with one line rather than wire pods to Networks that do not exist.
Every piece is what the pack's ``gke-gpudirect-pod-wiring`` checks, so one table decides both.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from functools import cache
from typing import Any

from components.gpudirect import POLICIES_DIR

assert POLICIES_DIR

from gpu_batch_policy.facts.charts.manifests import load_documents  # noqa: E402
from gpu_batch_policy.facts.gpudirect.profiles import GPUDIRECT_MANIFESTS, GpuDirectProfile  # noqa: E402
from gpu_batch_policy.facts.gpudirect.wiring import (  # noqa: E402
    DEVICES_PREFIX,
    INTERFACES,
    RXDM_IMAGE,
    expected_networks,
)

DEFAULT_INTERFACE = "networking.gke.io/default-interface"
GPU = "nvidia.com/gpu"


class GpuDirectWiringError(ValueError):
    """The pinned test Pod does not hold the wiring this profile needs (one line)."""


@dataclass(frozen=True)
class PodWiring:
    """What a GPU pod template gains on a GPUDirect pool (each a fresh copy per use)."""

    source: str
    annotations: dict[str, str]
    sidecars: tuple[dict[str, Any], ...]
    volumes: tuple[dict[str, Any], ...]
    gpu_mounts: tuple[dict[str, Any], ...]
    gpu_env: tuple[dict[str, Any], ...]
    gpu_capabilities: tuple[str, ...]


def _is_gpu(container: dict[str, Any]) -> bool:
    resources = container.get("resources") or {}
    return any(GPU in (resources.get(k) or {}) for k in ("limits", "requests"))


@cache
def pod_wiring(profile: GpuDirectProfile) -> PodWiring:
    """The wiring of ``profile``'s pinned NCCL test Pod."""
    where = f"{GPUDIRECT_MANIFESTS} {profile.test_pod}"
    pods = [d for d in load_documents(GPUDIRECT_MANIFESTS, profile.test_pod) if d.get("kind") == "Pod"]
    if not pods:
        raise GpuDirectWiringError(f"{where}: no Pod to take the {profile.stack} wiring from")
    pod = pods[0]
    notes = (pod.get("metadata") or {}).get("annotations") or {}
    annotations = {
        k: str(v)
        for k, v in notes.items()
        if k in (INTERFACES, DEFAULT_INTERFACE) or k.startswith(DEVICES_PREFIX)
    }
    listed = [e.get("network") for e in json.loads(annotations.get(INTERFACES, "[]"))]
    wanted = expected_networks(profile)
    if [n for n in listed if n != "default"] != wanted:
        raise GpuDirectWiringError(
            f"{where}: {INTERFACES} lists {listed}, expected default + {wanted} (the stack's Networks)"
        )
    spec = pod.get("spec") or {}
    containers = [c for c in spec.get("containers") or [] if isinstance(c, dict)]
    gpu = [c for c in containers if _is_gpu(c)]
    sidecars = [c for c in containers if RXDM_IMAGE in str(c.get("image", ""))]
    if len(gpu) != 1 or (profile.stack in ("TCPX", "TCPXO")) != bool(sidecars):
        raise GpuDirectWiringError(
            f"{where}: expected one GPU container and, for TCPX/TCPXO only, an RxDM sidecar"
        )
    kept = {
        str(v.get("name")): v
        for v in spec.get("volumes") or []
        if isinstance(v, dict) and ("hostPath" in v or "emptyDir" in v)
    }
    security = gpu[0].get("securityContext") or {}
    return PodWiring(
        source=where,
        annotations=annotations,
        sidecars=tuple(sidecars),
        volumes=tuple(kept.values()),
        gpu_mounts=tuple(m for m in gpu[0].get("volumeMounts") or [] if m.get("name") in kept),
        gpu_env=tuple(gpu[0].get("env") or []),
        gpu_capabilities=tuple(str(c) for c in (security.get("capabilities") or {}).get("add") or []),
    )


def wire(spec: dict[str, Any], annotations: dict[str, str], wiring: PodWiring) -> None:
    """Add ``wiring`` to a pod spec whose first container is the GPU one (KubeRay v1.7.0 treats
    container 0 as the Ray container, ``utils.RayContainerIndex``; sidecars go after it).  What the
    template already has wins: a volume, mount or env var of the same name is kept as written."""
    fresh = copy.deepcopy(wiring)
    for key, value in fresh.annotations.items():
        annotations.setdefault(key, value)
    containers: list[dict[str, Any]] = spec.setdefault("containers", [])
    main = containers[0]
    names = {str(v.get("name")) for v in spec.get("volumes") or []}
    spec["volumes"] = [*(spec.get("volumes") or []), *(v for v in fresh.volumes if v["name"] not in names)]
    paths = {str(m.get("mountPath")) for m in main.get("volumeMounts") or []}
    main["volumeMounts"] = [
        *(main.get("volumeMounts") or []),
        *(m for m in fresh.gpu_mounts if m["mountPath"] not in paths and m["name"] not in names),
    ]
    env = {str(e.get("name")) for e in main.get("env") or []}
    main["env"] = [*(main.get("env") or []), *(e for e in fresh.gpu_env if e["name"] not in env)]
    if fresh.gpu_capabilities:
        caps = main.setdefault("securityContext", {}).setdefault("capabilities", {}).setdefault("add", [])
        caps.extend(c for c in fresh.gpu_capabilities if c not in caps)
    containers.extend(s for s in fresh.sidecars if s["name"] not in {c.get("name") for c in containers})
