"""A livelock over time: the simulation's settled state repeating, shifted in time (issue 46).

Two workloads can preempt each other for ever across instants: with an eviction delay, A evicts
B, B's release lets A in, and B, back in its heap, evicts A at a later instant, and so on --
Kueue v0.19.2's scheduler would repeat that for as long as it runs (each step is its ordinary
``schedule`` / ``IssuePreemptions`` / workload-controller ``Update`` path).  No workload ever
finishes, so the simulation would never end.  Within one instant the simulator already stops a
preemptor evicting the same victim over and over (``Simulation._livelock``); this catches the
loop whose period spans instants.

The run is deterministic and every rule reads only the state below, so when the settled state at
one instant equals the settled state at an earlier one with every pending time shifted by the
same amount, the run from there on is the earlier stretch again, for ever.  The state, times
taken relative to now: the agenda (arrivals, finishes, releases, checks, retries), the
requeuer's waiting batches, and per live workload its state, quota, flavors, eviction, failed
ProvisioningRequests, where it waits (heap, parked, sticky slot; the sticky marks) and its flavor
scan with what decides whether Kueue resumes it (``lastAssignmentOutdated``: one cycle old or
older, its ClusterQueue's generation moved or not), and the order of the quota reservations
(preemption candidates are ordered by it; not the times, which move with the clock).  Cycle numbers, event counts and wait
statistics are bookkeeping, not state.

It is compared only once no arrival is left on the agenda and some workload was evicted since
the last workload finished, was rejected or was deleted (each of those shrinks the set of live
workloads for good, so no earlier state can come back; the fingerprints kept are dropped then).
Not compared: a MultiKueue run (several clusters on one clock, each with part of the state) and
admission fair sharing (its decaying usage is state that does not repeat exactly).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from whatif.errors import NotSettledError
from whatif.workload import Workload

if TYPE_CHECKING:
    from whatif.simulator import Simulation

Fingerprint = tuple[object, ...]


class Recurrence:
    def __init__(self) -> None:
        self._seen: dict[Fingerprint, tuple[float, int]] = {}  # state -> (time, events then)
        self._evictions = 0  # since the last finish / rejection / deletion

    @property
    def armed(self) -> bool:
        return self._evictions > 0

    def evicted(self) -> None:
        self._evictions += 1

    def progress(self) -> None:
        """A workload left the run for good: no earlier state can repeat."""
        self._evictions = 0
        self._seen.clear()

    def observe(self, sim: Simulation) -> None:
        """Compare the settled state at ``sim.now`` with the earlier ones; a repeat is a livelock."""
        if sim.hooks is not None or sim.cluster.admission_fair_sharing is not None:
            return
        # one lookup (hashing a fingerprint walks every live workload's entry): the state is new
        # when it made the dictionary grow (not ``is``: compiled, a tuple is not one object)
        seen = len(self._seen)
        earlier = self._seen.setdefault(fingerprint(sim), (sim.now, len(sim.events)))
        if len(self._seen) > seen:
            return
        since, first_event = earlier
        pairs: list[str] = []
        for e in sim.events[first_event:]:
            if e.event == "preempted" and e.by is not None:
                pair = f"{e.by} preempted {e.workload}"
                if pair not in pairs:
                    pairs.append(pair)
        raise NotSettledError(
            f"time {sim.now:g}, scheduling cycle {sim.scheduler.cycles}: livelock over time: the state "
            f"repeats the state at time {since:g} every {sim.now - since:g} s with nothing else left to "
            f"happen ({'; '.join(pairs[:6])}); Kueue's scheduler would repeat this for ever"
        )


def _scan(sim: Simulation, wl: Workload) -> object:
    if wl.last_scan is None:
        return None
    assert wl.cluster_queue is not None
    node = sim.cluster.cluster_queues[wl.cluster_queue].node
    age = min(sim.scheduler.cycles - wl.last_scan_cycle, 2)
    return (tuple(sorted(wl.last_scan.items())), age, node.allocatable_generation > wl.last_scan_generation)


def fingerprint(sim: Simulation) -> Fingerprint:
    """The settled state at ``sim.now``, every time relative to it (see the module docstring)."""
    now = sim.now
    agenda = tuple(
        sorted(
            (t - now, kind, wl.key)
            for t, kind, _, generation, wl in sim.agenda
            if generation == wl.generation
        )
    )
    queues = sim.queues
    parked = tuple(sorted(k for cq in queues.inadmissible.values() for k in cq))
    waiting = tuple(sorted(wl.key for wl in queues.pending()))
    live: dict[str, Workload] = {wl.key: wl for wl in queues.pending()}
    for running in sim.running.values():
        live.update(running)
    for _, _, _, generation, wl in sim.agenda:
        if generation == wl.generation:
            live[wl.key] = wl
    workloads = tuple(
        (
            key,
            wl.state,
            wl.cluster_queue,
            tuple(sorted(wl.usage.items())),
            key in sim.evicting,
            wl.failed_requests,
            _scan(sim, wl),
        )
        for key, wl in sorted(live.items())
    )
    # preemption candidates go by quota-reservation time (``CandidatesOrdering``): its order, ties
    # kept together, is state; the times themselves move on with the clock
    holders: dict[float, list[str]] = {}
    for key, wl in live.items():
        if wl.holds_quota() and wl.reserved_at is not None:
            holders.setdefault(wl.reserved_at, []).append(key)
    reserved = tuple(tuple(sorted(holders[t])) for t in sorted(holders))
    return (
        agenda,
        sim.requeuer.waiting(now),
        parked,
        waiting,
        tuple(sorted(queues.sticky.items())),
        workloads,
        reserved,
    )
