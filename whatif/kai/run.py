"""One KAI what-if run: the stack's KAI objects + a trace (or the stack's load profile) -> JSON.

A load profile's ``declared: <name>`` shape is the gang KAI's podgrouper makes of the RayJob /
RayCluster the stack declares (the pack's ``gpu_batch_policy.facts.demand.kai_pod_sets``:
``ray_grouper.go``, head + ``minReplicas`` (else ``replicas``) × ``numOfHosts`` per worker
group), each pod with its CPU, memory and GPU request or ``gpu-fraction`` annotation.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

from whatif.amounts import fmt_amount, to_amount
from whatif.errors import WhatIfError
from whatif.kai.model import KaiCluster, build_kai
from whatif.kai.results import document
from whatif.kai.simulator import simulate
from whatif.kai.workloads import FRACTION, FRACTION_DEVICES, GPU_MEMORY, GPU_REQUEST
from whatif.pack import StackModel
from whatif.run import default_trace
from whatif.trace import Trace


def has_kai_queues(model: StackModel) -> bool:
    return bool(model.kai_queues()) or bool(model.kai_releases())


def declared_kai_pod_sets(model: StackModel, name: str, where: str) -> list[dict[str, Any]]:
    """The pod sets of KAI's gang for the Ray workload ``name``, in trace form."""
    from gpu_batch_policy.facts.demand import CannotTellError, kai_pod_sets, pod_request

    for workload in model.ray_workloads():
        if workload.name != name:
            continue
        try:
            out = []
            for ps in kai_pod_sets(workload):
                notes = ps.template.annotations
                requests: dict[str, str] = {}
                for res in ("cpu", "memory"):
                    value = pod_request(ps.template, res)
                    if value:
                        requests[res] = fmt_amount(to_amount(value))
                for key in (FRACTION, FRACTION_DEVICES, GPU_MEMORY):
                    raw = notes.get(key)
                    if isinstance(raw, str):
                        requests[key] = raw
                if FRACTION not in requests and GPU_MEMORY not in requests:
                    gpus = pod_request(ps.template, GPU_REQUEST)
                    if gpus:
                        requests[GPU_REQUEST] = fmt_amount(to_amount(Decimal(gpus)))
                if ps.count:
                    out.append({"name": ps.name, "count": ps.count, "requests": requests})
        except CannotTellError as error:
            raise WhatIfError(f"{where}: {name}'s pods are unknown until apply ({error.what})") from None
        return out
    raise WhatIfError(f"{where}.declared: got {name!r}, expected a RayJob or RayCluster the stack declares")


def default_kai_trace(model: StackModel, stack: str | None, profile: Path | None = None) -> Trace:
    """:func:`whatif.run.default_trace` with ``declared`` shapes as the pod sets KAI gangs."""
    return default_trace(model, stack, profile, declared_kai_pod_sets)


def simulate_kai(model: StackModel, trace: Trace, cluster: KaiCluster | None = None) -> dict[str, Any]:
    """The run's document; ``cluster``: the stack's, when the caller has built it already."""
    cluster = cluster if cluster is not None else build_kai(model)
    return document(cluster, simulate(cluster, trace))
