"""The simulator's cheaper bookkeeping (issue 44 item 3, round 9) decides what the costlier one did.

- The trace's arrivals are kept out of the agenda's heap (``Simulation.start``); entries due at
  one instant still come in the order one heap of all of them pops: time, kind, number (the
  module docstring of ``whatif.simulator``: finishes, evictions and check results before arrivals).
- Quota and usage dictionaries are keyed by one tuple per (flavor, resource)
  (``whatif.tree.flavor_resource``): the flavor assigner's keys are the quota tree's objects.
- The queues compare a workload's ``computeSchedulingHash`` input by number
  (``Workload.shape_id``): one number exactly for equal shapes.

``tests/whatif/test_overloaded_trace_events.py`` and ``test_compiled_events.py`` compare whole
runs; these pin each piece on its own.
"""

from __future__ import annotations

import heapq

from tests.whatif.test_ported_flavorassigner import FakeOracle
from tests.whatif.test_simulator import cluster, wl
from whatif.flavors import FlavorAssigner
from whatif.simulator import CHECK, EVICT, FINISH, REQUEUE, SUBMIT, Simulation
from whatif.trace import parse_trace
from whatif.tree import flavor_resource
from whatif.workload import PodSet, Workload


def test_entries_due_at_one_instant_come_in_one_heaps_order() -> None:
    trace = [wl(f"w{i}", submit, 100) for i, submit in enumerate((10, 0, 10, 5, 10))]
    sim = Simulation(cluster("8"), parse_trace({"workloads": trace}))
    sim.start()
    by_name = {w.name: w for w in sim.workloads}
    a, b = by_name["w0"], by_name["w1"]
    # scheduled after the arrivals (higher numbers), of kinds before and after SUBMIT's
    for kind, w in ((REQUEUE, a), (FINISH, b), (EVICT, a), (CHECK, b)):
        sim._schedule(10.0, kind, w)
    sim._schedule(20.0, FINISH, a)
    one_heap = list(sim.agenda) + list(sim._arrivals)
    heapq.heapify(one_heap)
    due = {}
    for now in (0.0, 5.0, 10.0, 20.0):
        assert sim.next_time() == now
        sim.now = now
        want = []
        while one_heap and one_heap[0][0] == now:
            want.append(heapq.heappop(one_heap))
        due[now] = sim._due()
        assert due[now] == want
    assert sim.next_time() == float("inf")
    # at 10: the finish, release and check result before the three arrivals (in creation
    # order), the retry after them, although all four were scheduled after the arrivals
    assert [(kind, w.name) for _, kind, _, _, w in due[10.0]] == [
        (FINISH, "w1"),
        (EVICT, "w0"),
        (CHECK, "w1"),
        (SUBMIT, "w0"),
        (SUBMIT, "w2"),
        (SUBMIT, "w4"),
        (REQUEUE, "w0"),
    ]


def test_the_assigners_usage_keys_are_the_quota_trees_own() -> None:
    c = cluster("2")
    cq = c.cluster_queues["cq"]
    w = Workload(
        "team-a", "w", "user-queue", 0, 0.0, 60.0, 0, (PodSet("workers", 1, {"nvidia.com/gpu": 1000}),)
    )
    w.cluster_queue = "cq"
    usage = FlavorAssigner(c, FakeOracle()).assign(w, cq).usage
    (quota_key,) = cq.node.quotas
    (usage_key,) = usage
    assert usage_key == ("l4", "nvidia.com/gpu")
    assert usage_key is quota_key
    assert flavor_resource("l4", "nvidia.com/gpu") is quota_key
    assert flavor_resource("l4", "cpu") == ("l4", "cpu")


def test_equal_shapes_and_only_they_share_a_number() -> None:
    def made(name: str, namespace: str, priority: int, gpus: int) -> Workload:
        return Workload(namespace, name, "q", priority, 0.0, 60.0, 0, (PodSet("main", 1, {"gpu": gpus}),))

    first, same = made("a", "ns-1", 100, 1000), made("b", "ns-2", 100, 1000)
    assert first.shape_id() == same.shape_id()
    others = [made("c", "ns-1", 0, 1000), made("d", "ns-1", 100, 2000)]
    ids = {first.shape_id()} | {o.shape_id() for o in others}
    assert len(ids) == 3
    assert [o.shape() != first.shape() for o in others] == [True, True]
