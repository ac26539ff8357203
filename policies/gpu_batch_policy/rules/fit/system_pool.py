"""system-workloads-fit-system-pool: always-on workloads fit their pools at maximum size.

Operators (Kueue, KAI, the KubeRay operator, SkyPilot API servers, ingress-nginx) run all the
time on the CPU pool; when their summed requests exceed what that pool can ever hold, some of
them stay Pending after every scale-up (cluster-autoscaler stops at ``maxNodeCount``).  The sums
come from ``system_load.py``; allocatable per node from GKE's reservations (``allocatable.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.fit.system_load import system_loads
from ...facts.model import StackModel
from ..kit.builders import stack_policy
from ..kit.report import Reporter


def check_system_pool(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for load in system_loads(model):
        subject = load.pools[0]
        for item in load.unknown:
            reporter.cannot_check(subject, item)
        if load.fits is not False or load.allocatable is None:
            continue
        top = sorted(load.workloads, key=lambda w: w[1].cpu, reverse=True)[:4]
        reporter.violation(
            subject,
            f"always-on workloads that can only run on {load.describe_pools()} request "
            f"{load.requested.describe()}, but at its maximum of {load.max_nodes} node(s) it offers "
            f"{load.allocatable.describe()} ({', '.join(load.requested.short_of(load.allocatable))}); "
            f"largest: {'; '.join(f'{name} = {amount.describe()}' for name, amount in top)}",
            "raise the pool's autoscaling maximum (totalMaxNodeCount / maxNodeCount) or machine type, "
            "or lower the workloads' replicas/requests",
        )


POLICIES: list[Policy] = [
    stack_policy(
        "system-workloads-fit-system-pool",
        "The summed requests of always-on workloads (Deployments/StatefulSets × replicas, "
        "DaemonSets × nodes) fit the pools they can run on at their maximum node count.",
        check_system_pool,
    ),
]
