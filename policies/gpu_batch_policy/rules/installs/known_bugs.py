"""Known bugs of the installed operator versions that this program can hit (issue 28, item 6).

For each record of :mod:`gpu_batch_policy.facts.known_bugs` whose ``affected`` range holds the version
of an installed release of its chart, and whose condition the program meets, one advisory names
the bug, the objects that meet the condition, the release that fixes it and the references.
Advisory: the program works, with a risk; a stack may raise it (``policies/config.<stack>.json``:
``"known-bug-in-pinned-version": "mandatory"``; the engine's policy config sets the level of the
whole rule, so every bug the stack meets is then mandatory).  The shipped prod config does not: its
preempting BestEffortFIFO queues meet ``kueue-besteffortfifo-sticky-head`` on the pinned 0.19.2
(``policies/README.md``, "Raising it").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, Policy

from ...facts.known_bugs import known_bugs, parse_version
from ...facts.known_bugs.conditions import CONDITIONS
from ...facts.model import StackModel
from ..kit.builders import stack_policy
from ..kit.report import Reporter


def check_known_bugs(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for release in model.helm_releases():
        version = parse_version(release.version) if isinstance(release.version, str) else None
        chart = release.chart if isinstance(release.chart, str) else None
        if version is None or chart is None:
            continue
        for bug in known_bugs():
            if chart.rsplit("/", 1)[-1] != bug.chart or not bug.affects(version):
                continue
            # In name order, as the reader scans them (the model's own order, by URN, is stable too:
            # ``model.canonical_order``).
            hits = sorted(CONDITIONS[bug.condition](model), key=lambda hit: hit.describe())
            if not hits:
                continue
            shown = ", ".join(h.describe() for h in hits[:3]) + (
                f" and {len(hits) - 3} more" if len(hits) > 3 else ""
            )
            reporter.violation(
                release,
                f"{bug.component} {release.version} has a known bug this program can hit ({bug.id}): "
                f"{bug.summary}; met by {shown}",
                f"upgrade {bug.component} to {bug.fixed_in} or later (see {'; '.join(bug.references)})",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "known-bug-in-pinned-version",
        "An installed operator version has a known bug that this program's objects can trigger.",
        check_known_bugs,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
]
