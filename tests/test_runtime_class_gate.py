"""The gate the KAI workloads wait on: it completes only once the GPU Operator created the class."""

from __future__ import annotations

import pytest

from components.gates.runtime import RuntimeClassMissingError, wait_for_runtime_classes


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_waits_until_the_operator_created_the_class() -> None:
    clock = FakeClock()
    created_at = 30.0
    wait_for_runtime_classes(
        lambda name: name == "nvidia" and clock.now >= created_at,
        ["nvidia"],
        600,
        clock=clock,
        sleep=clock.sleep,
    )
    assert clock.now == created_at


def test_names_the_missing_class_at_the_deadline() -> None:
    clock = FakeClock()
    with pytest.raises(RuntimeClassMissingError, match="RuntimeClass nvidia does not exist"):
        wait_for_runtime_classes(lambda _: False, ["nvidia"], 60, clock=clock, sleep=clock.sleep)
    assert clock.now >= 60
