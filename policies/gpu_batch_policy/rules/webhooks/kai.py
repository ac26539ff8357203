"""KAI Scheduler's PodGroup webhook: the subgroup graph it refuses, before deploy.

Source: NVIDIA/KAI-Scheduler ``pkg/apis/scheduling/v2alpha2/podgroup_webhook.go``
``ValidateCreate`` -> ``validateSubGroups``: subgroup names are unique ("duplicate subgroup name
X"), every ``parent`` names a subgroup of the same PodGroup (``validateParent``: "parent X of Y
was not found") and the parent links have no cycle (``detectCycle``: "cycle detected in
subgroups").  The KAI operator registers it as the ``kai-podgroup-validation-v2alpha2``
ValidatingWebhookConfiguration (the v0.17.0 chart's ``templates/rbac/operator.yaml`` lets the
operator manage it).  The mirror available here stops before the v0.17.0 tag; these three checks
are unchanged from their introduction (#515, #518) through the latest source seen, which adds
more (minMember on leaves) that this rule does not assume.

The Queue webhook (``pkg/apis/scheduling/v2/queue_webhook.go``: "resources must be specified")
is ``kai-queue-has-resources`` in :mod:`..kai`.  Without a KAI install in view the findings are
advisory "not in this stack", unless ``closedWorld``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.installs import kai_installed
from ...facts.model import StackModel
from ...facts.open_world import World, world_schema
from ...primitives.tokens import KAI_GROUP
from ...primitives.values import Unknown, as_str, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter

Problem = tuple[str, str]


def subgroup_problems(subgroups: list[Any]) -> list[Problem]:
    """``validateSubGroups`` on a known ``spec.subGroups`` list (duplicates first, as upstream)."""
    parents: dict[str, str | None] = {}
    for index, item in enumerate(subgroups):
        name = as_str(dig(item, "name"))
        parent = as_str(dig(item, "parent"))
        if not isinstance(name, str):
            continue  # a missing name is the CRD schema's finding
        if name in parents:
            return [
                (
                    f"spec.subGroups[{index}] repeats subgroup name '{name}'",
                    "give every subgroup its own name",
                )
            ]
        parents[name] = parent if isinstance(parent, str) else None
    for name, parent in parents.items():
        if parent is not None and parent not in parents:
            return [
                (
                    f"subgroup '{name}' has parent '{parent}', which is not a subgroup of this PodGroup",
                    f"declare subgroup '{parent}' or correct the parent",
                )
            ]
    for start in parents:
        seen: set[str] = set()
        node: str | None = start
        while node is not None:
            if node in seen:
                return [("has a cycle in its subgroups' parent links", "make the subgroups a tree")]
            seen.add(node)
            node = parents.get(node)
    return []


def check_kai_podgroup_webhook(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    world = World.from_config(config)
    installed = world.closed or kai_installed(model, world)
    for obj in model.kube_objects(KAI_GROUP, "PodGroup"):
        subgroups = dig(obj.spec, "subGroups")
        if isinstance(subgroups, Unknown):
            reporter.cannot_check(obj, "spec.subGroups")
            continue
        if not isinstance(subgroups, list):
            continue
        if any(isinstance(dig(s, key), Unknown) for s in subgroups for key in ("name", "parent")):
            reporter.cannot_check(obj, "spec.subGroups names")
            continue
        for found, fix in subgroup_problems(subgroups):
            problem = f"{found}; KAI's PodGroup webhook refuses it"
            if installed:
                reporter.violation(obj, problem, fix)
            else:
                reporter.not_in_stack(
                    obj,
                    'KAI\'s webhook (no KAI install here; list {"kind": "Release", "name": "kai-scheduler"} under '
                    f"externalObjects if another stack installs it) would refuse it: {problem}",
                )


POLICIES: list[Policy] = [
    stack_policy(
        "kai-podgroup-webhook",
        "A KAI PodGroup's subgroups have unique names, parents inside the PodGroup and no parent cycle "
        "(KAI's PodGroup webhook).",
        check_kai_podgroup_webhook,
        config_schema=world_schema(),
    ),
]
