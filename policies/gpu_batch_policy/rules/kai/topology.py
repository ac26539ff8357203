"""``kai-topology-annotations`` (mandatory): a KAI workload's topology annotations name a KAI
Topology the stack declares and levels it has, in an order KAI accepts; otherwise KAI v0.17.0 never
places it (:mod:`..kai.topology`, each refusal cited there).  Judged on objects queued to KAI
(label ``kai.scheduler/queue``); names and levels only when the stack declares KAI Topologies."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.kai.topology import annotated, kai_topologies, request_problems
from ...facts.model import StackModel
from ...primitives.values import Unknown
from ..kit.builders import stack_policy
from ..kit.report import Reporter

KAI_QUEUE_LABEL = "kai.scheduler/queue"


def check_kai_topology(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    topologies = kai_topologies(model) or None
    for obj in model.objects:
        if KAI_QUEUE_LABEL not in obj.labels:
            continue
        for where, notes, ray_group in annotated(obj):
            if isinstance(notes, Unknown):
                reporter.cannot_check(obj, f"{where} KAI topology annotations")
                continue
            for problem in request_problems(notes, topologies, ray_group=ray_group):
                reporter.violation(
                    obj,
                    f"{where}: KAI never places this pod group: {problem}",
                    "name a kai.scheduler Topology the stack declares and one of its levels (nodeLabel or "
                    "alias), the preferred level at or below the required one",
                )


POLICIES: list[Policy] = [
    stack_policy(
        "kai-topology-annotations",
        "KAI topology annotations name a declared KAI Topology and its levels, in an order KAI accepts.",
        check_kai_topology,
    ),
]
