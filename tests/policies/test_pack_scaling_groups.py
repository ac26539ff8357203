"""ClusterQueues with many resource groups cost linear work (issue 12), checked without a clock.

Same method as ``test_pack_scaling``: the lines of the pack's own code executed while the SDK's
servicer runs every policy (``Analyze`` per resource, one ``AnalyzeStack``), for N, 2N and 3N
resource groups; the second difference is 0 for linear code.  One queue mixes what makes the
rules loop per group (declared and undeclared flavors, invalid and unknown quotas, a cohort to
borrow from); a second repeats one group (same flavor, same resources) N times and a RayJob's gang
is judged against every one of its groups.  The gang rule used to look each (flavor, resource)
quota up by scanning every group: 3,000 repeated groups took 238 s in one ``AnalyzeStack``;
``ClusterQueue.quota_entry`` is now an index.

Line counts cannot see quadratic work done inside one C call (``item in some_list`` per item);
the one such case found, the Reporter's "cannot check yet" de-duplication, now uses a set, and
:func:`test_many_unknowns_are_deduplicated_in_order` pins its behaviour.
"""

from __future__ import annotations

from typing import Any

from gpu_batch_policy.rules.kit.report import Reporter

from tests.policies.pack_harness import UNKNOWN, Res
from tests.policies.pack_objects import (
    cluster_queue,
    cohort,
    local_queue,
    ray_job,
    resource_flavor,
    resource_group,
)
from tests.policies.test_pack_scaling import Calls, lines_executed, no_other_tracer, shared

__all__ = ["no_other_tracer"]  # the fixture, used by name below


def mixed_groups(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        kind = i % 4
        if kind == 0:  # a declared flavor, GPU and CPU
            out.append(resource_group(f"flavor-{i}", {"nvidia.com/gpu": "1", "cpu": "1"}))
        elif kind == 1:  # an undeclared flavor
            out.append(resource_group(f"missing-{i}", {f"example.com/r{i}": "1"}))
        elif kind == 2:  # an invalid quantity
            out.append(resource_group(f"flavor-{i}", {f"example.com/r{i}": "12 "}))
        else:  # an unknown quota
            out.append(resource_group(f"flavor-{i}", {f"example.com/r{i}": UNKNOWN}))
    return out


def stack(n: int) -> list[Res]:
    flavors = [resource_flavor(f"flavor-{i}") for i in range(n) if i % 4 != 1]
    same = resource_group("gpu-flavor", {"nvidia.com/gpu": "8", "cpu": "48", "memory": "192Gi"})
    return [
        *shared(),
        cohort("ml"),
        cluster_queue("mixed", cohortName="ml", resourceGroups=mixed_groups(n)),
        cluster_queue("other", cohortName="ml"),
        local_queue("lq", "team-a", "mixed"),
        cluster_queue("repeated", resourceGroups=[same] * n),
        local_queue("lq-repeated", "team-a", "repeated"),
        ray_job("trainer", "team-a", "lq-repeated"),  # its gang is judged against every group
        *flavors,
    ]


def test_resource_groups_add_the_same_work_each(no_other_tracer: None) -> None:
    Calls(stack(8)).run()  # warms the token cache, so W(N) counts only the stack
    work = [lines_executed(Calls(stack(groups)).run) for groups in (40, 80, 120)]
    curvature = work[2] - 2 * work[1] + work[0]
    print(f"resource groups 40/80/120: {work} lines, second difference {curvature}")
    # A loop that does one line per *pair* of groups would add at least 2 * 40^2 = 3,200 lines;
    # a few hundred come from caches that warm up with new names (type tokens).
    assert curvature < 500, f"40/80/120 resource groups cost {work} lines: {curvature} more per step"


def test_many_unknowns_are_deduplicated_in_order() -> None:
    def ignore(message: str, urn: str | None = None) -> None:
        pass

    class Big:
        urn = "urn:big"

        def describe(self) -> str:
            return "ClusterQueue 'big'"

    reporter = Reporter(ignore, stack=True)
    for i in [*range(3000), *range(3000)]:
        reporter.cannot_check(Big(), f"spec.resourceGroups[{i}] is unknown")
    assert len(reporter.unknown_items) == 3000
    assert reporter.unknown_items[:2] == [
        "ClusterQueue 'big': spec.resourceGroups[0] is unknown",
        "ClusterQueue 'big': spec.resourceGroups[1] is unknown",
    ]
