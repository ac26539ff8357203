"""The repo stacks' default what-if: load profiles, the report section, and its refusals."""

from __future__ import annotations

import json
from typing import Any

import pytest

from preview.harness import RunResult
from tests.stack_runner import run_stack
from whatif.errors import WhatIfError
from whatif.kai.section import HEADING as KAI_HEADING
from whatif.pack import StackModel
from whatif.profiles import generate_trace, load_profile, profile_path
from whatif.run import simulate
from whatif.section import HEADING, section_lines


@pytest.fixture(scope="module")
def runs() -> dict[str, RunResult]:
    return {s: run_stack(s) for s in ("dev", "prod", "kai")}


def _items(run: RunResult) -> list[tuple[str, Any, str, str]]:
    return [(r.type, r.inputs, r.urn, r.name) for r in run.resources]


def test_dev_profile_uses_the_declared_rayjob_gang_and_is_deterministic(runs: dict[str, RunResult]) -> None:
    model = StackModel.from_plain(_items(runs["dev"]))
    profile = load_profile(profile_path("dev"))
    trace = generate_trace(profile, model, "dev.yaml")
    again = generate_trace(profile, model, "dev.yaml")
    assert trace == again and len(trace.entries) > 100
    classes = {e.priority_class for e in trace.entries}
    assert classes == {"dev-priority", "prod-priority"}
    gang = trace.entries[0].pod_sets
    assert gang[0].name == "head" and all(e.submit < 168 * 3600 for e in trace.entries)
    doc = simulate(model, trace)
    assert json.dumps(doc) == json.dumps(simulate(model, trace))
    assert doc["queues"]["cluster-queue"]["admitted"] == len(trace.entries)


def test_report_section_has_a_row_per_queue_for_dev(runs: dict[str, RunResult]) -> None:
    lines = section_lines("dev", _items(runs["dev"]))
    assert lines[0] == HEADING
    assert any(line.startswith("| `cluster-queue` |") for line in lines)


def test_report_section_simulates_prod_under_fair_sharing(runs: dict[str, RunResult]) -> None:
    lines = section_lines("prod", _items(runs["prod"]))
    text = "\n".join(lines)
    assert "Not simulated" not in text and "fair sharing" in text
    for queue in ("research-l4", "research-h100", "applied-l4"):
        assert any(line.startswith(f"| `{queue}` |") for line in lines)


def test_report_section_for_the_kai_stack_has_a_row_per_kai_queue(runs: dict[str, RunResult]) -> None:
    lines = section_lines("kai", _items(runs["kai"]))
    assert lines[0] == KAI_HEADING
    assert "nothing to simulate" not in "\n".join(lines)
    assert any(line.startswith("| `team-a` | `department-1` |") for line in lines)
    assert any(line.startswith("| `department-1` | - |") for line in lines)


def test_a_stack_with_neither_scheduler_says_there_is_nothing_to_simulate() -> None:
    assert "nothing to simulate" in "\n".join(section_lines("dev", []))


def test_prod_with_fair_sharing_ignored_runs_and_says_so(runs: dict[str, RunResult]) -> None:
    model = StackModel.from_plain(_items(runs["prod"]))
    trace = generate_trace(load_profile(profile_path("prod")), model, "prod.yaml")
    doc = simulate(model, trace, ignore_fair_sharing=True)
    assert set(doc["queues"]) == {"applied-l4", "applied-h100", "research-l4", "research-h100"}
    assert "NOT simulated" in doc["notes"][0]


def test_a_declared_shape_that_does_not_exist_is_one_line(runs: dict[str, RunResult]) -> None:
    model = StackModel.from_plain(_items(runs["dev"]))
    profile = {
        "arrivals": [
            {"namespace": "default", "queue": "user-queue", "perHour": 1, "shapes": [{"declared": "nope"}]}
        ]
    }
    with pytest.raises(WhatIfError, match=r"^p arrivals\[0\].shapes\[0\].declared: got 'nope'"):
        generate_trace(profile, model, "p")


