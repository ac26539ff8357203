"""A MultiKueue stack simulated on one clock: the manager's admission, its dispatcher, and each
worker's own admission with its own DWS capacity and delay.

What Kueue v0.19.2 does (kubernetes-sigs/kueue@v0.19.2), and how it is modelled here:

1. The manager admits by its own quota: its scheduler reserves quota in a ClusterQueue whose only
   check is MultiKueue's, and the check stays Pending (the manager's :class:`Simulation`, the
   single-cluster engine, with ``ClusterQueue.multikueue_check``).
2. ``pkg/controller/admissionchecks/multikueue/workload.go`` ``reconcileGroup`` step 8 ->
   ``nominateAndSynchronizeWorkers``: a copy of the workload (``cloneForCreate``) is created on
   each nominated worker -- every worker for ``AllAtOnce``, batches in rounds for ``Incremental``
   (:mod:`whatif.multikueue.dispatch`).  Each copy is an ordinary workload in the worker's queue
   of the same namespace and LocalQueue name: the worker's own scheduler, quota, preemption and
   ProvisioningRequest check (its own :class:`Simulation`, with the worker's node pools and its
   own provisioning delay, ``workerProvisioningDelaySeconds``).  A copy whose LocalQueue the
   worker lacks is inadmissible there, as on the worker.
3. ``MultiKueueWaitForWorkloadAdmitted`` (GA and locked on in 0.18, ``pkg/features/
   kube_features.go``): ``reconcileGroup`` step 6 looks for a copy with ``Admitted`` (quota *and*
   its checks Ready), ``bestMatchByCondition`` takes the earliest; step 6b deletes every other
   copy (``RemoveRemoteObjects``: quota, ProvisioningRequests and nodes released) and
   ``syncAdmittingRemoteState`` sets the manager's check Ready: the manager's workload is
   admitted at that instant.  Two copies ready at the same instant: Kueue compares their
   ``LastTransitionTime`` (second precision) and a tie is Go map order; here the workers step in
   MultiKueueConfig order, so the earlier one admits and the other's copy is deleted at that
   instant (said in the notes).
4. Step 3: the copy finishes on its worker, the manager's workload finishes with it (its quota
   released).  Step 2: a manager workload that loses its quota (preempted on the manager)
   deletes all its copies; requeued, it is dispatched again.

Refused in one line (not modelled): an admitted copy evicted on its worker (step 4: the check
goes to Retry and the manager re-admits; the requeue timing is not modelled); a ProvisioningRequest
check on the manager's MultiKueue ClusterQueue; external dispatchers; a program whose
MultiKueueClusters cannot be matched to its clusters (:mod:`whatif.multikueue.fleet`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from whatif.cluster import Cluster, _cli_gates, build_cluster, kueue_configuration
from whatif.errors import NotModelledError, WhatIfError
from whatif.multikueue.dispatch import Dispatcher, dispatcher_of, rounds
from whatif.multikueue.fleet import Fleet, Member
from whatif.results import document, wait_figures
from whatif.simulator import DELETE, REMOTE_ADMITTED, REMOTE_FINISHED, SUBMIT, Simulation, _collector_paused
from whatif.sources import flavor_pools
from whatif.trace import Delay, Trace
from whatif.workload import ADMITTED, DELETED, FINISHED, PENDING, REJECTED, Workload

TIE_NOTE = (
    "copies ready on two workers at one instant: the worker earlier in the MultiKueueConfig wins and the "
    "other copy is deleted at that instant (Kueue: the earlier Admitted transition, a tie in Go map order)"
)


def prepared(model: Any, *, multikueue: bool = False, ignore_fair_sharing: bool = False) -> Cluster:
    """``build_cluster`` with the flavors' node pools, noting flavors whose pools are unknown."""
    cluster = build_cluster(model, ignore_fair_sharing=ignore_fair_sharing, multikueue=multikueue)
    cluster.pools = flavor_pools(model)
    for cq in cluster.cluster_queues.values():
        unknown = sorted(f for f in cq.provisioning_flavors if f not in cluster.pools)
        if unknown:
            cluster.notes.append(
                f"ClusterQueue {cq.name}: the node pools behind flavor(s) {', '.join(unknown)} are not known, so "
                "ProvisioningRequests on them are taken to find capacity"
            )
    return cluster


@dataclass
class _Copy:
    origin: Workload
    generation: int  # the origin's generation when dispatched: a later one makes the copy stale
    worker: str


@dataclass
class _Hooks:
    """One simulation's view of the coordinator."""

    coordinator: MultiKueueRun
    worker: str | None  # None: the manager

    def dispatch(self, wl: Workload) -> None:
        self.coordinator.dispatch(wl)

    def admitted(self, wl: Workload) -> None:
        if self.worker is not None:
            self.coordinator.copy_admitted(wl)

    def finished(self, wl: Workload) -> None:
        if self.worker is not None:
            self.coordinator.copy_finished(wl)

    def released(self, wl: Workload) -> None:
        if self.worker is None:
            self.coordinator.origin_released(wl)

    def accept(self, wl: Workload) -> bool:
        return self.worker is None or self.coordinator.copy_current(wl)


