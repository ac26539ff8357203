"""The stack's KAI objects as the KAI what-if uses them: the queue tree, priority classes, nodes.

- Queues (``scheduling.run.ai/v2`` Queue, kai-scheduler/KAI-Scheduler v0.17.0
  ``pkg/apis/scheduling/v2/queue_types.go``): the declared ones plus the two the chart creates
  (the pack's ``gpu_batch_policy.facts.kai.tree.QueueTree``).  ``priority`` defaults to 100
  (``pkg/common/constants`` ``DefaultQueuePriority``, ``queue_info.go`` ``NewQueueInfo``);
  unset ``quota``/``limit``/``overQuotaWeight`` read as 0 (plain float64 fields), and memory is
  MB times 10^6 (``proportion.go`` ``createQueueResourceAttrs``).  Creation order is taken as the
  order the stack declares them (KAI breaks the last queue-order tie by creation time).
- Priority classes: the chart's ``train`` 50, ``build-preemptible`` 75, ``build`` 100,
  ``inference`` 125 (``deployments/kai-scheduler/templates/priorityclasses/*.yaml``) and the
  stack's own ``scheduling.k8s.io`` PriorityClasses; no class is 50
  (``constants.DefaultPodGroupPriority``).
- Nodes: every GPU node pool of the stack at its ``maxNodes`` (the pack's ``pools.pool_capacity``),
  each node with the machine's allocatable CPU and memory (``fit.allocatable.node_allocatable``).

Refused with one line (:class:`NotModelledError`): a Queue's ``preemptMinRuntime`` /
``reclaimMinRuntime`` (the minruntime plugin), and values unknown until apply.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from whatif.errors import NotModelledError, WhatIfError
from whatif.kai.cluster import Node
from whatif.kai.proportion import CPU, GPU, MEMORY, UNLIMITED, QueueAttrs
from whatif.pack import KAI_BUILTIN_PRIORITIES, StackModel, Unknown, pools

MB = 1_000_000.0  # proportion.go "mebibytes" = 1000 * 1000
DEFAULT_QUEUE_PRIORITY = 100
DEFAULT_JOB_PRIORITY = 50
KAI_PRIORITY_CLASSES = dict(KAI_BUILTIN_PRIORITIES)  # the pack's table of the chart's classes
_FIELDS = {"cpu": CPU, "memory": MEMORY, "gpu": GPU}


@dataclass
class KaiCluster:
    queues: dict[str, QueueAttrs]
    nodes: list[Node]
    priority_classes: dict[str, int]
    notes: list[str] = field(default_factory=list)
    # queues without a root (a parentQueue cycle, or a parent that does not exist) -> why: left
    # out of ``queues``, their PodGroups are never scheduled
    unrooted: dict[str, str] = field(default_factory=dict)

    def leaves(self) -> list[str]:
        return sorted(n for n, q in self.queues.items() if not q.children)


def _number(raw: object, where: str) -> float:
    if raw is None:
        return 0.0
    if isinstance(raw, Unknown):
        raise WhatIfError(f"{where}: value unknown until apply; the what-if needs it known")
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        raise WhatIfError(f"{where}: got {raw!r}, expected a number")
    return float(raw)


def kai_queues(model: StackModel, unrooted: dict[str, str] | None = None) -> dict[str, QueueAttrs]:
    """Every KAI queue with its quota, limit and over-quota weight per resource.

    A queue whose ``parentQueue`` chain ends in a cycle or at a queue that does not exist has no
    root: KAI drops its jobs (``input_jobs.go``; the pack's ``QueueTree.ancestors`` and rule
    ``kai-queue-parent-exists``), so it is left out and recorded in ``unrooted`` with why."""
    from gpu_batch_policy.facts.kai.tree import QueueTree

    tree = QueueTree(model)
    out: dict[str, QueueAttrs] = {}
    for index, node in enumerate(tree.nodes.values()):
        where = node.describe()
        stop = tree.ancestors(node.name)[1]
        if stop == "cycle" or (stop or "").startswith("missing:"):
            if unrooted is not None:
                unrooted[node.name] = (
                    "its parentQueue chain is a cycle: no root, KAI never schedules it"
                    if stop == "cycle"
                    else f"parent queue {(stop or '').removeprefix('missing:')} is not in this stack: the what-if "
                    "cannot place it (KAI drops the jobs of a queue whose parent does not exist)"
                )
            continue
        if node.queue is not None:
            spec = node.queue.obj.spec if isinstance(node.queue.obj.spec, dict) else {}
            for key in ("preemptMinRuntime", "reclaimMinRuntime"):
                if spec.get(key) is not None:
                    raise NotModelledError(
                        f"{where} spec.{key}: minimum runtimes before preemption or reclaim are not modelled"
                    )
        if isinstance(node.parent, Unknown) or isinstance(node.resources, Unknown):
            raise WhatIfError(
                f"{where}: parent or resources unknown until apply; the what-if needs them known"
            )
        raw_priority = node.queue.priority if node.queue is not None else None
        if isinstance(raw_priority, Unknown):
            raise WhatIfError(f"{where} spec.priority: value unknown until apply")
        q = QueueAttrs(
            node.name,
            node.parent or None,
            DEFAULT_QUEUE_PRIORITY if raw_priority is None else int(raw_priority),
            index,
        )
        for key, resource in _FIELDS.items():
            entry = (node.resources or {}).get(key)
            scale = MB if resource == MEMORY else 1.0
            quota = _number(entry.quota if entry else None, f"{where} spec.resources.{key}.quota")
            limit = _number(entry.limit if entry else None, f"{where} spec.resources.{key}.limit")
            weight = _number(
                entry.over_quota_weight if entry else None, f"{where} spec.resources.{key}.overQuotaWeight"
            )
            share = q.of(resource)
            share.deserved = max(UNLIMITED, quota * scale)
            share.max_allowed = max(UNLIMITED, limit * scale)
            share.over_quota_weight = weight
        out[q.name] = q
    for q in out.values():
        if q.parent is not None and q.parent in out:
            out[q.parent].children.append(q.name)
    return out


def priority_classes(model: StackModel) -> dict[str, int]:
    out = dict(KAI_PRIORITY_CLASSES)
    for obj in model.kube_objects("scheduling.k8s.io", "PriorityClass"):
        value = obj.props.get("value")
        if isinstance(value, int) and not isinstance(value, bool):
            out[obj.name] = value
    return out


def gpu_nodes(model: StackModel, notes: list[str]) -> list[Node]:
    """The GPU pools' nodes at ``maxNodes``, with the machine's allocatable CPU and memory."""
    from gpu_batch_policy.facts.fit.allocatable import node_allocatable
    from gpu_batch_policy.facts.fit.machines import machine_shape

    nodes: list[Node] = []
    for pool in model.node_pools():
        cap = pools.pool_capacity(model, pool)
        if not cap.gpus_per_node:
            continue
        if cap.max_nodes is None:
            notes.append(f"node pool {pool.name}: maximum node count unknown until apply, left out")
            continue
        shape = machine_shape(pool.machine_type) if isinstance(pool.machine_type, str) else None
        if shape is None:
            notes.append(f"node pool {pool.name}: machine type {pool.machine_type!r} unknown, left out")
            continue
        alloc = node_allocatable(shape, cap.gpus_per_node)
        for i in range(cap.max_nodes):
            nodes.append(
                Node(f"{pool.name}-{i}", float(alloc.cpu) * 1000, float(alloc.memory), cap.gpus_per_node)
            )
    if pools.auto_provisioning(model):
        notes.append(
            "GKE node auto-provisioning may add node pools; only the declared GPU pools (at maxNodes) are counted"
        )
    return nodes


def build_kai(model: StackModel) -> KaiCluster:
    notes: list[str] = []
    unrooted: dict[str, str] = {}
    queues = kai_queues(model, unrooted)
    return KaiCluster(queues, gpu_nodes(model, notes), priority_classes(model), notes, unrooted)
