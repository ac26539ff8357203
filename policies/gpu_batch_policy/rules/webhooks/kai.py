"""KAI Scheduler v0.17.0's admission webhooks for the objects a program writes, before deploy.

The stack installs KAI v0.17.0 (``charts.lock.yaml``), so that is the version judged.  The KAI
operator registers these webhooks (``pkg/operator/operands/known_types/validatingwebhookconfiguration.go``).
Sources, kai-scheduler/KAI-Scheduler v0.17.0:

* ``pkg/apis/scheduling/v2alpha2/podgroup_webhook.go`` ``ValidateCreate`` (``kai-podgroup-webhook``):
  ``validatePodGroupSpec`` -- ``minMember`` and ``minSubGroup`` are mutually exclusive; a PodGroup
  ``minSubGroup`` is >= 1 -- and ``validateSubGroups``: unique names, every ``parent`` exists
  (``validateParent``), no cycle (``detectCycle``), then per subgroup ``validateSubGroupMinFields``:
  not both ``minMember`` and ``minSubGroup``; a leaf has ``minMember`` and no ``minSubGroup``; a
  mid-level subgroup has no ``minMember``.  A structural error (exclusivity, graph) is the only
  one reported, as upstream returns it.  ``handleMinDefinitionErrors`` turns "minSubGroup exceeds
  the number of direct children" into a warning on create, so it is not a refusal here.
* ``pkg/admission/webhook/topologyhooks/topology_validator.go`` ``validateAliases``
  (``kai-topology-webhook``): level aliases are unique and none equals a level's ``nodeLabel``
  (``nodeLabel`` uniqueness and order are the CRD's CEL rules, judged by ``custom_resources``).
* ``pkg/admission/webhook/queuehooks/queue_validator.go``: "resources must be specified" is
  ``kai-queue-has-resources`` in :mod:`..kai`; the parent/child quota comparisons need the queues
  stored on the cluster (``kubeClient.Get``) and only warn.
* BindRequest has no webhook at v0.17.0 (only its CRD schema); the scheduler writes it, not a program.

Without a KAI install in view the findings are advisory "not in this stack", unless ``closedWorld``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.demand import CannotTellError
from ...facts.installs import kai_installed
from ...facts.model import StackModel
from ...facts.model.base import KubeObject
from ...facts.open_world import World, world_schema
from ...primitives.tokens import KAI_GROUP
from ..kit.builders import stack_policy
from ..kit.report import Reporter
from .port import (
    CANNOT,
    CONSTRUCTS,
    NOT_A_CHECK,
    REGISTERS,
    UPDATE_ONLY,
    Problem,
    Upstream,
    get,
    items,
    number,
    text,
)

UPSTREAM = Upstream(
    project="KAI Scheduler",
    repo="kai-scheduler/KAI-Scheduler",
    ref="v0.17.0",
    version="v0.17.0",
    why="the version the stack installs",
    files=(
        "pkg/apis/scheduling/v2alpha2/podgroup_webhook.go",
        "pkg/admission/webhook/topologyhooks/topology_validator.go",
        "pkg/admission/webhook/queuehooks/queue_validator.go",
    ),
)
TOPOLOGY_GROUP = "kai.scheduler"


class _StructuralError(Exception):
    """A structural error: upstream returns it alone."""


def _subgroup_min_fields(name: str, group: Any, children: list[str]) -> list[Problem]:
    """``validateSubGroupMinFields`` on create (every min-definition error is hard but the child count)."""
    min_member = get(group, "minMember")
    min_subgroup = get(group, "minSubGroup")
    if min_member is not None and min_subgroup is not None:
        raise _StructuralError(
            f"subgroup '{name}' sets both minMember and minSubGroup, which are mutually exclusive"
        )
    problems: list[Problem] = []
    if not children:
        if min_subgroup is not None:
            problems.append(
                (
                    f"leaf subgroup '{name}' sets minSubGroup (it has no child subgroups)",
                    "use minMember on a leaf",
                )
            )
        if min_member is None:
            problems.append((f"leaf subgroup '{name}' has no minMember, which is required", "set minMember"))
    elif min_member is not None:
        problems.append(
            (
                f"mid-level subgroup '{name}' sets minMember (it has child subgroups)",
                "use minSubGroup instead",
            )
        )
    return problems


def subgroup_problems(subgroups: list[Any]) -> list[Problem]:
    """``validateSubGroups`` on a known ``spec.subGroups`` list (graph errors first, as upstream)."""
    by_name: dict[str, Any] = {}
    parents: dict[str, str | None] = {}
    for index, item in enumerate(subgroups):
        name = text(item, "name") if isinstance(item, dict) else None
        if not name:
            continue  # not an object with a name: the CRD schema's finding
        if name in by_name:
            raise _StructuralError(f"spec.subGroups[{index}] repeats subgroup name '{name}'")
        by_name[name] = item
        parents[name] = text(item, "parent")
    for name, parent in parents.items():
        if parent is not None and parent not in parents:
            raise _StructuralError(
                f"subgroup '{name}' has parent '{parent}', which is not a subgroup of this PodGroup"
            )
    children: dict[str, list[str]] = {}
    for name, parent in parents.items():
        if parent is not None:
            children.setdefault(parent, []).append(name)
    for start in parents:
        seen: set[str] = set()
        node: str | None = start
        while node is not None:
            if node in seen:
                raise _StructuralError("has a cycle in its subgroups' parent links")
            seen.add(node)
            node = parents.get(node)
    problems: list[Problem] = []
    for name in sorted(by_name):
        problems += _subgroup_min_fields(name, by_name[name], children.get(name, []))
    return problems


def podgroup_problems(obj: KubeObject) -> list[Problem]:
    """``ValidateCreate`` of a v2alpha2 PodGroup."""
    spec = get(obj.props, "spec")
    if obj.version != "v2alpha2" or not isinstance(spec, dict):
        return []
    fix = "make the subgroups a tree whose leaves set minMember and whose parents set minSubGroup"
    try:
        min_subgroup = number(spec, "minSubGroup")
        if get(spec, "minMember") is not None and get(spec, "minSubGroup") is not None:
            raise _StructuralError("sets both minMember and minSubGroup, which are mutually exclusive")
        problems = subgroup_problems(items(spec, "subGroups"))
    except _StructuralError as why:
        return [(str(why), fix)]
    if min_subgroup is not None and min_subgroup < 1:
        problems.append((f"spec.minSubGroup {min_subgroup} must be at least 1", "set minSubGroup >= 1"))
    return problems


def topology_problems(obj: KubeObject) -> list[Problem]:
    """``validateAliases``."""
    levels = items(obj.props, "spec", "levels")
    labels = {text(level, "nodeLabel") for level in levels}
    seen: set[str] = set()
    duplicates: set[str] = set()
    collisions: set[str] = set()
    for level in levels:
        alias = text(level, "alias") or ""
        if not alias:
            continue
        if alias in seen:
            duplicates.add(alias)
        seen.add(alias)
        if alias in labels:
            collisions.add(alias)
    problems: list[Problem] = []
    if duplicates:
        problems.append(
            (f"topology level aliases are not unique: {sorted(duplicates)}", "give each level its own alias")
        )
    if collisions:
        problems.append(
            (
                f"topology level aliases equal a nodeLabel: {sorted(collisions)}",
                "pick aliases that are not node labels",
            )
        )
    return problems


def _judge(
    model: StackModel,
    reporter: Reporter,
    config: Mapping[str, Any],
    *,
    objects: list[KubeObject],
    judge: Callable[[KubeObject], list[Problem]],
    where: str,
) -> None:
    world = World.from_config(config)
    installed = world.closed or kai_installed(model, world)
    for obj in objects:
        try:
            problems = judge(obj)
        except CannotTellError as why:
            reporter.cannot_check(obj, f"KAI validation needs {why.what}")
            continue
        for found, fix in problems:
            problem = f"{UPSTREAM.refuses(where)}: {found}"
            if installed:
                reporter.violation(obj, problem, fix)
            else:
                reporter.not_in_stack(
                    obj,
                    'KAI\'s webhook (no KAI install here; list {"kind": "Release", "name": "kai-scheduler"} under '
                    f"externalObjects if another stack installs it) would refuse it: {problem}",
                )


def check_kai_podgroup_webhook(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    objects = model.kube_objects(KAI_GROUP, "PodGroup")
    _judge(
        model,
        reporter,
        config,
        objects=objects,
        judge=podgroup_problems,
        where="podgroup_webhook.go ValidateCreate",
    )


def check_kai_topology_webhook(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    objects = model.kube_objects(TOPOLOGY_GROUP, "Topology")
    _judge(
        model,
        reporter,
        config,
        objects=objects,
        judge=topology_problems,
        where="topology_validator.go validateAliases",
    )


QUEUE_QUOTA = CANNOT + "compares with queues stored on the cluster (kubeClient.Get), and only warns"
COVERAGE: Mapping[str, str] = {
    # podgroup_webhook.go
    "SetupWebhookWithManager": REGISTERS,
    "ValidateCreate": "podgroup_problems",
    "ValidateUpdate": UPDATE_ONLY,
    "handleMinDefinitionErrors": "podgroup_problems",
    "ValidateDelete": NOT_A_CHECK
    + "accepts every delete (PodGroup, Topology; Queue: see validateChildrenQuotaSum)",
    "validatePodGroupSpec": "podgroup_problems",
    "validateSubGroups": "subgroup_problems",
    "validateSubGroupMinFields": "_subgroup_min_fields",
    "buildChildrenMap": "subgroup_problems",
    "countRootSubGroups": NOT_A_CHECK + "feeds the child-count check, a warning on create",
    "validateParent": "subgroup_problems",
    "detectCycle": "subgroup_problems",
    "dfsCycleCheck": "subgroup_problems",
    # topology_validator.go
    "NewTopologyValidator": CONSTRUCTS,
    "validateAliases": "topology_problems",
    # queue_validator.go (its ValidateCreate "resources must be specified" is kai-queue-has-resources)
    "NewQueueValidator": CONSTRUCTS,
    "validateParentChildQuota": QUEUE_QUOTA,
    "validateChildrenQuotaSum": QUEUE_QUOTA,
}
"""Every function of the three webhook files at v0.17.0 (same-named methods are listed once: each
file's ``ValidateCreate`` is ported by its rule; the Queue's by ``kai-queue-has-resources``)."""


POLICIES: list[Policy] = [
    stack_policy(
        "kai-podgroup-webhook",
        "A KAI PodGroup passes KAI v0.17.0's PodGroup webhook: minMember xor minSubGroup, unique subgroup "
        "names, parents inside the PodGroup, no cycle, minMember on leaves only.",
        check_kai_podgroup_webhook,
        config_schema=world_schema(),
    ),
    stack_policy(
        "kai-topology-webhook",
        "A KAI Topology passes KAI v0.17.0's Topology webhook: level aliases unique and none equal to a nodeLabel.",
        check_kai_topology_webhook,
        config_schema=world_schema(),
    ),
]
