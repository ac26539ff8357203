"""KAI Scheduler queue rules: the hierarchy, its quota arithmetic, and what a gang can ever get.

KAI's own admission accepts almost any Queue (its webhook only requires ``spec.resources``) and
the scheduler fails silently later: a job whose queue is missing or not a leaf is dropped, a
request over a ``limit`` anywhere up the chain is rejected ``OverLimit`` on every cycle, and a
non-preemptible job never runs beyond ``quota`` (kai-kuberay-skypilot.md §1.5, §4;
``capacity_policy/capacity_policy.go``, ``max_allowed_check.go``, ``quota_check.go``; anchors.md
§4 failure mode 9: KAI-Scheduler#81, #621, #1783, #1881). Each rule below turns one of those
runtime dead ends into a preview-time finding. Units are KAI's: CPU millicores, memory MB
(10^6 bytes), GPU devices with fractions; -1 is unlimited (:mod:`..kai.quota`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from functools import partial
from typing import Any

from pulumi_policy import EnforcementLevel, Policy

from ...facts.demand import CannotTellError, PodSet, kai_pod_demand, kai_pod_sets, total
from ...facts.kai.pod_groups import explicit_pod_groups
from ...facts.kai.priority import preemptibility
from ...facts.kai.quota import KAI_RESOURCES, fits, fmt, is_unlimited, limit_allows
from ...facts.kai.tree import QueueNode, QueueTree
from ...facts.model import RayWorkload, StackModel
from ...facts.model.workloads import KAI_QUEUE_LABEL
from ...facts.open_world import World, world_schema
from ...facts.pod_templates import owned_templates
from ...primitives.values import Unknown
from ..kit.builders import stack_policy
from ..kit.references import unresolved
from ..kit.report import Reporter

_UNIT = {"cpu": "millicores of CPU", "memory": "MB of memory", "gpu": "GPUs"}


def _qty(resource: str, amount: Decimal) -> str:
    """``4 GPUs``, ``2000 millicores of CPU``, ``unlimited (-1) MB of memory``."""
    return f"{fmt(amount)} {_UNIT[resource]}"


def _amount(node: QueueNode, resource: str, field: str) -> Decimal | None:
    """quota/limit as a Decimal; raises CannotTellError when unknown; None when unset."""
    value = node.amount(resource, field)
    if isinstance(value, Unknown):
        raise CannotTellError(f"{resource}.{field} ({value.path})")
    return value


# --- kai-queue-has-resources --------------------------------------------------------------------
def check_queue_resources(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    """Every declared Queue has ``spec.resources`` (KAI's webhook: "resources must be specified")."""
    for queue in model.kai_queues():
        if isinstance(queue.resources, Unknown):
            reporter.cannot_check(queue, "spec.resources")
        elif queue.resources is None:
            reporter.violation(
                queue,
                "has no spec.resources, which KAI's Queue webhook rejects ('resources must be specified')",
                "add spec.resources with quota, limit and overQuotaWeight for cpu, gpu and memory "
                "(-1 = unlimited)",
            )


# --- kai-queue-parent-exists --------------------------------------------------------------------
def check_queue_parents(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    """``parentQueue`` names an existing queue and the chain has no cycle: the scheduler drops
    jobs whose queue's parent is missing (``input_jobs.go``) and a cycle has no root.  Open world
    (``open_world``): a parent listed in ``externalObjects`` exists; a queue whose only ancestor
    when the stack declares no other Queue, the parent is "not in this stack" (a tenants stack
    commonly adds leaves under a department queue the cluster stack owns)."""
    world = World.from_config(config)
    tree = QueueTree(model)
    for node in tree.declared:
        assert node.queue is not None
        if isinstance(node.parent, Unknown):
            reporter.cannot_check(node.queue, "spec.parentQueue")
            continue
        _, stop = tree.ancestors(node.name)
        if stop == "cycle":
            reporter.violation(
                node.queue,
                "is part of a parentQueue cycle, so no queue in it has a root and KAI never schedules "
                "their jobs",
                "break the cycle: make one queue of it top-level (remove its spec.parentQueue)",
            )
        elif stop is not None and stop.startswith("missing:"):
            missing = stop.split(":", 1)[1]
            if not tree.names_known:
                reporter.cannot_check(node.queue, f"whether parent queue '{missing}' exists")
            elif node.parent == missing:
                names = model.memo("rules.kai.queue_names", lambda: [n.name for n in tree.declared])
                unresolved(
                    world,
                    reporter,
                    node.queue,
                    ("Queue", missing, None),
                    declared=[n for n in names if n != node.name],  # other than the queue itself
                    problem=f"has parentQueue '{missing}', which no declared Queue has, so KAI drops every job "
                    "of this queue",
                    fix=f"declare a scheduling.run.ai/v2 Queue named '{missing}' or correct spec.parentQueue",
                )


# --- kai-children-quota-within-parent -----------------------------------------------------------
def check_children_quota(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    """Σ children's quota ≤ parent's quota per resource (-1 = unlimited).

    KAI divides a parent's share among its children (``resource_division.go``) and never checks
    this sum, so over-promised children silently do not get their guaranteed quota
    (KAI-Scheduler#81). An unlimited child under a limited parent over-promises by definition.
    """
    tree = QueueTree(model)
    if not tree.children_known():
        for node in tree.declared:
            if isinstance(node.parent, Unknown) and node.queue is not None:
                reporter.cannot_check(node.queue, "spec.parentQueue (children sums)")
    for parent in tree.nodes.values():
        children = tree.children(parent.name)
        if not children:
            continue
        for resource in KAI_RESOURCES:
            try:
                cap = _amount(parent, resource, "quota") or Decimal(0)
                quotas = [(c, _amount(c, resource, "quota") or Decimal(0)) for c in children]
            except CannotTellError as why:
                reporter.cannot_check(parent.subject, f"children quotas: {why.what}")
                continue
            if is_unlimited(cap):
                continue
            unlimited = [c.name for c, q in quotas if is_unlimited(q)]
            summed = sum((q for _, q in quotas if not is_unlimited(q)), Decimal(0))
            if unlimited:
                problem = (
                    f"has {resource} quota {fmt(cap)} but child queue(s) {', '.join(unlimited)} have "
                    "unlimited (-1) quota"
                )
            elif summed > cap:
                problem = (
                    f"guarantees {_qty(resource, cap)} but its children's {resource} quotas sum to "
                    f"{fmt(summed)} ({', '.join(f'{c.name}={fmt(q)}' for c, q in quotas)})"
                )
            else:
                continue
            reporter.violation(
                parent.subject,
                ("" if parent.queue is not None else f"{parent.describe()} ")
                + f"{problem}; KAI splits the parent's share, so the children never all get their quota",
                f"lower the children's {resource} quotas to sum to at most {fmt(cap)}, or raise the "
                f"parent's quota (-1 for unlimited)",
            )


# --- kai-quota-within-limit ---------------------------------------------------------------------
def check_quota_within_limit(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    """``quota`` ≤ ``limit`` unless the limit is -1; an unset limit counts as 0 (KAI-Scheduler#1783:
    KAI never validates this, and a quota above the limit can never be used)."""
    for queue in model.kai_queues():
        if not isinstance(queue.resources, dict):
            continue
        node = QueueNode(queue.name, queue.parent_queue, queue.resources, queue, queue=queue)
        for resource in sorted(queue.resources):
            try:
                quota = _amount(node, resource, "quota") or Decimal(0)
                limit = _amount(node, resource, "limit")
            except CannotTellError as why:
                reporter.cannot_check(queue, why.what)
                continue
            cap = Decimal(0) if limit is None else limit
            if quota == 0 or fits(quota, cap):
                continue
            shown = "unset (KAI reads it as 0: nothing allowed)" if limit is None else fmt(cap)
            if is_unlimited(quota):
                fix = f"set spec.resources.{resource}.limit to -1 too, or give a finite quota <= the limit"
            else:
                fix = f"set spec.resources.{resource}.limit to -1 (no limit) or to at least {fmt(quota)}"
            reporter.violation(
                queue,
                f"has {resource} quota {fmt(quota)} above its limit {shown}, so the guaranteed quota "
                "can never be used",
                fix,
            )


# --- workloads on KAI queues --------------------------------------------------------------------
def _kai_workloads(model: StackModel, reporter: Reporter) -> list[tuple[RayWorkload, str]]:
    """Ray workloads labelled for a KAI queue, with the label value (unknown ones recorded)."""
    out: list[tuple[RayWorkload, str]] = []
    for workload in model.ray_workloads():
        label = workload.obj.labels.get(KAI_QUEUE_LABEL)
        if not workload.obj.labels_known:
            reporter.cannot_check(workload, "metadata.labels")
        elif isinstance(label, Unknown):
            reporter.cannot_check(workload, f"label {KAI_QUEUE_LABEL}")
        elif isinstance(label, str):
            out.append((workload, label))
    return out


def _queue_objects(model: StackModel) -> list[tuple[Any, Any, str]]:
    """(object, queue, what names it) for every object (any kind) KAI puts in a named queue: its
    own ``kai.scheduler/queue`` label, else a pod template's (KAI v0.17.0
    ``pkg/podgrouper/podgrouper/plugins/defaultgrouper/default_grouper.go`` ``CalcPodGroupQueue``
    reads the top owner's label, then the pod's), and an explicit PodGroup's ``spec.queue``."""
    out: list[tuple[Any, Any, str]] = [
        (o, o.labels[KAI_QUEUE_LABEL], f"is labelled {KAI_QUEUE_LABEL}")
        for o in model.objects
        if KAI_QUEUE_LABEL in o.labels
    ]
    seen = {id(o) for o, _, _ in out}
    for owned in owned_templates(model):
        obj = owned.owner.obj if isinstance(owned.owner, RayWorkload) else owned.owner
        label = owned.template.labels.get(KAI_QUEUE_LABEL)
        if label is not None and id(obj) not in seen:
            seen.add(id(obj))
            out.append((obj, label, f"has pod template label {KAI_QUEUE_LABEL}"))
    out.extend(
        (g.obj, g.queue, "names spec.queue") for g in explicit_pod_groups(model) if g.queue is not None
    )
    return out


# --- kai-workload-leaf-queue --------------------------------------------------------------------
def check_workload_queue(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    """A ``kai.scheduler/queue`` label names an existing **leaf** queue: KAI drops jobs on a
    missing or non-leaf queue without an error on the workload (``input_jobs.go``,
    KAI-Scheduler#621)."""
    world = World.from_config(config)
    tree = QueueTree(model)
    for obj, label, names in _queue_objects(model):
        if isinstance(label, Unknown):
            reporter.cannot_check(obj, f"its KAI queue ({names.split(' ', 1)[1]})")
            continue
        node = tree.get(label)
        if node is None:
            if not tree.names_known:
                reporter.cannot_check(obj, f"whether KAI queue '{label}' exists")
                continue
            leaves = tree.leaves()
            unresolved(
                world,
                reporter,
                obj,
                ("Queue", label, None),
                declared=model.memo("rules.kai.queue_names", lambda: [n.name for n in tree.declared]),
                problem=f"{names}={label}, but no KAI Queue '{label}' exists, so KAI never schedules it",
                fix=f"declare a leaf scheduling.run.ai/v2 Queue '{label}' or use an existing leaf queue"
                + (f" ({', '.join(leaves)})" if leaves else ""),
            )
        elif not tree.children_known():
            reporter.cannot_check(obj, f"whether KAI queue '{label}' is a leaf")
        elif not tree.is_leaf(label):
            kids = ", ".join(sorted(c.name for c in tree.children(label)))
            reporter.violation(
                obj,
                f"{names}={label}, but '{label}' is a parent queue (children: {kids}) "
                "and KAI only schedules jobs of leaf queues",
                f"label it with one of the leaf queues under '{label}' ({kids})",
            )


def queue_chain(tree: QueueTree, leaf: str) -> list[QueueNode] | None:
    """The leaf queue and its ancestors; None when the leaf is missing, not a leaf, or its
    ancestry is broken (other rules report those)."""
    node = tree.get(leaf)
    if node is None or not tree.is_leaf(leaf):
        return None
    ancestors, stop = tree.ancestors(leaf)
    if stop is not None:  # missing parent / cycle / unknown: reported by the parent rule
        return None
    return [node, *ancestors]


def _gang_demand(subject: Any, pod_sets: Sequence[PodSet], reporter: Reporter) -> dict[str, Decimal] | None:
    """The gang's demand per KAI resource; None (recorded as "cannot check") when it depends on
    something unknown."""
    try:
        return {r: total(pod_sets, partial(kai_pod_demand, resource=r)) for r in KAI_RESOURCES}
    except CannotTellError as why:
        reporter.cannot_check(subject, f"gang size: {why.what}")
        return None


# --- kai-gang-within-limits ---------------------------------------------------------------------
def check_gang_limits(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    """The gang (KAI's minMember pods) fits ``limit`` on its leaf and every ancestor, per resource.

    KAI's ``resultsOverLimit`` walks leaf → root and rejects the whole PodGroup ``OverLimit`` when
    allocated + requested exceeds any queue's MaxAllowed; an unset/0 limit is MaxAllowed 0, so any
    request of that resource is rejected (``isOverLimit``), forever.
    """
    tree = QueueTree(model)
    for workload, label in _kai_workloads(model, reporter):
        try:
            pod_sets = kai_pod_sets(workload)
        except CannotTellError as why:
            if queue_chain(tree, label) is not None:
                reporter.cannot_check(workload, f"gang size: {why.what}")
            continue
        gang_vs_limit_chain(tree, workload, label, pod_sets, reporter)


def gang_vs_limit_chain(
    tree: QueueTree, subject: Any, label: str, pod_sets: Sequence[PodSet], reporter: Reporter
) -> None:
    """Judge one gang (its KAI minMember pod sets) against ``limit`` on leaf ``label`` and every
    ancestor; any workload kind (``workload_kinds``) uses it."""
    chain = queue_chain(tree, label)
    gang = None if chain is None else _gang_demand(subject, pod_sets, reporter)
    if chain is None or gang is None:
        return
    for node in chain:
        for resource in KAI_RESOURCES:
            need = gang[resource]
            try:
                limit = _amount(node, resource, "limit")
            except CannotTellError as why:
                reporter.cannot_check(subject, f"queue '{node.name}' {why.what}")
                continue
            if limit_allows(limit, need):
                continue
            if limit is None or limit == 0:
                problem = (
                    f"needs {_qty(resource, need)}, but queue '{node.name}' has "
                    f"{resource} limit {'unset' if limit is None else '0'}, which KAI reads as "
                    "'nothing allowed': the gang is rejected OverLimit forever"
                )
            else:
                problem = (
                    f"needs {_qty(resource, need)} as one gang, but queue "
                    f"'{node.name}' caps {resource} at {fmt(limit)}: KAI rejects it OverLimit forever"
                )
            reporter.violation(
                subject,
                problem,
                f"set {node.describe()} spec.resources.{resource}.limit to -1 or at least "
                f"{fmt(need)}, or shrink the gang",
            )


# --- kai-nonpreemptible-within-quota ------------------------------------------------------------
def check_nonpreemptible_quota(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    """A non-preemptible workload (priority ≥ 100) fits ``quota`` on its leaf and every ancestor:
    KAI runs such jobs only within quota (``quota_check.go``; a quota of -1 skips the check), so a
    build/inference gang bigger than its queue's quota never starts."""
    tree = QueueTree(model)
    for workload, label in _kai_workloads(model, reporter):
        chain = queue_chain(tree, label)
        if chain is None:
            continue
        verdict = preemptibility(workload, model)
        if verdict.non_preemptible is None:
            reporter.cannot_check(workload, verdict.why)
            continue
        if not verdict.non_preemptible:
            continue
        try:
            pod_sets = kai_pod_sets(workload)
        except CannotTellError as why:
            reporter.cannot_check(workload, f"gang size: {why.what}")
            continue
        nonpreemptible_vs_quota(chain, workload, verdict.why, pod_sets, reporter)


def nonpreemptible_vs_quota(
    chain: Sequence[QueueNode], subject: Any, why: str, pod_sets: Sequence[PodSet], reporter: Reporter
) -> None:
    """Judge one non-preemptible gang against ``quota`` on its leaf and every ancestor (``chain``,
    from :func:`queue_chain`); any workload kind (``workload_kinds``) uses it."""
    gang = _gang_demand(subject, pod_sets, reporter)
    if gang is None:
        return
    for node in chain:
        for resource in KAI_RESOURCES:
            need = gang[resource]
            if need <= 0:
                continue
            try:
                quota = _amount(node, resource, "quota") or Decimal(0)
            except CannotTellError as error:
                reporter.cannot_check(subject, f"queue '{node.name}' {error.what}")
                continue
            if fits(need, quota):
                continue
            reporter.violation(
                subject,
                f"is non-preemptible ({why}) and needs {_qty(resource, need)}, but queue "
                f"'{node.name}' guarantees only {fmt(quota)}; KAI runs "
                "non-preemptible jobs only within quota, so it never starts",
                f"raise {node.describe()} spec.resources.{resource}.quota to at least {fmt(need)} "
                "(-1 for unlimited), or give the workload a preemptible priority class (< 100, "
                "e.g. train)",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "kai-queue-has-resources",
        "Every KAI Queue sets spec.resources (the KAI webhook rejects queues without it).",
        check_queue_resources,
    ),
    stack_policy(
        "kai-queue-parent-exists",
        "A KAI Queue's parentQueue exists and the hierarchy has no cycles (KAI drops jobs otherwise).",
        check_queue_parents,
        config_schema=world_schema(),
    ),
    stack_policy(
        "kai-children-quota-within-parent",
        "Per resource, the quotas of a KAI queue's children sum to at most the parent's quota "
        "(-1 = unlimited; KAI never checks this and silently under-delivers).",
        check_children_quota,
        # A risk, not an impossibility: every queue still runs, some guarantees are not met
        # (issue 18 item 7); policies/config.prod.json raises it.
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
    stack_policy(
        "kai-quota-within-limit",
        "A KAI queue's quota does not exceed its limit (-1 = no limit; unset/0 = nothing allowed).",
        check_quota_within_limit,
    ),
    stack_policy(
        "kai-workload-leaf-queue",
        "A kai.scheduler/queue label names an existing leaf KAI queue (KAI drops jobs otherwise).",
        check_workload_queue,
        config_schema=world_schema(),
    ),
    stack_policy(
        "kai-gang-within-limits",
        "A Ray gang (KAI's minMember pods) fits the limit of its leaf queue and of every ancestor; an "
        "unset/0 limit blocks the resource entirely.",
        check_gang_limits,
    ),
    stack_policy(
        "kai-nonpreemptible-within-quota",
        "A non-preemptible workload (KAI priority >= 100: build, inference) fits the quota of its leaf "
        "queue and every ancestor, since KAI never runs it over quota.",
        check_nonpreemptible_quota,
    ),
]
