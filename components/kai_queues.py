"""KAI Scheduler's hierarchical queues (``scheduling.run.ai/v2`` Queue) as code.

Queues are cluster-scoped; a child names its parent in ``spec.parentQueue``, and only leaves
run workloads (reference/kai-kuberay-skypilot.md §1.5).  Every resource is written with all of
quota, limit and overQuotaWeight: KAI reads an absent limit as 0, "nothing allowed", which
silently blocks every job of the subtree.  Parents are created before their children so the
scheduler never sees an orphan (it drops jobs of queues whose parent is missing).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi

from components.k8s_object import KubeObject, compact, inherited_depends_on

API_VERSION = "scheduling.run.ai/v2"


@dataclass(frozen=True)
class KaiResource:
    """cpu in millicores, memory in MB (10^6 bytes), gpu in devices; -1 = unlimited."""

    quota: float
    limit: float
    over_quota_weight: float

    def render(self) -> dict[str, float | int]:
        return {
            "quota": _number(self.quota),
            "limit": _number(self.limit),
            "overQuotaWeight": _number(self.over_quota_weight),
        }


@dataclass(frozen=True)
class KaiQueueArgs:
    name: str
    cpu: KaiResource
    gpu: KaiResource
    memory: KaiResource
    parent: str | None = None
    priority: int | None = None
    display_name: str | None = None


def queue_spec(queue: KaiQueueArgs) -> dict[str, Any]:
    return compact(
        {
            "parentQueue": queue.parent,
            "priority": queue.priority,
            "displayName": queue.display_name,
            "resources": {
                "cpu": queue.cpu.render(),
                "gpu": queue.gpu.render(),
                "memory": queue.memory.render(),
            },
        }
    )


class KaiQueues(pulumi.ComponentResource):
    """The queue tree; ``queues`` must list every parent before its children."""

    queues: dict[str, KubeObject]

    def __init__(
        self, name: str, queues: tuple[KaiQueueArgs, ...], opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpu-batch:kai:Queues", name, None, opts)
        after = inherited_depends_on(opts)
        self.queues = {}
        for queue in queues:
            parent = self.queues.get(queue.parent) if queue.parent is not None else None
            if queue.parent is not None and parent is None:
                raise ValueError(f"KAI queue {queue.name}: parent {queue.parent} must be listed before it")
            self.queues[queue.name] = KubeObject(
                f"queue-{queue.name}",
                api_version=API_VERSION,
                kind="Queue",
                metadata={"name": queue.name, "labels": {"app.kubernetes.io/managed-by": "pulumi"}},
                spec=queue_spec(queue),
                opts=pulumi.ResourceOptions(parent=self, depends_on=[*after, *([parent] if parent else [])]),
            )
        self.register_outputs({"queues": list(self.queues)})


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value
