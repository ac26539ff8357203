"""The "What-if" section of ``build/<stack>/report.md``: each queue under the stack's load profile.

Kueue ClusterQueues get the Kueue table, KAI queues the KAI table (:mod:`whatif.kai.section`), a
stack with both gets both.  It always says something: the figures, or why there are none (no
queues of either scheduler, no load profile, or a behaviour the simulator does not model -- TAS,
partial admission), so a reviewer never mistakes a missing section for a clean one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from whatif.errors import NotModelledError, WhatIfError
from whatif.kai.run import has_kai_queues
from whatif.kai.section import kai_section_lines
from whatif.multikueue.fleet import fleet
from whatif.multikueue.summary import multikueue_lines
from whatif.pack import StackModel
from whatif.profiles import generate_trace, load_profile, profile_path
from whatif.run import simulate
from whatif.sources import Record
from whatif.summary import pool_lines, queue_table, starved_lines

HEADING = "### What-if: Kueue admission under the stack's load profile"


def section_lines(
    stack: str, items: Iterable[Record | tuple[str, Any, str, str]], model: StackModel | None = None
) -> list[str]:
    """The Kueue table, the KAI table (:mod:`whatif.kai.section`), or both; a MultiKueue program
    (:mod:`whatif.multikueue`) gets the manager's table, per team where its work ran, and the
    comparison with one region.  ``model``: the pack's model of ``items`` when the caller has one
    (the preview's report shares its own), else built here."""
    records: list[Record] = [r if len(r) == 6 else (*r[:4], "", ()) for r in items]
    if model is None:
        model = StackModel.from_plain(r[:4] for r in records)
    kai = kai_section_lines(stack, model) if has_kai_queues(model) else []
    if not model.cluster_queues():
        if kai:
            return kai
        return [HEADING, "", "No Kueue ClusterQueues or KAI queues in this stack: nothing to simulate.", ""]
    return [*_kueue_lines(stack, model, records), *kai]


def _kueue_lines(stack: str, model: StackModel, records: list[Record]) -> list[str]:
    out = [HEADING, ""]
    path = profile_path(stack)
    if not path.exists():
        return [*out, f"No load profile (`whatif/{path.name}`): not simulated.", ""]
    try:
        profile = load_profile(path)
        trace = generate_trace(profile, model, path.name)
        result = simulate(model, trace, fleet=fleet(records))
    except NotModelledError as error:
        return [*out, f"**Not simulated:** {error}.", ""]
    except WhatIfError as error:
        return [*out, f"**What-if failed:** {error}", ""]
    hours = profile.get("hours", 168)
    rules = "admission rules" + rule_options(result)
    out += [
        f"{len(trace.entries)} workloads from `whatif/{path.name}` over {hours} h (seed {profile.get('seed', 0)}), "
        f"simulated with Kueue v0.19.2's {rules} (`python -m whatif`; what is and is not "
        "modelled: `whatif/README.md`). Waits are from submission to admission, split into time "
        "pending for quota and time waiting for nodes (ProvisioningRequests and their retries); GPU "
        "use is GPU-hours held over what the queue can really hold (nominal GPU quota, or the GPUs "
        "of the node pools behind its flavors when fewer).",
        "",
        *queue_table(result["queues"]),
        "",
    ]
    pools = pool_lines(result["pools"])
    out += [*pools, ""] if pools else []
    out += [*multikueue_lines(result), ""] if "multiKueue" in result else []
    starved = starved_lines(result["queues"])
    out += ["Never admitted:", "", *starved, ""] if starved else ["Every workload was admitted.", ""]
    out += [f"- note: {n}" for n in result["notes"]]
    return [*out, ""] if result["notes"] else out


def rule_options(result: dict[str, Any]) -> str:
    """The Configuration options the run simulated, said next to the admission rules."""
    options = []
    fair = result["fairSharing"]
    if fair:
        options.append(f"fair sharing (preemptionStrategies {', '.join(fair['preemptionStrategies'])})")
    afs = result.get("admissionFairSharing")
    if afs:
        options.append(
            f"admission fair sharing on {', '.join(afs['clusterQueues'])} (usage half-life "
            f"{afs['usageHalfLifeTimeSeconds']:g} s, sampled every {afs['usageSamplingIntervalSeconds']:g} s)"
        )
    return " with " + " and ".join(options) if options else ""
