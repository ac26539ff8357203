"""The capacity, KAI, wiring and SkyPilot rules inside the real pack process, over gRPC, as
``pulumi preview --policy-pack policies`` runs them: levels, URNs, config and preview unknowns."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from preview.analyzer import AnalysisResult, PolicyPackProcess
from preview.records import RecordedResource
from tests.policies.workload_stack import (
    UNKNOWN_NUMBER,
    Registration,
    kai_queue,
    kai_release,
    kuberay_release,
    pod,
    ray_cluster,
    workers,
)

POLICIES_DIR = Path(__file__).resolve().parents[2] / "policies"
STACK_URN = "urn:pulumi:test::gpu-batch::pulumi:pulumi:Stack::gpu-batch-test"
TEAM_A = {"kai.scheduler/queue": "team-a"}


def records(*items: Registration) -> list[RecordedResource]:
    stack = RecordedResource(STACK_URN, "pulumi:pulumi:Stack", "gpu-batch-test", "", "", False, {}, {})
    return [
        stack,
        *(RecordedResource(urn, t, name, STACK_URN, "", True, props, props) for t, props, urn, name in items),
    ]


def kai_stack(team_gpu_limit: object) -> list[RecordedResource]:
    return records(
        kai_release(),
        kuberay_release(),
        kai_queue("department-1"),
        kai_queue("team-a", parent="department-1", gpu=(0, team_gpu_limit)),
        ray_cluster("rc", labels=TEAM_A, groups=[workers("w", pod(gpu=1), 4, 4)]),
    )


@pytest.fixture(scope="module")
def pack() -> Iterator[PolicyPackProcess]:
    with PolicyPackProcess(POLICIES_DIR) as process:
        yield process


def findings(result: AnalysisResult, policy: str) -> list[str]:
    return [d.message for d in result.diagnostics if d.policy_name == policy]


def test_rules_are_registered_with_their_levels(pack: PolicyPackProcess) -> None:
    result = pack.run(kai_stack(-1))
    levels = {p.name: p.level for p in result.policies}
    assert levels["kai-gang-within-limits"] == "mandatory"
    assert levels["kueue-quota-within-capacity"] == "advisory"  # a risk; config.prod.json raises it
    assert levels["kueue-flavor-selects-pool"] == "advisory"
    assert {"skypilot-shared-ingress", "kai-gpu-sharing", "gpu-pod-fits-a-node"} <= set(levels)


def test_gang_over_limit_is_a_mandatory_stack_finding_on_the_workload(pack: PolicyPackProcess) -> None:
    recs = kai_stack(2)
    result = pack.run(recs)
    [diag] = [d for d in result.diagnostics if d.policy_name == "kai-gang-within-limits"]
    assert diag.mandatory and diag.stage == "analyze-stack"
    assert diag.urn == next(r.urn for r in recs if r.name == "rc")
    assert "needs 4 GPUs" in diag.message and not result.passed


def test_clean_stack_passes(pack: PolicyPackProcess) -> None:
    assert pack.run(kai_stack(-1)).passed


def test_unknown_limit_is_advisory_cannot_check(pack: PolicyPackProcess) -> None:
    result = pack.run(kai_stack(UNKNOWN_NUMBER))
    [diag] = [d for d in result.diagnostics if d.policy_name == "kai-gang-within-limits"]
    assert diag.cannot_check and not diag.mandatory and result.passed


def test_a_stack_config_file_can_lower_a_rule(pack: PolicyPackProcess) -> None:
    result = pack.run(kai_stack(2), {"kai-gang-within-limits": "advisory"})
    assert findings(result, "kai-gang-within-limits") and result.passed
