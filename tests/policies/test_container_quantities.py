"""Invalid container requests/limits are findings; valid ones (any spelling the API takes) pass."""

from __future__ import annotations

import pytest

from tests.policies.pack_harness import UNKNOWN, run
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import patch, ray_job

RULE = get_policy("container-resource-quantities")
HEAD_CPU = "spec.rayClusterSpec.headGroupSpec.template.spec.containers[0].resources.requests.cpu"


@pytest.mark.parametrize(
    "bad", ["12 ", "1_000", "１２", "1e3m", "1e+3Gi", "NaN", "sNaN", 0.5, float("nan"), True]
)
def test_invalid_quantities_are_findings_naming_field_and_value(bad: object) -> None:
    result = run(RULE, [patch(ray_job(), HEAD_CPU, bad)])
    [message] = result.messages
    assert "RayJob 'team-a/trainer'" in message
    assert "headGroupSpec.template.spec.containers[0].resources.requests['cpu']" in message
    assert repr(bad)[:10] in message


@pytest.mark.parametrize("good", ["2", "500m", "1e3", "1e308", "1e-300", 4.0, UNKNOWN])
def test_valid_and_unknown_quantities_pass(good: object) -> None:
    assert run(RULE, [patch(ray_job(), HEAD_CPU, good)]).clean