def _gpu_flavors(doc: dict[str, Any]) -> dict[str, set[str]]:
    """Per ClusterQueue, the flavors its admitted workloads' GPUs were assigned."""
    used: dict[str, set[str]] = {}
    for event in doc["events"]:
        if event["event"] == "admitted":
            for resources in event["flavors"].values():
                if "nvidia.com/gpu" in resources:
                    used.setdefault(event["clusterQueue"], set()).add(resources["nvidia.com/gpu"])
    return used


def _mixed(items: list[tuple[str, Any, str, str]]) -> list[tuple[str, Any, str, str]]:
    """Prod as it was before issue 21: each team's L4 queue also lists the h100 flavor (with the
    team's H100 quota) after l4, in one resource group."""
    specs = {name: inputs["spec"] for kind, inputs, _, name in items if kind.endswith(":ClusterQueue")}
    out = []
    for kind, inputs, urn, name in items:
        changed = inputs
        if kind.endswith(":ClusterQueue") and name.endswith("-l4"):
            changed = json.loads(json.dumps(inputs))
            h100 = specs[name.removesuffix("-l4") + "-h100"]["resourceGroups"][0]["flavors"][1]
            changed["spec"]["resourceGroups"][0]["flavors"].append(h100)
            changed["spec"]["admissionChecksStrategy"]["admissionChecks"][0]["onFlavors"] = ["l4", "h100"]
        out.append((kind, changed, urn, name))
    return out


def test_prod_l4_jobs_stay_on_l4_where_one_group_mixing_spilled_them(runs: dict[str, RunResult]) -> None:
    """Issue 21 item 7, through the simulator's port of Kueue v0.19.2's flavor assigner: with l4
    then h100 in one group, L4 jobs that do not fit the L4 quota are admitted on h100
    (``shouldTryNextFlavor``); with a ClusterQueue per GPU type they wait for L4 instead."""
    items = _items(runs["prod"])
    model = StackModel.from_plain(items)
    trace = generate_trace(load_profile(profile_path("prod")), model, "prod.yaml")
    used = _gpu_flavors(simulate(model, trace))
    assert used["research-l4"] == used["applied-l4"] == {"l4"}
    assert used["research-h100"] == {"h100"}
    mixed = StackModel.from_plain(_mixed(items))
    spilled = _gpu_flavors(
        simulate(mixed, generate_trace(load_profile(profile_path("prod")), mixed, "prod.yaml"))
    )
    assert "h100" in spilled["research-l4"] and "h100" in spilled["applied-l4"]


@pytest.mark.parametrize("stack", ["prod", "kai"])
def test_a_model_the_caller_built_gives_the_section_built_here(
    stack: str, runs: dict[str, RunResult]
) -> None:
    """The preview's report hands its own model (in URN order) to the section; the section from
    the registration-order items alone is the same, line for line."""
    from preview.report import stack_model

    given = section_lines(stack, _items(runs[stack]), stack_model(runs[stack].resources))
    assert given == section_lines(stack, _items(runs[stack]))


def test_the_report_builds_one_model_for_a_one_cluster_stack(
    runs: dict[str, RunResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The capacity sections and the what-if share the pack's model of the stack (~1 s a build at
    1,000 teams): one build, not one per part."""
    from preview.report import capacity_sections

    built: list[int] = []
    real = StackModel.from_plain.__func__  # type: ignore[attr-defined]

    def counting(cls: type[StackModel], *args: Any, **kwargs: Any) -> StackModel:
        built.append(1)
        result: StackModel = real(cls, *args, **kwargs)
        return result

    monkeypatch.setattr(StackModel, "from_plain", classmethod(counting))
    lines = capacity_sections("prod", runs["prod"].resources)
    assert HEADING in lines and len(built) == 1
