"""Preemption settings that fair sharing never reads, shown to reviewers as if they ran.

Kueue v0.19.2 ``pkg/scheduler/preemption/preemption.go`` ``getTargets``: with fair sharing
enabled the preemptor takes ``fairPreemptions`` and never the classical path, which is the only
one that reads ``borrowWithinCohort`` (``classical.IsBorrowingWithinCohortForbidden``, and the
``maxPriorityThreshold`` comment there).  The preemption concept page at the same tag
(``site/content/en/docs/concepts/preemption.md``, "Fair Sharing") says fair sharing works with
``withinClusterQueue`` and ``reclaimWithinCohort`` "(but __not__ ``borrowWithinCohort``)".

Fair sharing is on when a Kueue controller Configuration carries a ``fairSharing`` block
(``config.kueue.x-k8s.io/v1beta2``: its presence enables it; v1beta1: ``fairSharing.enable``;
reference/kueue.md §5).  A ClusterQueue that still sets ``borrowWithinCohort`` to anything but
``Never`` then promises "borrow by preempting lower priorities below threshold N" and delivers
fair-share preemption instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, Policy

from ...facts.model import StackModel
from ...facts.model.helm import HelmRelease
from ...primitives.values import Unknown, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter


def _fair_sharing(release: HelmRelease) -> bool | None:
    """Whether the release's Configuration enables fair sharing; None when unknown."""
    config = release.kueue_config()
    if config.unknown is not None:
        return None
    if not config.present or not isinstance(config.data, dict):
        return False
    block = config.data.get("fairSharing")
    if isinstance(block, Unknown):
        return None
    if not isinstance(block, dict):
        return False
    if str(config.data.get("apiVersion", "")).endswith("/v1beta1"):
        enable = block.get("enable")
        return None if isinstance(enable, Unknown) else enable is True
    return True


def check_borrow_within_cohort_under_fair_sharing(
    model: StackModel, reporter: Reporter, _config: Mapping[str, Any]
) -> None:
    verdicts = [_fair_sharing(r) for r in model.kueue_releases()]
    if not any(v is True for v in verdicts):
        if any(v is None for v in verdicts):
            for release in model.kueue_releases():
                reporter.cannot_check(release, "the controller Configuration is unknown until apply")
        return
    for cq in model.cluster_queues():
        borrow = dig(cq.obj.spec, "preemption", "borrowWithinCohort")
        if isinstance(borrow, Unknown):
            reporter.cannot_check(cq, "spec.preemption.borrowWithinCohort is unknown until apply")
            continue
        policy = dig(borrow, "policy")
        if isinstance(policy, Unknown):
            reporter.cannot_check(cq, "spec.preemption.borrowWithinCohort.policy is unknown until apply")
            continue
        if policy in (None, "Never"):
            continue
        threshold = dig(borrow, "maxPriorityThreshold")
        shown = f"policy {policy}" + (f", maxPriorityThreshold {threshold}" if threshold is not None else "")
        reporter.violation(
            cq,
            f"borrowWithinCohort ({shown}) is ignored because Kueue's fair sharing is enabled: fair "
            "sharing preempts by share values, never by this policy",
            "remove `preemption.borrowWithinCohort` (express the intent with fairSharing weights and "
            "reclaimWithinCohort), or turn fair sharing off",
        )


POLICIES: list[Policy] = [
    stack_policy(
        "kueue-borrow-within-cohort-under-fair-sharing",
        "With Kueue fair sharing on, ClusterQueues must not set borrowWithinCohort: fair sharing ignores it.",
        check_borrow_within_cohort_under_fair_sharing,
        # An ignored setting is a risk (a promise not kept), not a stack that cannot work (issue 18
        # item 7); policies/config.prod.json raises it.
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
]
