"""What a GPU pod on a GPUDirect node must carry for NCCL to use the GPU NICs.

Derived from the pods Google publishes to run NCCL over GPUDirect on GKE
(GoogleCloudPlatform/container-engine-accelerators @ 992db812, pinned in ``charts.lock.yaml``):

- TCPX, ``gpudirect-tcpx/nccl-test-latest.yaml``: the ``networking.gke.io/interfaces`` annotation
  naming the node's extra networks; ``devices.gke.io/container.<daemon>`` (the NRI device injector
  gives the RxDM daemon the GPU devices); the RxDM sidecar (image ``.../tcpgpudmarxd-dev``); a
  hostPath volume of GKE's NVIDIA libraries (``/home/kubernetes/bin/nvidia/lib64``) and
  ``LD_LIBRARY_PATH`` on the GPU container;
- TCPXO, ``gpudirect-tcpxo/nccl-test-latest.yaml``: the same, plus ``NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY``
  and the ``/dev/aperture_devices`` hostPath;
- RDMA, ``gpudirect-rdma/nccl-test.yaml``: the interfaces annotation naming ``rdma-0..7``; hostPath
  volumes of ``/home/kubernetes/bin/gib`` (the NCCL gIB plugin the installer DaemonSet drops) and
  ``/home/kubernetes/bin/nvidia``; ``LD_LIBRARY_PATH``.

Without any of these the job still runs, but NCCL finds no GPUDirect transport and falls back to
TCP over the single gVNIC: a risk, so the pack rule is advisory unless a stack raises it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ...primitives.values import Unknown, dig
from .profiles import GpuDirectProfile, gvnic_network_name, rdma_network_name

INTERFACES = "networking.gke.io/interfaces"
DEVICES_PREFIX = "devices.gke.io/container."
RXDM_IMAGE = "tcpgpudmarxd"
NVIDIA_HOST_PATH = "/home/kubernetes/bin/nvidia"
GIB_HOST_PATH = "/home/kubernetes/bin/gib"
APERTURE_HOST_PATH = "/dev/aperture_devices"
FASTRAK_ENV = "NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY"


def expected_networks(profile: GpuDirectProfile) -> list[str]:
    """The networks NCCL's transport uses: the RDMA subnets for RDMA (Google's RDMA test pod lists
    rdma-0..7 only; the extra gVNIC is not NCCL's), else every gVNIC VPC."""
    if profile.rdma_subnets:
        return [rdma_network_name(i) for i in range(profile.rdma_subnets)]
    return [gvnic_network_name(profile.gvnic_prefix, i) for i in range(profile.gvnic_networks)]


def _listed_networks(raw: str) -> set[str] | None:
    try:
        entries = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(entries, list):
        return None
    return {str(e.get("network")) for e in entries if isinstance(e, dict)}


def _host_paths(spec: Any) -> list[str]:
    volumes = dig(spec, "volumes")
    paths = [dig(v, "hostPath", "path") for v in (volumes if isinstance(volumes, list) else [])]
    return [p for p in paths if isinstance(p, str)]


def _containers(spec: Any) -> list[dict[str, Any]]:
    found = [*(dig(spec, "containers") or []), *(dig(spec, "initContainers") or [])]
    return [c for c in found if isinstance(c, dict)]


def _env_names(container: dict[str, Any]) -> set[str]:
    env = container.get("env")
    return {str(e.get("name")) for e in (env if isinstance(env, list) else []) if isinstance(e, dict)}


def _gpu_containers(spec: Any) -> list[dict[str, Any]]:
    out = []
    for c in dig(spec, "containers") or []:
        if not isinstance(c, dict):
            continue
        limits = dig(c, "resources", "limits") or {}
        requests = dig(c, "resources", "requests") or {}
        if "nvidia.com/gpu" in limits or "nvidia.com/gpu" in requests:
            out.append(c)
    return out


def missing_wiring(
    profile: GpuDirectProfile, annotations: dict[str, str | Unknown], spec: Any
) -> list[str] | None:
    """What the pod template lacks for ``profile`` (empty: wired); None: cannot tell yet."""
    if isinstance(spec, Unknown) or any(isinstance(v, Unknown) for v in annotations.values()):
        return None
    missing: list[str] = []
    listed = annotations.get(INTERFACES)
    networks = _listed_networks(listed) if isinstance(listed, str) else set()
    wanted = expected_networks(profile)
    if networks is None or not set(wanted) <= networks:
        missing.append(f"annotation {INTERFACES} listing {', '.join(wanted)}")
    paths = _host_paths(spec)
    gpu_containers = _gpu_containers(spec)
    if not any(p.startswith(NVIDIA_HOST_PATH) for p in paths):
        missing.append(f"a hostPath volume of {NVIDIA_HOST_PATH}")
    if not any("LD_LIBRARY_PATH" in _env_names(c) for c in gpu_containers):
        missing.append("env LD_LIBRARY_PATH on the GPU container")
    if profile.stack in ("TCPX", "TCPXO"):
        containers = _containers(spec)
        if not any(RXDM_IMAGE in str(c.get("image", "")) for c in containers):
            missing.append(f"the RxDM sidecar (image .../{RXDM_IMAGE}-dev)")
        if not any(k.startswith(DEVICES_PREFIX) for k in annotations):
            missing.append(f"annotation {DEVICES_PREFIX}<rxdm container> (NRI device injection)")
    if profile.stack == "TCPXO":
        if not any(FASTRAK_ENV in _env_names(c) for c in gpu_containers):
            missing.append(f"env {FASTRAK_ENV}")
        if APERTURE_HOST_PATH not in paths:
            missing.append(f"a hostPath volume of {APERTURE_HOST_PATH}")
    if profile.stack == "RDMA" and not any(p.startswith(GIB_HOST_PATH) for p in paths):
        missing.append(f"a hostPath volume of {GIB_HOST_PATH} (the NCCL gIB plugin)")
    return missing


def single_profile(profiles: Iterable[GpuDirectProfile | None]) -> GpuDirectProfile | None:
    """The one GPUDirect profile shared by every pool a pod may land on; None when mixed or none."""
    found = list(profiles)
    if not found or any(p is None for p in found):
        return None
    stacks = {(p.stack, p.gvnic_prefix, p.gvnic_networks, p.rdma_subnets) for p in found if p is not None}
    return found[0] if len(stacks) == 1 else None
