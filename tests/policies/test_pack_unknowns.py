"""Preview unknowns never crash a rule and never invent a violation.

A correct stack is analysed once per property: that property (leaf or whole sub-object) is
replaced by the engine's unknown sentinel.  Every rule of this module set must still run (no raw
``UnknownValueError`` escaping, no other exception) and report nothing but "cannot check yet".
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from gpu_batch_policy.rules.gke.node_pools import POLICIES as GKE
from gpu_batch_policy.rules.kueue.advisory import POLICIES as ADVISORY
from gpu_batch_policy.rules.kueue.api import POLICIES as API
from gpu_batch_policy.rules.kueue.config import POLICIES as CONFIG
from gpu_batch_policy.rules.kueue.refs import POLICIES as REFS

from tests.policies.pack_harness import UNKNOWN, Res, run_all
from tests.policies.pack_objects import (
    admission_check,
    cluster_queue,
    cohort,
    gke_cluster,
    helm_release,
    kueue_release,
    local_queue,
    namespace,
    patch,
    priority_class,
    provisioning_request_config,
    queued_pool,
    ray_cluster,
    ray_job,
    resource_flavor,
)

MINE = [p.name for p in (*GKE, *REFS, *API, *CONFIG, *ADVISORY)]


def correct_stack() -> list[Res]:
    cq = cluster_queue(cohortName="org", admissionChecksStrategy={"admissionChecks": [{"name": "dws"}]})
    cq = patch(cq, "spec.resourceGroups[0].flavors[0].resources[2].borrowingLimit", 4.0)
    cq = patch(cq, "spec.resourceGroups[0].flavors[0].resources[2].lendingLimit", 2.0)
    cq = patch(cq, "spec.preemption", {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"})
    config = yaml.safe_dump(
        {"integrations": {"frameworks": ["batch/job", "ray.io/rayjob", "ray.io/raycluster", "pod"]}}
    )
    sky = helm_release(
        "sky-team-a",
        "skypilot",
        {
            "apiService": {
                "config": yaml.safe_dump({"kubernetes": {"kueue": {"local_queue_name": "team-lq"}}})
            }
        },
        "team-a",
    )
    return [
        gke_cluster(),
        queued_pool(),
        namespace("team-a"),
        resource_flavor(),
        admission_check(),
        provisioning_request_config(),
        cohort("root"),
        cohort("org", parent="root"),
        cq,
        local_queue(),
        priority_class("prod-priority", 1000.0),
        priority_class("dev-priority", 100.0),
        kueue_release(
            config, controllerManager={"featureGates": [{"name": "TopologyAwareScheduling", "enabled": True}]}
        ),
        ray_job(),
        ray_cluster(),
        sky,
    ]


def _paths(value: Any, prefix: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*prefix, key)
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield (*prefix, index)
            yield from _paths(item, (*prefix, index))


def _with_unknown(stack: list[Res], index: int, path: tuple[str | int, ...]) -> list[Res]:
    changed = copy.deepcopy(stack)
    cur: Any = changed[index].props
    for key in path[:-1]:
        cur = cur[key]
    cur[path[-1]] = UNKNOWN
    return changed


def test_the_correct_stack_is_clean() -> None:
    for name, result in run_all(correct_stack(), MINE).items():
        assert result.clean and result.cannot_check is None, (name, result.text())


def _cases() -> list[tuple[int, tuple[str | int, ...]]]:
    return [(i, p) for i, res in enumerate(correct_stack()) for p in _paths(res.props)]


@pytest.mark.parametrize("chunk", range(8))
def test_any_unknown_property_gives_cannot_check_not_a_violation(chunk: int) -> None:
    stack = correct_stack()
    cases = _cases()
    assert len(cases) > 150  # the stack really exercises many properties
    for index, path in cases[chunk::8]:
        results = run_all(_with_unknown(stack, index, path), MINE)
        for name, result in results.items():
            assert result.clean, (stack[index].name, path, name, result.text())
