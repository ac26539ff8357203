"""Lookups the compiled simulator keeps instead of redoing (issue 44 item 3, round 13) give what
redoing them gives.

- ``Node.child_cohorts`` / ``child_cluster_queues`` are kept per node while its children are the
  same: appending a child (as the cluster is built) gives the new split.
- ``QueueManager`` walks a tree's ``bulk`` sets and parked dictionaries kept per root: they are
  the very objects it keeps per ClusterQueue name, in name order.
- ``whatif.dicts.take`` is ``dict.pop(key, None)``.
- ``DRS.borrowed`` is a tuple, compared and hashed as a set.

``tests/whatif/test_overloaded_trace_events.py`` and ``test_compiled_events.py`` compare whole
runs; these pin each piece on its own.
"""

from __future__ import annotations

from tests.whatif.test_timing import _tree
from whatif.dicts import take
from whatif.fairsharing.share import DRS
from whatif.queues import QueueManager
from whatif.tree import Node, flavor_resource


def _split(node: Node) -> tuple[list[str], list[str]]:
    cohorts = [c.name for c in node.children if not c.is_cluster_queue]
    queues = [c.name for c in node.children if c.is_cluster_queue]
    return cohorts, queues


def test_a_nodes_kept_children_follow_every_appended_child() -> None:
    root = Node("root", False)
    assert (root.child_cohorts(), root.child_cluster_queues()) == ([], [])
    for i, is_cq in enumerate((True, False, True, True, False)):
        child = Node(f"n{i}", is_cq, parent=root)
        root.children.append(child)
        got = ([c.name for c in root.child_cohorts()], [c.name for c in root.child_cluster_queues()])
        assert got == _split(root)
    assert root.child_cluster_queues() is root.child_cluster_queues()  # kept, not rebuilt


def test_the_queues_kept_per_tree_are_the_queues_own_sets_in_name_order() -> None:
    c = _tree(("cq3", "child2"), ("cq1", "child1"), ("cq2", "child1"))  # and "lonely", apart
    queues = QueueManager(c)
    names = ["cq1", "cq2", "cq3"]
    kept = queues._tree(c.cluster_queues["cq3"].node)
    assert len(kept) == len(names)
    for name, (bulk, parked) in zip(names, kept, strict=True):
        assert bulk is queues.bulk[name] and parked is queues.inadmissible[name]
    queues.bulk[names[0]].add(7)
    assert queues.queue_inadmissible(names[-1]) == 0
    assert not queues.bulk[names[0]]  # the tree's requeue cleared it through the kept set


def test_take_is_pop_with_none() -> None:
    d = {"a": 1, "b": 2}
    e = dict(d)
    for key in ("a", "x", "a", "b"):
        assert take(d, key) == e.pop(key, None)
        assert d == e


def test_a_share_borrowing_the_same_resources_in_another_order_is_equal() -> None:
    cpu, gpu = flavor_resource("f", "cpu"), flavor_resource("f", "gpu")
    a = DRS(1.0, 10.0, "cpu", True, (cpu, gpu))
    b = DRS(1.0, 10.0, "cpu", True, (gpu, cpu))
    assert a == b and hash(a) == hash(b)
    assert a != DRS(1.0, 10.0, "cpu", True, (cpu,))
    assert a.borrowing_on({gpu: 1000}) and not DRS(1.0, 10.0, "cpu", True, (cpu,)).borrowing_on({gpu: 1000})
