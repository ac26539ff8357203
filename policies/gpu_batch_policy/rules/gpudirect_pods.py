"""``gke-gpudirect-pod-wiring``: a GPU pod that can only land on GPUDirect nodes carries the wiring
Google's NCCL test pods carry (:mod:`..gpudirect.wiring`), or NCCL falls back to TCP.

Which pools a pod may land on: the pack's placement (``fit.placement.placement``: taints,
nodeSelector, required node affinity).  Judged only when every pool it may use is a GPUDirect pool
(``networkConfig.additionalNodeNetworkConfigs`` set) of one profile; a pod that may also land on a
plain pool, or on pools of different profiles, is not judged (no wiring suits both).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, Policy

from ..builders import stack_policy
from ..fit.placement import placement
from ..gpudirect.profiles import profile_for
from ..gpudirect.wiring import missing_wiring, single_profile
from ..model import NodePool, StackModel
from ..pod_templates import owned_templates
from ..report import Reporter
from ..values import Unknown, dig
from .gpudirect import extra_nics


def _profile(pool: NodePool) -> Any:
    nics = extra_nics(pool)
    machine = pool.machine_type
    if isinstance(nics, Unknown) or not nics or not isinstance(machine, str):
        return None
    return profile_for(machine)


def check_pod_wiring(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    if not any(_profile(p) for p in model.node_pools()):
        return
    for owned in owned_templates(model):
        template = owned.template
        gpus = template.gpus()
        if isinstance(gpus, Unknown) or gpus <= 0:
            continue
        pools = placement(model, template, kueue_queued=True).possible
        profile = single_profile(_profile(p) for p in pools)
        if profile is None:
            continue
        missing = missing_wiring(profile, template.annotations, dig(template.raw, "spec"))
        if missing is None:
            reporter.cannot_check(owned.owner, f"{owned.name} pod template GPUDirect wiring")
            continue
        if missing:
            reporter.violation(
                owned.owner,
                f"pods ({owned.name}) land only on GPUDirect-{profile.stack} nodes "
                f"({', '.join(sorted(p.name for p in pools))}) but lack {'; '.join(missing)}: "
                "NCCL will fall back to TCP",
                "wire the pod template as Google's NCCL test pod for this stack does "
                "(container-engine-accelerators gpudirect-*/nccl-test*.yaml)",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "gke-gpudirect-pod-wiring",
        "A GPU pod that lands on GPUDirect nodes carries the interfaces annotation, volumes, env and sidecar NCCL needs.",
        check_pod_wiring,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
]
