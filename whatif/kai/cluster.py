"""Nodes, pods and PodGroups as KAI's scheduler sees them, and how pods are placed on nodes.

Placement follows KAI v0.17.0's default plugins (``pkg/scheduler/conf_util/
scheduler_conf_util.go`` ``defaultSchedulerConf``: ``nodeplacement`` with gpu and cpu
``binpack``, ``gpupack``, ``gpusharingorder``): a pod goes to the feasible node with the fewest
free GPUs (then the least free CPU, then name); a GPU-fraction pod shares a device that is
already shared and has room before it reserves a free one (``docs/gpu-sharing``: the
``gpu-reservation`` pod holds the whole device, while the queue is charged the fraction).

A PodGroup's queue usage is the sum of its pods' requests: CPU millicores, memory bytes and GPUs
with fractions as ``gpu-fraction × gpu-fraction-num-devices`` (``pkg/scheduler/api/pod_info``
``AcceptedResourceVector``; ``proportion.go`` ``updateQueuesCurrentResourceUsage``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from whatif.kai.proportion import CPU, GPU, MEMORY, Vector, vector

PENDING = "pending"
RUNNING = "running"
FINISHED = "finished"
EPSILON = 1e-9


@dataclass(frozen=True)
class PodSpec:
    """One pod's requests: whole GPUs, or a fraction of ``devices`` GPUs (``gpu-fraction``)."""

    cpu: float = 0.0  # millicores
    memory: float = 0.0  # bytes
    gpus: int = 0
    fraction: float = 0.0
    devices: int = 1

    def queue_vector(self) -> Vector:
        return vector(self.cpu, self.memory, self.gpus + self.fraction * self.devices)


@dataclass(eq=False)
class Node:
    name: str
    cpu: float
    memory: float
    gpus: int
    free_cpu: float = 0.0
    free_memory: float = 0.0
    devices: list[float] = field(default_factory=list)  # free share per device (1 = idle)
    shared: list[bool] = field(default_factory=list)  # a device reserved for fractions

    def __post_init__(self) -> None:
        self.free_cpu, self.free_memory = self.cpu, self.memory
        self.devices = [1.0] * self.gpus
        self.shared = [False] * self.gpus

    def idle_devices(self) -> list[int]:
        return [i for i, free in enumerate(self.devices) if free >= 1.0 - EPSILON and not self.shared[i]]

    def free_gpus(self) -> float:
        return sum(self.devices)


@dataclass
class Placement:
    node: Node
    devices: tuple[int, ...]  # whole devices, or the devices a fraction pod shares
    spec: PodSpec


@dataclass(eq=False)
class Job:
    """A PodGroup: its pods start together (minMember = every pod of the gang)."""

    key: str
    queue: str
    priority: int
    preemptible: bool
    seq: int  # creation order
    pods: tuple[PodSpec, ...]
    submit: float = 0.0
    duration: float = 0.0
    state: str = PENDING
    placements: list[Placement] = field(default_factory=list)
    started: float | None = None
    first_started: float | None = None
    generation: int = 0

    def demand(self) -> Vector:
        total = vector()
        for pod in self.pods:
            for r, v in pod.queue_vector().items():
                total[r] += v
        return total

    def gpus(self) -> float:
        return self.demand()[GPU]


def _fits(node: Node, pod: PodSpec) -> tuple[int, ...] | None:
    """Devices ``pod`` would take on ``node`` (empty for a pod without GPUs), None when it does
    not fit."""
    if pod.cpu > node.free_cpu + EPSILON or pod.memory > node.free_memory + EPSILON:
        return None
    if pod.fraction > 0:
        shared = [i for i in range(node.gpus) if node.shared[i] and node.devices[i] + EPSILON >= pod.fraction]
        idle = node.idle_devices()
        if len(shared) >= pod.devices:  # gpusharingorder: fill shared devices first
            return tuple(sorted(shared, key=lambda i: (node.devices[i], i))[: pod.devices])
        chosen = shared + idle[: pod.devices - len(shared)]
        return tuple(chosen) if len(chosen) >= pod.devices else None
    if pod.gpus > 0:
        idle = node.idle_devices()
        return tuple(idle[: pod.gpus]) if len(idle) >= pod.gpus else None
    return ()


def place(node: Node, pod: PodSpec, devices: tuple[int, ...]) -> Placement:
    node.free_cpu -= pod.cpu
    node.free_memory -= pod.memory
    for i in devices:
        if pod.fraction > 0:
            node.shared[i] = True
            node.devices[i] -= pod.fraction
        else:
            node.devices[i] = 0.0
    return Placement(node, devices, pod)


def unplace(p: Placement) -> None:
    node, pod = p.node, p.spec
    node.free_cpu += pod.cpu
    node.free_memory += pod.memory
    for i in p.devices:
        if pod.fraction > 0:
            node.devices[i] += pod.fraction
            if node.devices[i] >= 1.0 - EPSILON:
                node.devices[i], node.shared[i] = 1.0, False
        else:
            node.devices[i] = 1.0


def place_job(nodes: list[Node], job: Job) -> list[Placement] | None:
    """Every pod of ``job`` on a node (binpack), or None with nothing placed."""
    done: list[Placement] = []
    for pod in job.pods:
        best: tuple[tuple[float, float, str], Node, tuple[int, ...]] | None = None
        for node in nodes:
            devices = _fits(node, pod)
            if devices is None:
                continue
            rank = (node.free_gpus(), node.free_cpu, node.name)
            if best is None or rank < best[0]:
                best = (rank, node, devices)
        if best is None:
            for p in reversed(done):
                unplace(p)
            return None
        done.append(place(best[1], pod, best[2]))
    return done


def total_resources(nodes: list[Node]) -> Vector:
    """``setTotalResources``: the allocatable of every node."""
    return {
        CPU: sum(n.cpu for n in nodes),
        MEMORY: sum(n.memory for n in nodes),
        GPU: float(sum(n.gpus for n in nodes)),
    }
