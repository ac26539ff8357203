"""A load profile simulates only work its stack lets the team submit.

The stack's queue admission policy (``components/queue_admission.py``
``priority_class_validations``) refuses a workload naming a priority class outside the team's
``priorityClasses``; a profile stream naming one simulates work that never reaches Kueue.  The
live tier found that ``whatif/prod.yaml`` had research submit ``prod-priority`` H100 gangs, which
prod's policy refuses with 403 (``tests/live/test_queues_live.py``, issue 40 part 4).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.stack_runner import config_value
from whatif.profiles import load_profile, profile_path

PROFILED = [s for s in ("dev", "prod", "skypilot", "multiregion", "kai") if profile_path(s).exists()]


def refused_streams(profile: dict[str, Any], teams: list[dict[str, Any]]) -> list[str]:
    """Streams naming a priority class the namespace's team may not use (a team without
    ``priorityClasses`` may use any; a namespace of no team is not judged here)."""
    allowed = {
        str(t.get("namespace") or t["name"]): set(t["priorityClasses"])
        for t in teams
        if "priorityClasses" in t
    }
    out = []
    for i, stream in enumerate(profile["arrivals"]):
        name = stream.get("priorityClass")
        ns = str(stream.get("namespace"))
        if name is not None and ns in allowed and name not in allowed[ns]:
            out.append(f"arrivals[{i}] ({ns}): {name} not in {sorted(allowed[ns])}")
    return out


@pytest.mark.parametrize("stack", PROFILED)
def test_every_stream_names_a_priority_its_team_may_use(stack: str) -> None:
    teams = config_value(stack, "gpu-batch:teams")
    assert not refused_streams(load_profile(profile_path(stack)), teams or [])


def test_a_stream_outside_the_team_policy_is_caught() -> None:
    profile = {"arrivals": [{"namespace": "research", "priorityClass": "prod-priority"}]}
    teams = [{"name": "research", "priorityClasses": ["dev-priority"]}]
    assert refused_streams(profile, teams) == [
        "arrivals[0] (research): prod-priority not in ['dev-priority']"
    ]
    assert (
        refused_streams({"arrivals": [{"namespace": "research", "priorityClass": "dev-priority"}]}, teams)
        == []
    )
