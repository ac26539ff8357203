"""The KAI what-if end to end: a manifests-built stack, refusals, and what must hold over a run."""

from __future__ import annotations

from typing import Any

import pytest

from whatif.errors import NotModelledError
from whatif.kai.model import build_kai
from whatif.kai.run import simulate_kai
from whatif.kai.section import kai_section_lines
from whatif.pack import StackModel
from whatif.sources import manifests_items
from whatif.trace import parse_trace

QUEUES = """
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: dept}
spec:
  resources:
    gpu: {quota: 4, limit: -1, overQuotaWeight: 1}
    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}
    memory: {quota: -1, limit: -1, overQuotaWeight: 1}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: a}
spec:
  parentQueue: dept
  resources:
    gpu: {quota: 2, limit: -1, overQuotaWeight: 1}
    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}
    memory: {quota: -1, limit: -1, overQuotaWeight: 1}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: b}
spec:
  parentQueue: dept
  resources:
    gpu: {quota: 2, limit: -1, overQuotaWeight: 1}
    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}
    memory: {quota: -1, limit: -1, overQuotaWeight: 1}
"""


def _model(extra: str = "") -> StackModel:
    return StackModel.from_plain(manifests_items(QUEUES + extra, "test"))


def _with_nodes(model: StackModel, gpus: int) -> Any:
    from whatif.kai.cluster import Node

    cluster = build_kai(model)
    cluster.nodes = [Node(f"n{i}", 8000.0, 32e9, 1) for i in range(gpus)]
    return cluster


def _wl(name: str, queue: str, submit: float, gpus: int, priority_class: str = "train") -> dict[str, Any]:
    return {
        "name": name,
        "namespace": "ns",
        "queue": queue,
        "priorityClass": priority_class,
        "submit": submit,
        "duration": 3600,
        "podSets": [{"name": "w", "count": gpus, "requests": {"nvidia.com/gpu": "1"}}],
    }


def test_queue_b_reclaims_its_deserved_gpus_from_queue_a() -> None:
    """a borrows all 4 GPUs; b's arrival within its deserved 2 reclaims two of a's PodGroups."""
    from whatif.kai.results import document
    from whatif.kai.simulator import simulate

    trace = parse_trace({"workloads": [_wl(f"a{i}", "a", 0, 1) for i in range(4)] + [_wl("b0", "b", 60, 2)]})
    cluster = _with_nodes(_model(), 4)
    doc = document(cluster, simulate(cluster, trace))
    reclaimed = [e for e in doc["events"] if e["event"] == "reclaimed"]
    assert len(reclaimed) == 2 and all(e["by"] == "ns/b0" and e["time"] == 60 for e in reclaimed)
    assert doc["queues"]["b"]["waitSeconds"]["max"] == 0
    assert doc["queues"]["dept"]["admitted"] == 4 + 1 + 2  # the two reclaimed start again later


def test_non_preemptible_work_is_never_reclaimed() -> None:
    from whatif.kai.results import document
    from whatif.kai.simulator import simulate

    wls = [_wl(f"a{i}", "a", 0, 1, "build") for i in range(2)] + [_wl(f"a{i}", "a", 0, 1) for i in (2, 3)]
    trace = parse_trace({"workloads": [*wls, _wl("b0", "b", 60, 2)]})
    cluster = _with_nodes(_model(), 4)
    doc = document(cluster, simulate(cluster, trace))
    victims = {e["workload"] for e in doc["events"] if e["event"] == "reclaimed"}
    assert victims == {"ns/a2", "ns/a3"}


def test_gpu_memory_requests_are_refused_with_one_line() -> None:
    wl = _wl("x", "a", 0, 1)
    wl["podSets"][0]["requests"] = {"gpu-memory": "2000"}
    with pytest.raises(NotModelledError, match=r"requests\.gpu-memory: GPU-memory requests are not modelled"):
        simulate_kai(_model(), parse_trace({"workloads": [wl]}))


def test_a_queue_with_min_runtime_is_refused_in_the_report() -> None:
    extra = """
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: c}
spec:
  parentQueue: dept
  reclaimMinRuntime: 10m
  resources: {gpu: {quota: 1, limit: -1, overQuotaWeight: 1}}
"""
    lines = kai_section_lines("kai", _model(extra))
    assert any(line.startswith("**Not simulated:**") and "reclaimMinRuntime" in line for line in lines)


def test_a_workload_for_a_parent_queue_is_never_admitted() -> None:
    doc = simulate_kai(_model(), parse_trace({"workloads": [_wl("p", "dept", 0, 1), _wl("q", "a", 0, 1)]}))
    assert doc["queues"]["(no KAI leaf queue)"]["neverAdmitted"] == ["ns/p"]


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        (
            "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: x}\nspec:\n  parentQueue: y\n"
            "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: y}\nspec:\n  parentQueue: x\n"
            "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: c}\nspec:\n  parentQueue: x\n",
            "its parentQueue chain is a cycle",
        ),
        (
            "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: c}\nspec:\n  parentQueue: gone\n",
            "parent queue gone is not in this stack",
        ),
    ],
)
def test_a_queue_without_a_root_is_never_scheduled_and_the_run_ends(extra: str, why: str) -> None:
    """The pack's ``QueueTree.ancestors`` stops at a cycle or a missing parent (rule
    ``kai-queue-parent-exists``); KAI schedules no job of such a queue (``input_jobs.go``).  The run
    ends (a cycle once made it walk the parent chain for ever) and the rooted queues still run."""
    from whatif.kai.simulator import simulate

    cluster = _with_nodes(_model(extra), 2)
    assert "c" in cluster.unrooted and "c" not in cluster.queues
    gpu = {"nvidia.com/gpu": "1"}
    trace = parse_trace(
        {
            "workloads": [
                {"name": q, "namespace": "ns", "queue": q, "submit": 0, "duration": 10,
                 "podSets": [{"name": "w", "count": 1, "requests": gpu}]}
                for q in ("c", "a")
            ]
        }
    )  # fmt: skip
    events = [(e.workload, e.event, e.reason or "") for e in simulate(cluster, trace).events]
    assert ("ns/c", "inadmissible") in [(w, ev) for w, ev, _ in events]
    assert why in next(r for w, ev, r in events if w == "ns/c")
    assert ("ns/a", "admitted", "") in events
