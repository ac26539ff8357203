"""Config of the KAI Scheduler queue tree (key ``gpu-batch:kaiQueues``) and its checks.

A list of top-level queues (departments), each with ``children`` (team queues) -- the two
levels of the seed and of KAI's docs; KAI itself allows any depth since v0.13.0 (CHANGELOG #858).  Units are KAI's own, as in the Queue CRD: cpu in millicores
(1000 = 1 CPU), memory in MB (10^6 bytes), gpu in devices (fractions allowed); ``-1`` means
unlimited (reference/kai-kuberay-skypilot.md §1.5).

Every resource always renders all three numbers.  Defaults are the chart's own default queues
(quota 0, limit -1, overQuotaWeight 1): an *unset* KAI limit means "nothing allowed", so it is
never left implicit.  KAI's webhook checks none of the arithmetic below (§1.5, anchors.md §4.9:
a child quota above its parent's is accepted and only fails at pod time with OverLimit), so
these checks are the only ones before deploy.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Literal

from pydantic import Field, field_validator

from stacks.base import ConfigModel, DnsLabel, Int32, NonEmptyStr
from stacks.errors import ConfigIssue

KAI_QUEUES_KEY = "gpu-batch:kaiQueues"
UNLIMITED = -1
KaiResource = Literal["cpu", "gpu", "memory"]
KAI_RESOURCES: tuple[KaiResource, ...] = ("cpu", "gpu", "memory")
# KAI's chart creates these PriorityClasses itself on install (deployments/kai-scheduler/
# templates/priorityclasses/*.yaml @ v0.13.0); values >= 100 are non-preemptible.  Declaring
# them again from Pulumi would fight Helm over ownership, so they are only referenced.
KAI_PRIORITY_CLASSES = {"train": 50, "build-preemptible": 75, "build": 100, "inference": 125}


# KAI's Queue keeps quota, limit and overQuotaWeight as float64 (kai-kuberay-skypilot.md §1.1);
# past 2^53 a float64 no longer holds every whole number, so quota sums and comparisons (here and
# in KAI) stop being exact.  No cluster has that many millicores or MB.
KAI_MAX_AMOUNT = 2**53


class KaiResourceConfig(ConfigModel):
    """Quota, limit and over-quota weight of one resource."""

    quota: float = Field(
        0, ge=UNLIMITED, le=KAI_MAX_AMOUNT, description="Guaranteed amount; -1 unlimited; default 0 (none)."
    )
    limit: float = Field(
        UNLIMITED,
        ge=UNLIMITED,
        le=KAI_MAX_AMOUNT,
        description="Hard cap; -1 (default) no cap; 0 allows nothing.",
    )
    over_quota_weight: float = Field(
        1, ge=0, le=KAI_MAX_AMOUNT, description="Share of surplus among queues of equal priority."
    )

    @field_validator("quota", "limit")
    @classmethod
    def _minus_one_or_more(cls, value: float) -> float:
        if value != UNLIMITED and value < 0:
            raise ValueError("expected -1 (unlimited) or a number >= 0")
        return value


def _resource() -> KaiResourceConfig:
    return KaiResourceConfig.model_validate({})


class KaiResourcesConfig(ConfigModel):
    """The three resources KAI accounts for."""

    cpu: KaiResourceConfig = Field(default_factory=_resource, description="CPU in millicores.")
    gpu: KaiResourceConfig = Field(default_factory=_resource, description="GPUs (0.5 = half a GPU).")
    memory: KaiResourceConfig = Field(default_factory=_resource, description="Memory in MB (10^6 bytes).")


class KaiTeamQueueConfig(ConfigModel):
    """A queue inside a department: a leaf, where workloads run."""

    name: DnsLabel = Field(description="Queue name (cluster-wide); workloads use it as kai.scheduler/queue.")
    display_name: NonEmptyStr | None = Field(None, description="Name shown in logs and UIs.")
    priority: Int32 | None = Field(
        None, description="Over-quota resources go to higher-priority queues first; omitted: KAI's 100."
    )
    resources: KaiResourcesConfig = Field(
        default_factory=lambda: KaiResourcesConfig.model_validate({}),
        description="Quotas by resource (see resources.* keys).",
    )


class KaiQueueConfig(KaiTeamQueueConfig):
    """A top-level queue (a department); a leaf itself when it has no children."""

    children: list[KaiTeamQueueConfig] = Field(
        default_factory=list, description="The department's team queues (leaves)."
    )


def walk(queues: list[KaiQueueConfig]) -> Iterator[tuple[str, KaiTeamQueueConfig, str | None]]:
    """Every queue, parents before their children, with its key path and its parent's name."""
    for index, queue in enumerate(queues):
        path = f"{KAI_QUEUES_KEY}[{index}]"
        yield path, queue, None
        for c_index, child in enumerate(queue.children):
            yield f"{path}.children[{c_index}]", child, queue.name


def leaf_queues(queues: list[KaiQueueConfig]) -> set[str]:
    """Names of the queues workloads may use: departments without children, and team queues."""
    return {
        queue.name
        for _, queue, _ in walk(queues)
        if not isinstance(queue, KaiQueueConfig) or not queue.children
    }


def check_kai_queues(queues: list[KaiQueueConfig]) -> Iterator[ConfigIssue]:
    seen: set[str] = set()
    for path, queue, _ in walk(queues):
        if queue.name in seen:
            yield ConfigIssue(
                f"{path}.name",
                "a queue name used once in the whole tree (Queues are cluster-scoped)",
                queue.name,
            )
        seen.add(queue.name)
        for resource in KAI_RESOURCES:
            yield from _check_limit(f"{path}.resources.{resource}", getattr(queue.resources, resource))
            yield from _check_children_sum(path, queue, resource)


def _check_limit(at: str, spec: KaiResourceConfig) -> Iterator[ConfigIssue]:
    if spec.limit == UNLIMITED:
        return
    if spec.quota == UNLIMITED:
        yield ConfigIssue(
            f"{at}.quota", f"a finite quota within limit ({_num(spec.limit)}), or limit -1", spec.quota
        )
    elif spec.quota > spec.limit:
        yield ConfigIssue(f"{at}.quota", f"at most limit ({_num(spec.limit)}), or limit -1", _num(spec.quota))


def _check_children_sum(path: str, queue: KaiTeamQueueConfig, resource: KaiResource) -> Iterator[ConfigIssue]:
    if not isinstance(queue, KaiQueueConfig) or not queue.children:
        return
    parent_quota = getattr(queue.resources, resource).quota
    if parent_quota == UNLIMITED:
        return
    quotas = [getattr(child.resources, resource).quota for child in queue.children]
    names = ", ".join(child.name for child in queue.children)
    if UNLIMITED in quotas:
        yield ConfigIssue(
            f"{path}.children",
            f"finite {resource} quotas under a parent whose quota is {_num(parent_quota)} (a child has -1)",
            names,
        )
        return
    total = sum((Decimal(str(q)) for q in quotas), Decimal(0))
    if total > Decimal(str(parent_quota)):
        yield ConfigIssue(
            f"{path}.resources.{resource}.quota",
            f"at least the children's {resource} quotas summed ({_num(float(total))}: {names}), or -1",
            _num(parent_quota),
        )


def _num(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value
