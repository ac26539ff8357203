"""Node capacity behind a ProvisioningRequest admission check, as GKE provides it.

Kueue v0.19.2 (kubernetes-sigs/kueue@v0.19.2 ``pkg/controller/admissionchecks/provisioning``,
``controller.go`` ``syncCheckStates``): a workload holding quota on a flavor under a
ProvisioningRequest check waits for the request.  ``Provisioned`` makes the check Ready and the
workload is admitted; ``Failed`` is retried while the attempt is within
``retryStrategy.backoffLimitCount``: the check goes to Retry, the workload is evicted (its quota
released) and requeued after ``backoffBaseSeconds * 2^(n-1)`` capped at ``backoffMaxSeconds``
(``workload.UpdateAdmissionCheckRequeueState``, ``pkg/util/wait/backoff.go`` ``WaitTime``; the
CRD defaults 3, 60 s, 1800 s); past the limit the check is Rejected and the workload deactivated.

What GKE does with the request (cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest
and the cluster autoscaler's ProvisioningRequest classes):
- ``queued-provisioning.gke.io`` (DWS): the request is served by scaling *one* node pool behind
  the flavor by the nodes the whole gang needs -- each GPU pod set's pods packed onto nodes of the
  pool's machine type (``gpus_per_node // gpus_per_pod`` pods a node), next to the nodes that
  running workloads already hold -- within the pool's ``maxNodes``; when no pool can grow by that
  much the autoscaler fails it ("max node group size reached", kueue#5129).  Provisioned nodes
  serve only that request and are removed when the workload ends, or when
  ``maxRunDurationSeconds`` runs out (the workload ends with them).
- ``check-capacity.autoscaling.x-k8s.io``: the same fit is checked against the pool's nodes
  without provisioning anything, so it answers at once.

Simplified: only GPUs are packed (pods without GPUs ride along on the gang's nodes); nodes are
taken to exist up to ``maxNodes`` for check-capacity; stock-outs are not modelled.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from whatif.workload import Workload

GPU = "nvidia.com/gpu"
QUEUED = "queued-provisioning.gke.io"
CHECK_CAPACITY = "check-capacity.autoscaling.x-k8s.io"


@dataclass(frozen=True)
class Pool:
    """A node pool behind a flavor: GPUs per node and the most nodes it can have."""

    name: str
    gpus_per_node: int
    max_nodes: int


@dataclass(frozen=True)
class Retry:
    """``ProvisioningRequestConfig.spec.retryStrategy`` (CRD defaults)."""

    limit: int = 3
    base_seconds: int = 60
    max_seconds: int = 1800

    def backoff(self, attempt: int) -> float:
        """``WaitTime(attempt)``: base * 2^(attempt-1), capped (jitter 1e-4 ignored)."""
        return float(min(self.base_seconds * 2 ** max(0, attempt - 1), self.max_seconds))


@dataclass(frozen=True)
class Check:
    """A ProvisioningRequest check on a flavor."""

    name: str
    provisioning_class: str
    retry: Retry = Retry()
    max_run_seconds: float | None = None
    managed: frozenset[str] = frozenset()  # managedResources; empty: every resource

    @property
    def provisions(self) -> bool:
        return self.provisioning_class == QUEUED


def gang_pods(wl: Workload, flavor: str, managed: frozenset[str]) -> list[tuple[int, int]]:
    """(pod count, milli-GPUs per pod) of the pod sets whose GPUs are assigned ``flavor``."""
    out = []
    for ps in wl.pod_sets:
        assigned = wl.flavors.get(ps.name, {})
        if assigned.get(GPU) != flavor:
            continue
        if managed and not any(r in managed for r in ps.requests):
            continue
        out.append((ps.count, ps.requests.get(GPU, 0)))
    return out


def nodes_needed(pool: Pool, pods: Iterable[tuple[int, int]]) -> int | None:
    """Nodes of ``pool`` the pods pack onto; None when a pod needs more GPUs than a node has."""
    total = 0
    for count, gpus in pods:
        if gpus <= 0:
            continue
        per_node = pool.gpus_per_node * 1000 // gpus
        if per_node == 0:
            return None
        total += math.ceil(count / per_node)
    return total


@dataclass
class Capacity:
    """Nodes held per pool; the pools behind each flavor (unknown flavors are unbounded)."""

    pools: Mapping[str, tuple[Pool, ...]]
    used: dict[str, int] = field(default_factory=dict)
    held: dict[str, tuple[float, list[tuple[str, int]]]] = field(default_factory=dict)
    node_seconds: dict[str, float] = field(default_factory=dict)  # per pool, nodes held x time

    def place(self, wl: Workload, flavor: str, check: Check) -> tuple[tuple[str, int] | None, str]:
        """A pool that can take the gang now and its node count, or None and why not."""
        pools = self.pools.get(flavor)
        if pools is None:
            return ("", 0), ""
        pods = gang_pods(wl, flavor, check.managed)
        best: tuple[str, int] | None = None
        reasons = []
        for pool in pools:
            need = nodes_needed(pool, pods)
            if need is None or need > pool.max_nodes:
                reasons.append(
                    f"{pool.name} cannot hold the gang ({pool.max_nodes} nodes of {pool.gpus_per_node} GPUs)"
                )
                continue
            used = self.used.get(pool.name, 0)
            if used + need <= pool.max_nodes:
                best = (pool.name, need)
                break
            reasons.append(f"{pool.name} has {used} of {pool.max_nodes} nodes in use, the gang needs {need}")
        if best is not None:
            return best, ""
        return None, "max node pool size reached: " + "; ".join(
            reasons or [f"no node pool behind flavor {flavor}"]
        )

    def hold(self, wl: Workload, placements: list[tuple[str, int]], now: float) -> None:
        for pool, nodes in placements:
            if pool:
                self.used[pool] = self.used.get(pool, 0) + nodes
        self.held[wl.key] = (now, [p for p in placements if p[0]])

    def release(self, wl: Workload, now: float) -> None:
        since, placements = self.held.pop(wl.key, (now, []))
        for pool, nodes in placements:
            self.used[pool] -= nodes
            self.node_seconds[pool] = self.node_seconds.get(pool, 0.0) + nodes * (now - since)

    def close(self, now: float) -> dict[str, float]:
        """Node-seconds per pool, counting nodes still held up to ``now``."""
        out = dict(self.node_seconds)
        for since, placements in self.held.values():
            for pool, nodes in placements:
                out[pool] = out.get(pool, 0.0) + nodes * (now - since)
        return out

    def max_gpus(self, flavor: str) -> int | None:
        """Milli-GPUs all pools behind ``flavor`` can hold together; None when unknown."""
        pools = self.pools.get(flavor)
        if pools is None:
            return None
        return sum(p.gpus_per_node * p.max_nodes for p in pools) * 1000