@dataclass
class MultiKueueRun:
    fleet: Fleet
    trace: Trace
    provisioning_delay: Delay | None = None
    eviction_delay: float | None = None
    requeue_batch: float | None = None
    manager: Cluster = field(init=False)
    workers: dict[str, Cluster] = field(init=False)
    dispatcher: Dispatcher = field(init=False)
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.manager = prepared(self.fleet.manager.model, multikueue=True)
        for cq in self.manager.cluster_queues.values():
            if cq.multikueue_check and cq.provisioning:
                raise NotModelledError(
                    f"manager ClusterQueue {cq.name} carries a ProvisioningRequest check next to MultiKueue's "
                    "(it belongs on the workers): not modelled"
                )
        self.workers = {name: prepared(m.model) for name, m in self.fleet.workers}
        config = kueue_configuration(self.fleet.manager.model)
        self.dispatcher = dispatcher_of(config, _cli_gates(self.fleet.manager.model))
        known = {name for name, _ in self.fleet.workers}
        for name, _delay in self.trace.worker_delays:
            if name not in known:
                raise WhatIfError(
                    f"trace workerProvisioningDelaySeconds.{name}: not a worker; expected one of {sorted(known)}"
                )
        delays = dict(self.trace.worker_delays)
        base = (
            self.provisioning_delay if self.provisioning_delay is not None else self.trace.provisioning_delay
        )
        empty = Trace((), None, self.trace.eviction_delay, requeue_batch=self.trace.requeue_batch)
        self.sim = Simulation(
            self.manager,
            self.trace,
            provisioning_delay=0.0,
            eviction_delay=self.eviction_delay,
            requeue_batch=self.requeue_batch,
        )
        self.sim.hooks = _Hooks(self, None)
        self.worker_sims: dict[str, Simulation] = {}
        for name, cluster in self.workers.items():
            sim = Simulation(
                cluster,
                empty,
                provisioning_delay=delays.get(name, base),
                eviction_delay=self.eviction_delay,
                requeue_batch=self.requeue_batch,
            )
            sim.hooks = _Hooks(self, name)
            self.worker_sims[name] = sim
        self.copies: dict[int, _Copy] = {}  # id(copy) -> where it came from
        self.live: dict[int, list[Workload]] = {}  # id(origin) -> its copies not yet deleted
        self.winner: dict[int, Workload] = {}  # id(origin) -> the admitted copy
        self.placed: dict[str, list[tuple[str, float]]] = {}  # origin key -> (worker, admitted at)
        self._seq = len(self.trace.entries)

    # --- what the simulations report ----------------------------------------------------------
    def dispatch(self, wl: Workload) -> None:
        now = self.sim.now
        clusters = [name for name, _ in self.fleet.workers]
        for offset, batch in rounds(clusters, self.dispatcher):
            for name in batch:
                self._seq += 1
                copy = Workload(
                    wl.namespace,
                    wl.name,
                    wl.queue,
                    wl.priority,
                    now + offset,
                    wl.duration,
                    self._seq,
                    wl.pod_sets,
                )
                copy.cluster_queue = self.workers[name].local_queues.get((wl.namespace, wl.queue))
                self.copies[id(copy)] = _Copy(wl, wl.generation, name)
                self.live.setdefault(id(wl), []).append(copy)
                self.worker_sims[name].workloads.append(copy)
                self.worker_sims[name].post(now + offset, SUBMIT, copy)

    def copy_current(self, copy: Workload) -> bool:
        """A copy due to arrive still belongs to a manager workload waiting for a worker."""
        info = self.copies[id(copy)]
        origin = info.origin
        current = origin.generation == info.generation and origin.state not in (ADMITTED, FINISHED)
        if not current:
            self._forget(copy)
        return current

    def copy_admitted(self, copy: Workload) -> None:
        info = self.copies[id(copy)]
        origin = info.origin
        if id(origin) in self.winner or origin.generation != info.generation:
            self.worker_sims[info.worker].post(self.worker_sims[info.worker].now, DELETE, copy)
            return
        self.winner[id(origin)] = copy
        now = self.worker_sims[info.worker].now
        self.placed.setdefault(origin.key, []).append((info.worker, now))
        self.sim.post(now, REMOTE_ADMITTED, origin)
        for other in self.live.get(id(origin), []):
            if other is not copy:
                other_worker = self.copies[id(other)].worker
                self.worker_sims[other_worker].post(now, DELETE, other)

    def copy_finished(self, copy: Workload) -> None:
        info = self.copies[id(copy)]
        origin = info.origin
        if self.winner.get(id(origin)) is copy:
            self.sim.post(self.worker_sims[info.worker].now, REMOTE_FINISHED, origin)

    def origin_released(self, origin: Workload) -> None:
        """``reconcileGroup`` step 2: no quota on the manager -> every copy is deleted."""
        self.winner.pop(id(origin), None)
        for copy in self.live.pop(id(origin), []):
            if copy.state not in (FINISHED, DELETED, REJECTED):
                worker = self.copies[id(copy)].worker
                self.worker_sims[worker].post(self.sim.now, DELETE, copy)

    def _forget(self, copy: Workload) -> None:
        info = self.copies[id(copy)]
        copies = self.live.get(id(info.origin))
        if copies and copy in copies:
            copies.remove(copy)

    # --- the clock ------------------------------------------------------------------------------
    def _check_winners(self) -> None:
        for copy in self.winner.values():
            if copy.state == PENDING:
                worker = self.copies[id(copy)].worker
                raise NotModelledError(
                    f"time {self.worker_sims[worker].now:g}: worker {worker} evicted {copy.key} after admitting "
                    "it; MultiKueue's re-admission after a worker eviction (check Retry) is not modelled"
                )

    def run(self) -> dict[str, Any]:
        with _collector_paused():
            sims = [self.sim, *self.worker_sims.values()]
            for sim in sims:
                sim.start()
            while True:
                now = min(sim.next_time() for sim in sims)
                if math.isinf(now):
                    break
                for sim in sims:
                    if sim.next_time() == now:
                        sim.step()
                self._check_winners()
        return self.document()

    # --- the result ---------------------------------------------------------------------------
    def document(self) -> dict[str, Any]:
        doc = document(self.manager, self.sim.outcome())
        if len(self.worker_sims) > 1:
            self.notes.append(TIE_NOTE)
        doc["notes"] = [*doc["notes"], *self.notes]
        for name, cluster in self.workers.items():
            doc["notes"] += [f"worker {name}: {n}" for n in cluster.notes]
        doc["multiKueue"] = {
            "dispatcher": self.dispatcher.label,
            "workers": [name for name, _ in self.fleet.workers],
            "teams": self._teams(),
            "pools": {
                name: document(self.workers[name], sim.outcome())["pools"]
                for name, sim in self.worker_sims.items()
            },
        }
        return doc

    def _teams(self) -> dict[str, dict[str, Any]]:
        """Per namespace: where its workloads ran and how long they waited on the manager."""
        teams: dict[str, dict[str, Any]] = {}
        for wl in self.sim.workloads:
            team = teams.setdefault(wl.namespace, {"ranOn": {}, "waits": [], "neverAdmitted": 0})
            where = self.placed.get(wl.key)
            if wl.first_admitted_at is None or not where:
                team["neverAdmitted"] += 1
                continue
            worker = where[0][0]
            team["ranOn"][worker] = team["ranOn"].get(worker, 0) + 1
            team["waits"].append(wl.first_admitted_at - wl.submit)
        for team in teams.values():
            team["waitSeconds"] = wait_figures(team.pop("waits"))
            team["ranOn"] = dict(sorted(team["ranOn"].items()))
        return dict(sorted(teams.items()))


