"""kai-podgroup-webhook and kai-topology-webhook, written from KAI Scheduler v0.17.0's test tables.

Sources, kai-scheduler/KAI-Scheduler v0.17.0: ``pkg/apis/scheduling/v2alpha2/podgroup_webhook_test.go``
``TestValidateSubGroups``, ``TestValidatePodGroupSpec``, ``TestCreateRejectsWhatUpdateWarns``;
``pkg/admission/webhook/topologyhooks/topology_validator_test.go`` ``TestTopologyValidator``.
Each case names the table row it follows.
"""

from __future__ import annotations

from typing import Any

import pytest
from gpu_batch_policy.rules.webhooks.kai import POLICIES

from tests.policies.workload_stack import UNKNOWN, Registration, k8s, kai_queue, run

RULES = {p.name: p for p in POLICIES}
PODGROUP, TOPOLOGY = RULES["kai-podgroup-webhook"], RULES["kai-topology-webhook"]
QUEUE = kai_queue("team-a")  # KAI is in the stack


def sg(
    name: str, parent: str | None = None, member: int | None = None, sub: int | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if parent is not None:
        out["parent"] = parent
    if member is not None:
        out["minMember"] = member
    if sub is not None:
        out["minSubGroup"] = sub
    return out


def pod_group(*subgroups: dict[str, Any], **spec: Any) -> Registration:
    body = {"queue": "team-a", "subGroups": list(subgroups), **spec}
    return k8s("scheduling.run.ai/v2alpha2", "PodGroup", "pg", namespace="team", spec=body)


def violations(reg: Registration) -> list[str]:
    return run(PODGROUP, [QUEUE, reg]).violations


VALID = {
    "Valid DAG single root": [sg("a", sub=1), sg("b", "a", sub=1), sg("c", "b", member=1)],
    "Valid DAG multiple roots": [
        sg("a", sub=1),
        sg("b", sub=1),
        sg("c", "a", member=1),
        sg("d", "b", member=1),
    ],
    "Empty list": [],
    "parent subgroup may omit minMember when it has subgroup children": [sg("p"), sg("l", "p", member=1)],
    "Valid: mid-level SubGroup uses minSubGroup": [
        sg("parent", sub=2),
        sg("child-1", "parent", member=4),
        sg("child-2", "parent", member=4),
    ],
    # a warning on create, not a refusal (handleMinDefinitionErrors)
    "Invalid: SubGroup minSubGroup exceeds child count": [
        sg("parent", sub=3),
        sg("child-1", "parent", member=4),
        sg("child-2", "parent", member=4),
    ],
}


@pytest.mark.parametrize("case", sorted(VALID))
def test_valid_subgroups(case: str) -> None:
    assert violations(pod_group(*VALID[case])) == []


REFUSED = {
    "Missing parent": ([sg("a", member=1), sg("b", "x", member=1)], "parent 'x', which is not a subgroup"),
    "nil minMember on leaf subgroup": ([sg("a")], "leaf subgroup 'a' has no minMember"),
    "leaf child still requires minMember when parent omits it": (
        [sg("p"), sg("l", "p")],
        "'l' has no minMember",
    ),
    "Duplicate subgroup names": ([sg("a", member=1), sg("a", member=1)], "repeats subgroup name 'a'"),
    "Cycle in graph (a -> b -> c -> a) - duplicate subgroup name": (
        [sg("a", member=1), sg("b", "a", member=1), sg("c", "b", member=1), sg("a", "c", member=1)],
        "repeats subgroup name 'a'",
    ),
    "Self-parent subgroup (cycle of length 1)": ([sg("a", "a", member=1)], "cycle"),
    "Cycle in graph (a -> b -> c -> a)": (
        [sg("a", "c", member=1), sg("b", "a", member=1), sg("c", "b", member=1)],
        "cycle",
    ),
    "Multiple disjoint cycles": (
        [sg("a", "b", member=1), sg("b", "a", member=1), sg("c", "d", member=1), sg("d", "c", member=1)],
        "cycle",
    ),
    "Invalid: leaf SubGroup uses minSubGroup": ([sg("A", sub=1)], "leaf subgroup 'A' sets minSubGroup"),
    "Invalid: mid-level SubGroup uses minMember": (
        [sg("parent", member=2), sg("child-1", "parent", member=4), sg("child-2", "parent", member=4)],
        "mid-level subgroup 'parent' sets minMember",
    ),
    "Invalid: SubGroup has both minMember and minSubGroup": (
        [sg("parent", member=2, sub=1), sg("child-1", "parent", member=4)],
        "'parent' sets both minMember and minSubGroup",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_subgroups(case: str) -> None:
    subgroups, part = REFUSED[case]
    found = violations(pod_group(*subgroups))
    assert any(part in v and "KAI Scheduler v0.17.0" in v for v in found), found


def test_structural_error_is_reported_alone() -> None:
    """Upstream returns a structural error without the min-field errors."""
    found = violations(pod_group(sg("a"), sg("a")))
    assert len(found) == 1 and "repeats" in found[0]


def test_pod_group_spec() -> None:
    """``TestValidatePodGroupSpec``: "Valid: minMember only, no subgroups", "Invalid: both minMember
    and minSubGroup set on PodGroup", "Invalid: minSubGroup exceeds root subgroup count" (a warning),
    "Valid: no subgroups, no minMember, no minSubGroup", and minSubGroup 0 (hard)."""
    assert violations(pod_group(minMember=3)) == []
    assert any(
        "both minMember and minSubGroup" in v for v in violations(pod_group(minMember=1, minSubGroup=1))
    )
    assert violations(pod_group(sg("a", member=1), minSubGroup=2)) == []
    assert violations(pod_group()) == []
    assert any(
        "minSubGroup 0 must be at least 1" in v
        for v in violations(pod_group(sg("a", member=1), minSubGroup=0))
    )


def test_create_rejects_what_update_warns() -> None:
    """``TestCreateRejectsWhatUpdateWarns``: minMember on a parent is refused on create."""
    assert violations(pod_group(sg("parent", member=2), sg("child", "parent", member=1)))


def test_without_kai_it_is_not_in_stack_and_unknowns_cannot_check() -> None:
    lone = run(TOPOLOGY, [topology((RACK, "rack"), (HOST, "rack"))])  # no KAI object or release
    assert lone.violations == [] and "would refuse it" in (lone.cannot_check or "")
    outcome = run(PODGROUP, [QUEUE, pod_group(sg(UNKNOWN, member=1), sg("b", member=1))])
    assert outcome.violations == [] and outcome.cannot_check is not None
    odd = k8s(
        "scheduling.run.ai/v2alpha2",
        "PodGroup",
        "odd",
        namespace="team",
        spec={"subGroups": [1, None, {"x": 1}]},
    )
    assert run(PODGROUP, [QUEUE, odd]).violations == []


def topology(*levels: tuple[str, str]) -> Registration:
    spec = {
        "levels": [{"nodeLabel": label, **({"alias": alias} if alias else {})} for label, alias in levels]
    }
    return k8s("kai.scheduler/v1alpha1", "Topology", "topo", spec=spec)


RACK, HOST = "accelerator.nvidia.com/rack", "kubernetes.io/hostname"


def test_topology_aliases() -> None:
    """``TestTopologyValidator``: no aliases and unique aliases pass; a duplicated alias and an
    alias equal to a nodeLabel are refused."""
    assert run(TOPOLOGY, [QUEUE, topology((RACK, ""), (HOST, ""))]).violations == []
    assert run(TOPOLOGY, [QUEUE, topology((RACK, "rack"), (HOST, "node"))]).violations == []
    assert run(TOPOLOGY, [QUEUE, topology((RACK, "rack"), (HOST, "rack"))]).mentions("not unique: ['rack']")
    assert run(TOPOLOGY, [QUEUE, topology((RACK, HOST), (HOST, "node"))]).mentions("equal a nodeLabel")
