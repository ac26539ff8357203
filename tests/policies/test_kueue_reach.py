"""``facts.kueue_reach.reach``: which LocalQueues let a namespace submit to a ClusterQueue.

Kueue v0.19.2 admits a Workload into a ClusterQueue only through a LocalQueue naming it
(``spec.clusterQueue``), in a namespace the ClusterQueue's ``namespaceSelector`` selects
(``pkg/cache/scheduler/clusterqueue.go`` ``updateClusterQueue``).  The answer reads the LocalQueues
once per model (it runs for every ClusterQueue: a scan per queue was quadratic), so these tests
also hold the index to the scan's answers: only the LocalQueues naming this queue count, in the
model's order; one naming a ClusterQueue unknown until apply makes every answer "cannot tell".
"""

from __future__ import annotations

from typing import Any

from gpu_batch_policy.facts.kueue_reach import reach
from gpu_batch_policy.facts.model import StackModel

from tests.policies.pack_harness import UNKNOWN, Res
from tests.policies.pack_objects import cluster_queue, local_queue, namespace

SELECT_ALL: dict[str, Any] = {"namespaceSelector": {}}


def _model(resources: list[Res]) -> StackModel:
    return StackModel.from_plain([(r.type, r.props, r.urn, r.name) for r in resources])


def _reach(resources: list[Res], queue: str) -> Any:
    model = _model(resources)
    [cq] = [q for q in model.cluster_queues() if q.name == queue]
    return reach(model, cq)


def test_only_the_local_queues_naming_the_queue_reach_it_in_the_models_order() -> None:
    resources = [
        namespace("team-a"),
        namespace("team-b"),
        cluster_queue("a-cq", **SELECT_ALL),
        cluster_queue("b-cq", **SELECT_ALL),
        local_queue("second", "team-b", "a-cq"),
        local_queue("other", "team-a", "b-cq"),
        local_queue("first", "team-a", "a-cq"),
    ]
    answer = _reach(resources, "a-cq")
    assert answer.reachable is True
    assert answer.local_queues == ("team-a/first", "team-b/second")
    assert _reach(resources, "b-cq").local_queues == ("team-a/other",)


def test_a_queue_no_local_queue_names_is_unreachable_whatever_the_others_name() -> None:
    resources = [
        namespace("team-a"),
        cluster_queue("lonely", **SELECT_ALL),
        cluster_queue("busy", **SELECT_ALL),
        local_queue("lq", "team-a", "busy"),
        local_queue("no-target", "team-a", "busy"),
    ]
    resources[-1].props["spec"] = {}  # no spec.clusterQueue at all: names no queue
    answer = _reach(resources, "lonely")
    assert (answer.reachable, answer.why) == (False, "no LocalQueue points at it")
    assert _reach(resources, "busy").local_queues == ("team-a/lq",)


def test_a_local_queue_naming_a_queue_unknown_until_apply_leaves_every_queue_undecided() -> None:
    resources = [
        namespace("team-a"),
        cluster_queue("a-cq", **SELECT_ALL),
        cluster_queue("b-cq", **SELECT_ALL),
        local_queue("known", "team-a", "a-cq"),
        local_queue("later", "team-a", UNKNOWN),
        local_queue("later-too", "team-a", UNKNOWN),
    ]
    for queue in ("a-cq", "b-cq"):  # even the queue a known LocalQueue names
        answer = _reach(resources, queue)
        assert answer.reachable is None
        assert answer.why == "LocalQueue team-a/later names a ClusterQueue unknown until apply"


def test_the_selector_still_decides_among_the_queues_own_local_queues() -> None:
    resources = [
        namespace("team-a"),
        namespace("team-b"),
        cluster_queue("a-cq"),  # selects team-a only (pack_objects' default)
        local_queue("lq", "team-b", "a-cq"),
    ]
    answer = _reach(resources, "a-cq")
    assert (
        answer.reachable is False and "admits none of its LocalQueues' namespaces (team-b/lq)" in answer.why
    )


def test_a_thousand_queues_read_the_local_queues_once() -> None:
    resources: list[Res] = []
    for index in range(1_000):
        resources += [
            namespace(f"team-{index}"),
            cluster_queue(f"cq-{index}", **SELECT_ALL),
            local_queue("lq", f"team-{index}", f"cq-{index}"),
        ]
    model = _model(resources)
    reads = 0
    read_local_queues = model.local_queues

    def counted() -> Any:
        nonlocal reads
        reads += 1
        return read_local_queues()

    model.local_queues = counted  # type: ignore[method-assign]
    answers = {cq.name: reach(model, cq) for cq in model.cluster_queues()}
    assert reads == 1
    assert all(a.reachable is True for a in answers.values())
    assert all(a.local_queues == (f"team-{name.removeprefix('cq-')}/lq",) for name, a in answers.items())