def single_region(fleet: Fleet, worker: str) -> Cluster:
    """The manager's queues and quota with one worker's checks, flavors and node pools: the same
    total quota in one region (what the stack is without MultiKueue)."""
    cluster = prepared(fleet.manager.model, multikueue=True)
    member: Member = dict(fleet.workers)[worker]
    region = prepared(member.model)
    for name, cq in cluster.cluster_queues.items():
        twin = region.cluster_queues.get(name)
        if cq.multikueue_check and twin is not None:
            cq.provisioning = dict(twin.provisioning)
            cq.check_names = twin.check_names
        cq.multikueue_check = None
    cluster.pools = region.pools
    cluster.resource_flavors = {**cluster.resource_flavors, **region.resource_flavors}
    cluster.notes += region.notes
    return cluster


def simulate_single_region(
    fleet: Fleet,
    trace: Trace,
    worker: str,
    *,
    provisioning_delay: Delay | None = None,
    eviction_delay: float | None = None,
    requeue_batch: float | None = None,
) -> dict[str, Any]:
    delay = dict(trace.worker_delays).get(worker, provisioning_delay)
    cluster = single_region(fleet, worker)
    sim = Simulation(
        cluster, trace, provisioning_delay=delay, eviction_delay=eviction_delay, requeue_batch=requeue_batch
    )
    return document(cluster, sim.run())


def simulate_fleet(
    fleet: Fleet,
    trace: Trace,
    *,
    provisioning_delay: Delay | None = None,
    eviction_delay: float | None = None,
    requeue_batch: float | None = None,
) -> dict[str, Any]:
    """The MultiKueue run, compared with the first worker's region alone under the manager's quota."""
    doc = MultiKueueRun(fleet, trace, provisioning_delay, eviction_delay, requeue_batch).run()
    first = fleet.workers[0][0]
    single = simulate_single_region(
        fleet,
        trace,
        first,
        provisioning_delay=provisioning_delay,
        eviction_delay=eviction_delay,
        requeue_batch=requeue_batch,
    )
    doc["multiKueue"]["singleRegion"] = {"worker": first, "queues": single["queues"]}
    return doc
