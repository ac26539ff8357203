"""Known bugs of the pinned Kueue, checked against any program (issue 28, item 6).

Each record names the releases that carry the bug and the one that fixes it; the pack reports it
(advisory) only when an installed release is in the range *and* the program meets the record's
condition.  Each condition is shown met by a program that can hit the bug and not met by one that
cannot; each record is shown silent on the fixed release.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from gpu_batch_policy.facts.known_bugs import known_bugs, parse_version
from gpu_batch_policy.facts.known_bugs.conditions import CONDITIONS, PROVREQ_NAME_MAX
from pulumi_policy import EnforcementLevel

from preview.analyzer import PolicyPackProcess
from preview.findings.levels import pack_part
from preview.records import RecordedResource
from tests.policies.corpus import STACK_URN
from tests.policies.pack_harness import Res, run
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import (
    admission_check,
    cluster_queue,
    k8s,
    kueue_release,
    local_queue,
    provisioning_request_config,
    ray_job,
)
from tests.policies.test_corpus_e2e import POLICIES_DIR

POLICY = get_policy("known-bug-in-pinned-version")
ROOT = Path(__file__).resolve().parents[3]


def release(version: str) -> Res:
    res = kueue_release()
    res.props["version"] = version
    return res


def queue(**spec: Any) -> list[Res]:
    return [cluster_queue(**spec), local_queue()]


def job(parallelism: int, completions: int) -> Res:
    return k8s(
        "batch/v1",
        "Job",
        "sweep",
        namespace="team-a",
        labels={"kueue.x-k8s.io/queue-name": "team-lq"},
        spec={"parallelism": parallelism, "completions": completions, "template": {"spec": {}}},
    )


def ids(resources: list[Res]) -> list[str]:
    """The ids of the known bugs reported, read from the findings' text."""
    text = run(POLICY, resources).text()
    return sorted(b.id for b in known_bugs() if f"({b.id})" in text)


def test_the_rule_is_advisory_and_prod_may_raise_it() -> None:
    assert POLICY.enforcement_level == EnforcementLevel.ADVISORY
    assert POLICY.name == "known-bug-in-pinned-version"


def test_records_are_well_formed_and_every_condition_is_implemented() -> None:
    bugs = known_bugs()
    assert len({b.id for b in bugs}) == len(bugs) >= 4
    for bug in bugs:
        fixed = parse_version(bug.fixed_in)
        assert fixed is not None and bug.affected_from < bug.affected_before <= fixed
        assert bug.condition in CONDITIONS and bug.references
    assert set(CONDITIONS) == {b.condition for b in bugs}


def test_besteffortfifo_with_preemption_on_0_19_2() -> None:
    preempting = queue(preemption={"withinClusterQueue": "LowerPriority"})
    assert ids([release("0.19.2"), *preempting]) == ["kueue-besteffortfifo-sticky-head"]
    # Not met: StrictFIFO, or no preemption; not affected: the fixed release.
    assert (
        ids(
            [
                release("0.19.2"),
                *queue(preemption={"withinClusterQueue": "LowerPriority"}, queueingStrategy="StrictFIFO"),
            ]
        )
        == []
    )
    assert ids([release("0.19.2"), *queue()]) == []
    assert ids([release("0.19.3"), *preempting]) == []


def test_a_queued_job_with_parallelism_over_completions() -> None:
    assert ids([release("0.19.5"), *queue(), job(4, 2)]) == ["kueue-job-parallelism-over-completions"]
    assert ids([release("0.19.5"), *queue(), job(2, 4)]) == []
    assert ids([release("0.19.6"), *queue(), job(4, 2)]) == []


def test_a_limitrange_where_workloads_queue() -> None:
    limits = k8s("v1", "LimitRange", "defaults", namespace="team-a", spec={"limits": [{"type": "Container"}]})
    elsewhere = copy.deepcopy(limits)
    elsewhere.props["metadata"]["namespace"] = "other"
    elsewhere.name = "other/defaults"
    elsewhere.urn += "-other"
    assert ids([release("0.19.3"), *queue(), limits]) == ["kueue-requeue-without-limitrange-defaults"]
    assert ids([release("0.19.3"), *queue(), elsewhere]) == []
    assert ids([release("0.19.4"), *queue(), limits]) == []


def _provreq_stack(job_name: str) -> list[Res]:
    cq = cluster_queue(admissionChecksStrategy={"admissionChecks": [{"name": "dws"}]})
    return [
        release("0.19.2"),
        cq,
        local_queue(),
        admission_check(),
        provisioning_request_config(),
        ray_job(job_name),
    ]


def test_a_provisioning_request_name_that_needs_truncation() -> None:
    # "rayjob-<name>-<hash5>-dws-<attempt>": the longest name that still fits, and one more.
    fits = "j" * (PROVREQ_NAME_MAX - len("rayjob-") - len("-abcde") - len("-dws-4"))
    assert ids(_provreq_stack(fits)) == []
    assert ids(_provreq_stack(fits + "j")) == ["kueue-provreq-name-truncation-loop"]


def test_the_advisory_names_the_bug_and_the_fix_release() -> None:
    """A BestEffortFIFO queue that preempts (as prod's do) on 0.19.2."""
    text = run(POLICY, [release("0.19.2"), *queue(preemption={"reclaimWithinCohort": "Any"})]).text()
    assert "0.19.3 or later" in text and "sticky" in text


@pytest.mark.parametrize("version", ["v0.19.2", "0.19.2"])
def test_versions_with_or_without_v(version: str) -> None:
    assert parse_version(version) == (0, 19, 2)
    assert parse_version("0.19") is None and parse_version("latest") is None


def _records(resources: list[Res]) -> list[RecordedResource]:
    stack = RecordedResource(STACK_URN, "pulumi:pulumi:Stack", "gpu-batch-test", "", "", False, {}, {})
    return [stack] + [
        RecordedResource(r.urn, r.type, r.name, STACK_URN, "", True, r.props, r.props) for r in resources
    ]


def test_a_stack_config_raises_it_through_the_pack_as_the_engine_runs_it() -> None:
    """``policies/config.prod.json`` with the rule set to mandatory (the ``--policy-pack-config``
    form), through the pack's own process: the same finding becomes mandatory.  The shipped prod
    config leaves it advisory, since prod's BestEffortFIFO queues meet the sticky-head bug on the
    pinned 0.19.2 and a mandatory finding would stop prod's preview until the pin moves."""
    # The pack's part of the file, as the preview hands it over (preview.findings.levels).
    prod = pack_part(json.loads((ROOT / "policies" / "config.prod.json").read_text()))
    assert prod is not None
    assert POLICY.name not in prod  # shipped: advisory (see the docstring)
    stack = _records([release("0.19.2"), *queue(preemption={"withinClusterQueue": "LowerPriority"})])
    levels = {}
    for config in (prod, {**prod, POLICY.name: "mandatory"}, {**prod, POLICY.name: "disabled"}):
        with PolicyPackProcess(POLICIES_DIR, stack="prod") as process:
            process.configure(config)
            found = [d for d in process.analyze(stack) if d.policy_name == POLICY.name]
        levels[str(config.get(POLICY.name))] = [d.mandatory for d in found]
    assert levels == {"None": [False], "mandatory": [True], "disabled": []}
