"""A MultiKueue run as Markdown: per team where its workloads ran and how long they waited, and
each manager ClusterQueue against the same quota in one region (the first worker's)."""

from __future__ import annotations

from typing import Any

from whatif.summary import fmt_seconds


def multikueue_lines(doc: dict[str, Any]) -> list[str]:
    mk = doc["multiKueue"]
    workers = mk["workers"]
    out = [
        f"MultiKueue: the manager admits by its quota and dispatches with {mk['dispatcher']} to "
        f"{', '.join(workers)}; each worker admits its copy by its own quota, ProvisioningRequest and node "
        "pools, and the first to admit runs it. In the table above, waiting for capacity is the time the "
        "manager's MultiKueue check was Pending (holding the manager's quota until a worker admitted).",
        "",
        "| team | "
        + " | ".join(f"ran on {w}" for w in workers)
        + " | never admitted | wait p50 | wait p95 | wait max |",
        "|---|" + "---|" * (len(workers) + 4),
    ]
    for team, fig in mk["teams"].items():
        wait = fig["waitSeconds"]
        ran = [str(fig["ranOn"].get(w, 0)) for w in workers]
        out.append(
            f"| {team} | {' | '.join(ran)} | {fig['neverAdmitted']} | {fmt_seconds(wait['p50'])} | "
            f"{fmt_seconds(wait['p95'])} | {fmt_seconds(wait['max'])} |"
        )
    single = mk.get("singleRegion")
    if single:
        out += [
            "",
            f"Against a single region of the same total quota (the manager's ClusterQueues with only "
            f"{single['worker']}'s ProvisioningRequest check and node pools):",
            "",
            "| ClusterQueue | wait p50 (multi-region / single) | wait p95 | wait max | never admitted |",
            "|---|---|---|---|---|",
        ]
        for name, fig in doc["queues"].items():
            one = single["queues"].get(name)
            if one is None:
                continue
            a, b = fig["waitSeconds"], one["waitSeconds"]
            out.append(
                f"| {name} | {fmt_seconds(a['p50'])} / {fmt_seconds(b['p50'])} | {fmt_seconds(a['p95'])} / "
                f"{fmt_seconds(b['p95'])} | {fmt_seconds(a['max'])} / {fmt_seconds(b['max'])} | "
                f"{len(fig['neverAdmitted'])} / {len(one['neverAdmitted'])} |"
            )
    return out
