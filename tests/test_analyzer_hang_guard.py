"""The preview waits for the pack as the engine does (issue 44): no fixed deadline, only a hang
guard that scales with the stack.

The engine calls ``AnalyzeStack`` with a context no timer cancels (pulumi/pulumi
``sdk/go/common/resource/plugin/analyzer_plugin.go`` ``(*analyzer).AnalyzeStack``), so a pack that is
slow on a busy machine is waited for.  A real pack process (the Python policy SDK, as
``pulumi preview --policy-pack`` runs it) whose stack policy sleeps stands for the busy machine:
with the guard scaled to the stack it is waited for; below its run time the guard names the hang.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from preview.analyzer import HANG_GUARD_FLOOR_S, AnalyzerError, PolicyPackProcess
from preview.records import RecordedResource

SLEEP_S = 3.0

SLOW_PACK = f"""
import time

from pulumi_policy import EnforcementLevel, PolicyPack, StackValidationPolicy


def slow(args, report_violation):
    time.sleep({SLEEP_S})


PolicyPack(
    name="slow",
    enforcement_level=EnforcementLevel.ADVISORY,
    policies=[StackValidationPolicy(name="slow-stack-policy", description="sleeps", validate=slow)],
)
"""


def slow_pack(tmp_path: Path) -> Path:
    pack = tmp_path / "slow-pack"
    pack.mkdir()
    (pack / "PulumiPolicy.yaml").write_text("runtime: python\n")
    (pack / "__main__.py").write_text(SLOW_PACK)
    return pack


def records(count: int) -> list[RecordedResource]:
    return [
        RecordedResource(
            urn=f"urn:pulumi:dev::p::kubernetes:core/v1:Namespace::ns{i}",
            type="kubernetes:core/v1:Namespace",
            name=f"ns{i}",
            parent="",
            provider="",
            custom=True,
            inputs={"metadata": {"name": f"ns{i}"}},
            outputs={},
        )
        for i in range(count)
    ]


def test_a_slow_pack_is_waited_for_when_the_guard_scales_with_the_stack(tmp_path: Path) -> None:
    # 1 s floor + 2 s for each of 2 resources = 5 s > the pack's 3 s
    with PolicyPackProcess(
        slow_pack(tmp_path), hang_guard_floor_s=1.0, hang_guard_per_resource_s=2.0
    ) as pack:
        pack.configure()
        assert pack.analyze(records(2)) == []


def test_a_pack_slower_than_the_guard_is_a_named_hang(tmp_path: Path) -> None:
    # the same pack, a guard that does not scale: 2 s < 3 s
    with PolicyPackProcess(
        slow_pack(tmp_path), hang_guard_floor_s=2.0, hang_guard_per_resource_s=0.0
    ) as pack:
        pack.configure()
        with pytest.raises(AnalyzerError, match=r"AnalyzeStack hung: no answer about 2 resource\(s\) in 2 s"):
            pack.analyze(records(2))


def test_the_default_guard_is_far_beyond_a_busy_machine() -> None:
    pack = PolicyPackProcess(Path())
    # the old fixed 60 s deadline failed a 1,000-team preview on a loaded machine
    assert pack.hang_guard_s(0) == HANG_GUARD_FLOOR_S >= 600
    assert pack.hang_guard_s(20_000) >= 10_000
