"""A KAI session built the way KAI's action tests build theirs (``pkg/scheduler/test_utils``
at kai-scheduler/KAI-Scheduler@v0.17.0, ``test_utils_builder.go`` ``BuildQueueInfoMap`` /
``BuildDepartmentInfoMap``, ``jobs_fake/jobs.go``, ``nodes_fake/nodes.go``), for ported cases.

Defaults as there: a queue's CPU and memory quota and limit are unlimited with over-quota weight
1, its GPU limit unlimited unless ``max_allowed`` is given; a department's GPU over-quota weight is
its deserved GPUs; without departments every queue sits under a ``default`` department with
unlimited quota; nodes have 20000 millicores and 20G memory; jobs are created oldest first in
the order listed after a stable sort by priority, highest first; a job's gang is all its tasks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from whatif.kai.cluster import PENDING, RUNNING, Job, Node, PodSpec, place
from whatif.kai.proportion import CPU, GPU, MEMORY, UNLIMITED, QueueAttrs
from whatif.kai.session import Session, preemptible

TRAIN, BUILD_PREEMPTIBLE, BUILD, INFERENCE = 50, 75, 100, 125


@dataclass
class Q:
    name: str
    deserved: float
    weight: float = 0.0
    max_allowed: float = 0.0  # 0: unlimited, as the test builder reads it
    parent: str | None = None
    priority: int | None = None


@dataclass
class D:
    name: str
    deserved: float
    max_allowed: float = 0.0


@dataclass
class J:
    name: str
    queue: str
    gpus: float  # per task; below 1 a gpu-fraction
    priority: int = TRAIN
    tasks: list[str | None] = field(default_factory=lambda: [None])  # node name, or None: pending


def _attrs(
    name: str, parent: str | None, priority: int, created: int, gpu: tuple[float, float, float]
) -> QueueAttrs:
    q = QueueAttrs(name, parent, priority, created)
    for r in (CPU, MEMORY):
        q.of(r).deserved, q.of(r).max_allowed, q.of(r).over_quota_weight = UNLIMITED, UNLIMITED, 1.0
    q.of(GPU).deserved, q.of(GPU).max_allowed, q.of(GPU).over_quota_weight = gpu
    return q


def session(
    nodes: dict[str, int], queues: list[Q], jobs: list[J], departments: list[D] | None = None
) -> Session:
    deps = departments if departments else [D("default", UNLIMITED, UNLIMITED)]
    attrs: dict[str, QueueAttrs] = {}
    for i, d in enumerate(deps):
        limit = d.max_allowed or UNLIMITED
        attrs[d.name] = _attrs(d.name, None, 100, i, (d.deserved, limit, d.deserved))
    for i, q in enumerate(queues):
        parent = q.parent if departments else "default"
        limit = q.max_allowed or UNLIMITED
        attrs[q.name] = _attrs(
            q.name, parent, 100 if q.priority is None else q.priority, i, (q.deserved, limit, q.weight)
        )
        if parent:
            attrs[parent].children.append(q.name)
    node_objs = {n: Node(n, 20000.0, 20e9, g) for n, g in nodes.items()}
    built = []
    for seq, j in enumerate(sorted(jobs, key=lambda j: -j.priority)):
        spec = PodSpec(gpus=int(j.gpus), fraction=0.0) if j.gpus >= 1 else PodSpec(fraction=j.gpus)
        job = Job(j.name, j.queue, j.priority, preemptible(j.priority), seq, tuple(spec for _ in j.tasks))
        if all(t is not None for t in j.tasks):
            job.state = RUNNING
            for t in j.tasks:
                assert t is not None
                node = node_objs[t]
                devices = _devices(node, spec)
                job.placements.append(place(node, spec, devices))
        else:
            job.state = PENDING
        built.append(job)
    return Session(attrs, list(node_objs.values()), built)


def _devices(node: Node, spec: PodSpec) -> tuple[int, ...]:
    if spec.fraction:
        shared = [i for i in range(node.gpus) if node.shared[i] and node.devices[i] >= spec.fraction]
        return tuple((shared or node.idle_devices())[:1])
    return tuple(node.idle_devices()[: spec.gpus])


def outcome(s: Session) -> dict[str, str]:
    """Each job as KAI's test expectations name it: Running, Releasing, Pipelined, Pending."""
    evicted = {job.key for action, job, _ in s.log if action != "admitted"}
    started = {job.key for action, job, _ in s.log if action == "admitted"}
    out = {}
    for job in s.jobs:
        if job.key in evicted and job.state != RUNNING:
            out[job.key] = "Releasing"
        elif job.key in started and job.state == RUNNING:
            out[job.key] = "Pipelined"
        else:
            out[job.key] = "Running" if job.state == RUNNING else "Pending"
    return out
