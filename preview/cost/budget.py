"""A team's expected GPU week against its ``teams[].weeklyGpuBudget``: an advisory finding.

The team's week is the sum of the expected weeks (``cost.json`` ``expectedWeekly``: the what-if's
GPU-hours at cited prices) of the ClusterQueues its LocalQueues point at (``TeamConfig.local_queues``:
``clusterQueue`` and ``gpuQueues``) and of its leaf KAI queue (``kaiQueue``).  A queue shared
with other teams counts whole: the estimate cannot split one queue's bill.  When a queue of the team has no expected week (no
what-if, or unpriced) the budget cannot be checked: a "cannot check" note, never a pass.
The finding points at the budget's own line and flows into findings.json and the SARIF.
It is advisory unless the stack's policy config file raises it (``policies/config.<stack>.json``
entry ``team-weekly-gpu-budget``, read by ``preview.findings.levels``): prod makes it mandatory.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from preview.findings.document import Finding, Locator, key_finding

POLICY = "team-weekly-gpu-budget"
DESCRIPTION = (
    "A team's expected weekly GPU cost (the what-if's GPU-hours at cited node-hour prices) stays "
    "within its teams[].weeklyGpuBudget."
)


def budget_findings(
    config: Mapping[str, str], cost: Mapping[str, Any], locator: Locator, level: str = "advisory"
) -> list[Finding]:
    """``level``: the stack's policy config file's (``preview.findings.levels.preview_level``);
    ``disabled`` checks nothing.  A budget that cannot be checked stays an advisory note at any
    level: a missing price or what-if proves no breach."""
    if level == "disabled":
        return []
    teams = json.loads(config.get("gpu-batch:teams", "[]"))
    queues = {(q["scheduler"], q["queue"]): q for q in cost["queues"]}
    out: list[Finding] = []
    for i, team in enumerate(teams if isinstance(teams, list) else []):
        if not isinstance(team, dict) or team.get("weeklyGpuBudget") is None:
            continue
        budget = Decimal(str(team["weeklyGpuBudget"]))
        keys = _team_queues(team)
        targets = [name for _, name in keys]
        weeks = [queues.get(key, {}).get("expectedWeekly") for key in keys]
        currency = next((queues[k]["currency"] for k in keys if k in queues and queues[k]["currency"]), "")
        name = str(team.get("name"))
        if not targets or None in weeks:
            missing = [n for n, w in zip(targets, weeks, strict=True) if w is None] or ["(no queue)"]
            message = (
                f"team '{name}': weeklyGpuBudget {budget} cannot be checked: no expected week for "
                f"{', '.join(missing)} (no what-if load profile, or no cited price for its pools)"
            )
            out.append(_finding(locator, i, message, cannot_check=True, level="advisory"))
            continue
        week = sum((Decimal(w) for w in weeks if w is not None), Decimal(0))
        if week > budget:
            message = (
                f"team '{name}': expected weekly GPU cost {week} {currency} ({', '.join(targets)}: the "
                f"what-if's GPU-hours at cited prices) is over its weeklyGpuBudget {budget} {currency}. "
                "Fix: lower the queues' nominal quota or borrowing limits, or raise the budget"
            )
            out.append(_finding(locator, i, message, cannot_check=False, level=level))
    return out


def _team_queues(team: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(scheduler, queue) the team's work is charged to: its ClusterQueue (when it has a
    LocalQueue), the ClusterQueues of its per-GPU-type LocalQueues, and its leaf KAI queue."""
    kueue = sorted({team["clusterQueue"]} if team.get("localQueue") and team.get("clusterQueue") else set())
    kueue += sorted(set((team.get("gpuQueues") or {}).values()) - {team.get("clusterQueue")})
    kai = [team["kaiQueue"]] if isinstance(team.get("kaiQueue"), str) else []
    return [("kueue", q) for q in kueue] + [("kai", q) for q in kai]


def blocks(findings: Sequence[Finding]) -> bool:
    """A breach at level mandatory fails the preview (exit 1), as a mandatory pack finding fails
    ``pulumi preview``; a budget that cannot be checked never does."""
    return any(f.level == "mandatory" and not f.cannotCheck for f in findings)


def _finding(locator: Locator, index: int, message: str, *, cannot_check: bool, level: str) -> Finding:
    key_path = f"gpu-batch:teams[{index}].weeklyGpuBudget"
    return key_finding(
        locator, POLICY, level, key_path, message, reference=DESCRIPTION, cannot_check=cannot_check
    )
