"""The NCCL environment a GPU container on a GPUDirect node must load, per GPUDirect stack.

The ``NCCL_*`` settings (the net plugin, tuner and guest configs, buffer sizes) are not fixed env
vars in Google's manifests: the NCCL installer DaemonSet drops a script on the node that sets them,
and the workload's container sources it when it starts
(GoogleCloudPlatform/container-engine-accelerators @ 992db812, pinned in ``charts.lock.yaml``):

- TCPXO, ``gpudirect-tcpxo/README.md`` "NCCL configs" ("NCCL configs are required for using
  GPUDirect-TCPX(O) feature"): env ``NCCL_LIB_DIR="/usr/local/nvidia/lib64"`` and, at container
  start, ``source ${NCCL_LIB_DIR}/nccl-env-profile.sh`` (``best-practice.md``: the ``-simple``,
  ``-ll128`` and ``-nvlstree`` variants are alternatives);
- RDMA, ``gpudirect-rdma/nccl-test.yaml`` (and ``nccl-test-a4.yaml``): the GPU container runs
  ``source /usr/local/gib/scripts/set_nccl_env.sh`` (the gIB plugin's hostPath, mounted at
  ``/usr/local/gib``).

TCPX has no such script (its test Pod sets the variables from a ConfigMap): not judged.  Without
the script NCCL does not load the GPUDirect net plugin configuration and runs over TCP or fails
collectives across nodes.  One table for the program's wiring (``components/gpudirect/pod_wiring.py``
confirms each line in the pinned files at run time), the pack's ``gke-gpudirect-nccl-env`` and the
in-cluster ValidatingAdmissionPolicy (:func:`cel_sources`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from ...primitives.values import Unknown, dig
from .profiles import GpuDirectProfile

NCCL_LIB_DIR: Final = "NCCL_LIB_DIR"


@dataclass(frozen=True)
class NcclEnv:
    """How a container loads a stack's NCCL settings."""

    # The line Google's pinned files tell a workload to run at container start.
    source_line: str
    # The script's name stem: any variant (``nccl-env-profile-simple.sh``...) counts.
    script_stem: str
    # Env vars the line needs on the container (name -> value).
    env: tuple[tuple[str, str], ...]
    # The pinned file (under manifests.gpudirect) that states the line.
    cited_in: str


NCCL_ENV: Final[dict[str, NcclEnv]] = {
    "TCPXO": NcclEnv(
        source_line="source ${NCCL_LIB_DIR}/nccl-env-profile.sh",
        script_stem="nccl-env-profile",
        env=((NCCL_LIB_DIR, "/usr/local/nvidia/lib64"),),
        cited_in="gpudirect-tcpxo/README.md",
    ),
    "RDMA": NcclEnv(
        source_line="source /usr/local/gib/scripts/set_nccl_env.sh",
        script_stem="set_nccl_env",
        env=(),
        cited_in="gpudirect-rdma/nccl-test.yaml",
    ),
}


def nccl_env_for(profile: GpuDirectProfile) -> NcclEnv | None:
    return NCCL_ENV.get(profile.stack)


def _words(container: dict[str, Any]) -> str | None:
    parts: list[str] = []
    for key in ("command", "args"):
        value = container.get(key)
        if isinstance(value, Unknown):
            return None
        if isinstance(value, list):
            if any(isinstance(v, Unknown) for v in value):
                return None
            parts.extend(str(v) for v in value)
    return " ".join(parts)


def _env(container: dict[str, Any]) -> dict[str, Any] | None:
    env = container.get("env")
    if isinstance(env, Unknown):
        return None
    return {str(e.get("name")): e for e in (env if isinstance(env, list) else []) if isinstance(e, dict)}


def gpu_containers(spec: Any) -> list[dict[str, Any]]:
    """The containers that request or limit ``nvidia.com/gpu``."""
    out = []
    for c in dig(spec, "containers") or []:
        if not isinstance(c, dict):
            continue
        if any("nvidia.com/gpu" in (dig(c, "resources", k) or {}) for k in ("limits", "requests")):
            out.append(c)
    return out


def missing_nccl_env(profile: GpuDirectProfile, spec: Any) -> list[str] | None:
    """What the pod spec's GPU containers lack to load ``profile``'s NCCL settings (empty: none);
    None when a command, args or env is unknown until apply."""
    needed = nccl_env_for(profile)
    if needed is None or isinstance(spec, Unknown):
        return [] if needed is None else None
    missing: list[str] = []
    for container in gpu_containers(spec):
        words, env = _words(container), _env(container)
        if words is None or env is None:
            return None
        name = container.get("name", "?")
        if needed.script_stem not in words:
            missing.append(f"container {name} never runs `{needed.source_line}`")
        for key, value in needed.env:
            if key not in env:
                missing.append(f"container {name} lacks env {key}={value}")
    return missing


def cel_sources() -> dict[str, str]:
    """Per GPUDirect stack, the script stem a ValidatingAdmissionPolicy looks for in a GPU
    container's command and args (the same test as :func:`missing_nccl_env`)."""
    return {stack: env.script_stem for stack, env in NCCL_ENV.items()}
