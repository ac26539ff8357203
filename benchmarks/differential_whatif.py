"""``python -m benchmarks.differential_whatif``: the what-if against Kueue v0.19.2's own
scheduler over whole runs in time (issue 41, part 2).

Each seeded scenario (:mod:`benchmarks.whatif_scenarios`) runs through the what-if
(:func:`whatif.run.simulate`, the code ``python -m whatif --manifests ... --trace ...`` runs) and
through Kueue's scheduler, queue manager, cache and workload-controller event handlers
(:mod:`benchmarks.kueue_oracle`, the Go tests of ``whatif/oracle``).  Compared per workload:
every admission (time, ClusterQueue, flavor of each resource of each pod set) and every
preemption (time).  A scenario agrees when every workload does.

Excluded, by reason, before comparing: ``uid`` -- Kueue's result changes when the UIDs run in
the other order (its last tie-break between equal priorities and creation times, and between
preemption candidates); ``order`` -- it changes when events of one second reach it in another
order (the requeuer's batch after the instant's events, arrivals before finishes); ``cycles`` --
it changes when an instant may run 57 scheduling cycles instead of 40 (a head whose flavor scan
alternates keeps Kueue cycling until the next event); ``livelock`` -- Kueue's run does not
end; ``refused`` -- the what-if refuses the scenario (a behaviour it does not model).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import kueue_oracle
from benchmarks.whatif_scenarios import FAMILIES, generate, write_jsonl
from whatif.errors import NotModelledError, NotSettledError, WhatIfError
from whatif.pack import StackModel
from whatif.run import simulate
from whatif.trace import parse_trace

WHATIF_TIMEOUT_SECONDS = 20.0
Outcome = dict[str, dict[str, list[Any]]]
# the oracle's variants (whatif/oracle run_test.go Variants) -> the exclusion they show
VARIANT_REASONS = {
    "uid": "uid",
    "cycles": "cycles",
    "requeue-late": "order",
    "arrivals-first": "order",
}  # workload -> {"admissions": [...], "preemptions": [...]}


class _WhatIfTimeoutError(Exception):
    pass


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    def _raise(signum: int, frame: object) -> None:
        raise _WhatIfTimeoutError

    previous = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def model_of(scenario: dict[str, Any]) -> StackModel:
    """The scenario's manifests as ``--manifests`` would read them."""
    items = []
    for doc in scenario["objects"]:
        group, _, version = doc["apiVersion"].rpartition("/")
        meta = doc["metadata"]
        urn = f"differential:{doc['kind']}/{meta.get('namespace', '')}/{meta['name']}"
        items.append((f"kubernetes:{group or 'core'}/{version}:{doc['kind']}", doc, urn, meta["name"]))
    return StackModel.from_plain(items)


def whatif_outcome(scenario: dict[str, Any]) -> tuple[str, Outcome | str]:
    """``("ok", outcome)``, or ``(kind, message)`` with kind refused / unsettled / timeout."""
    trace_doc: dict[str, Any] = {
        "workloads": scenario["workloads"],
        "evictionDelaySeconds": scenario["evictionDelaySeconds"],
    }
    if scenario.get("provisioningDelaySeconds"):
        trace_doc["provisioningDelaySeconds"] = scenario["provisioningDelaySeconds"]
    try:
        with _deadline(WHATIF_TIMEOUT_SECONDS):
            doc = simulate(model_of(scenario), parse_trace(trace_doc))
    except _WhatIfTimeoutError:
        return "timeout", f"no result within {WHATIF_TIMEOUT_SECONDS:g} s"
    except NotSettledError as error:
        return "unsettled", str(error)
    except (NotModelledError, WhatIfError) as error:
        return "refused", str(error)
    out: Outcome = {
        f"{w['namespace']}/{w['name']}": {"admissions": [], "preemptions": []} for w in scenario["workloads"]
    }
    for e in doc["events"]:
        if e["event"] == "admitted":
            out[e["workload"]]["admissions"].append(
                {"time": int(e["time"]), "clusterQueue": e["clusterQueue"], "flavors": e.get("flavors") or {}}
            )
        elif e["event"] == "preempted":
            out[e["workload"]]["preemptions"].append(int(e["time"]))
    return "ok", out


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return bool(a["admissions"] == b["admissions"] and a["preemptions"] == b["preemptions"])


def _kueue_outcome(result: dict[str, Any]) -> Outcome:
    return {
        k: {"admissions": v["admissions"], "preemptions": v["preemptions"]}
        for k, v in result["workloads"].items()
    }


def difference(kueue: dict[str, Any], whatif: dict[str, Any]) -> str:
    """What differs for one workload, the coarsest first."""
    ka, wa = kueue["admissions"], whatif["admissions"]
    if bool(ka) != bool(wa):
        return "admitted-or-not"
    if kueue["preemptions"] != whatif["preemptions"] and bool(kueue["preemptions"]) != bool(
        whatif["preemptions"]
    ):
        return "preempted-or-not"
    if [(a["clusterQueue"], a["flavors"]) for a in ka] != [(a["clusterQueue"], a["flavors"]) for a in wa]:
        return "placement"
    if len(ka) != len(wa) or len(kueue["preemptions"]) != len(whatif["preemptions"]):
        return "admission-count"
    return "time"


def exclusion(results: dict[str, Any]) -> str | None:
    """Why Kueue's own result cannot judge this scenario, or None."""
    base = results["base"]
    if base.get("error"):
        return "oracle-error"
    if base["livelock"]:
        return "livelock"
    outcome = _kueue_outcome(base)
    for name, r in sorted(results.items()):
        if name != "base" and (r.get("error") or _kueue_outcome(r) != outcome):
            return VARIANT_REASONS.get(name, "order")
    return None


@dataclass
class Tally:
    total: int = 0
    agree: int = 0
    excluded: Counter[str] = field(default_factory=Counter)
    workloads: int = 0
    workloads_agree: int = 0
    differences: Counter[str] = field(default_factory=Counter)

    @property
    def compared(self) -> int:
        return self.total - sum(self.excluded.values())

    def line(self, label: str) -> str:
        reasons = " ".join(f"{k}={v}" for k, v in sorted(self.excluded.items()))
        pct = f"{100 * self.agree / self.compared:.1f}%" if self.compared else "n/a"
        return (
            f"{label}: agree={self.agree}/{self.compared} ({pct}) excluded={sum(self.excluded.values())}"
            + (f" ({reasons})" if reasons else "")
            + f" workloads={self.workloads_agree}/{self.workloads}"
        )


@dataclass
class Report:
    overall: Tally = field(default_factory=Tally)
    families: dict[str, Tally] = field(default_factory=lambda: {f: Tally() for f in FAMILIES})
    disagreements: list[dict[str, Any]] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [self.overall.line("whatif-vs-kueue")]
        out += [self.families[f].line(f"  {f}") for f in FAMILIES if self.families[f].total]
        diffs = " ".join(f"{k}={v}" for k, v in self.overall.differences.most_common())
        if diffs:
            out.append(f"  disagreeing workloads by first difference: {diffs}")
        return out


def judge(scenarios: list[dict[str, Any]], kueue: dict[str, dict[str, Any]]) -> Report:
    report = Report()
    for sc in scenarios:
        tallies = (report.overall, report.families[sc["family"]])
        for t in tallies:
            t.total += 1
        reason = exclusion(kueue[sc["id"]])
        kind, got = ("ok", {}) if reason else whatif_outcome(sc)
        if reason is None and kind == "refused":
            reason = "refused"
        if reason is not None:
            for t in tallies:
                t.excluded[reason] += 1
            continue
        want = _kueue_outcome(kueue[sc["id"]]["base"])
        diffs: dict[str, str] = {}
        for key, k in want.items():
            w = got.get(key) if isinstance(got, dict) else None
            if w is None:
                diffs[key] = kind  # the what-if gave no result (timeout, unsettled)
            elif not _same(k, w):
                diffs[key] = difference(k, w)
        for t in tallies:
            t.workloads += len(want)
            t.workloads_agree += len(want) - len(diffs)
            t.differences.update(diffs.values())
            t.agree += not diffs
        if diffs:
            report.disagreements.append(
                {"id": sc["id"], "family": sc["family"], "differences": diffs, "kueue": want, "whatif": got}
            )
    return report


def kept_results(keep: Path) -> dict[str, dict[str, Any]]:
    """Kueue's results an earlier ``--keep`` left, per scenario with every variant done."""
    kept: dict[str, dict[str, Any]] = {}
    for out in sorted(keep.glob("kueue.*.jsonl")):
        for line in out.read_text().splitlines():
            r = json.loads(line)
            kept.setdefault(r["id"], {})[r["variant"]] = r
    return {k: v for k, v in kept.items() if set(VARIANT_REASONS) | {"base"} <= set(v)}


def run(
    count: int, seed: int, keep: Path | None = None, jobs: int = 2
) -> tuple[list[dict[str, Any]], Report]:
    """Generate, replay through the oracle (``jobs`` processes, each a share of the scenarios,
    while this one runs the what-if), judge."""
    scenarios = generate(count, seed)
    kueue: dict[str, dict[str, Any]] = {}
    if keep is not None:
        # Kueue's results an earlier --keep left (a whole run, or one cut short): only the
        # scenarios without every variant go to the oracle again.
        ids = {s["id"] for s in scenarios}
        kueue = {k: v for k, v in kept_results(keep).items() if k in ids}
    todo = [s for s in scenarios if s["id"] not in kueue]
    if not todo:
        return scenarios, judge(scenarios, kueue)
    kueue_oracle.binary()  # built once, before the processes start
    with tempfile.TemporaryDirectory(prefix="whatif-differential-") as tmp:
        where = keep or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        first = len(list(where.glob("kueue.*.jsonl")))  # a resumed run writes beside the kept files
        procs = []
        for j in range(max(1, jobs)):
            path, out = where / f"scenarios.{first + j}.jsonl", where / f"kueue.{first + j}.jsonl"
            write_jsonl(todo[j :: max(1, jobs)], path)
            procs.append((kueue_oracle.start(path, out), out))
        try:
            for proc, out in procs:
                kueue.update(kueue_oracle.finish(proc, out))
        finally:
            for proc, _ in procs:
                if proc.poll() is None:
                    proc.kill()
    return scenarios, judge(scenarios, kueue)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.differential_whatif", description=__doc__)
    p.add_argument("--count", type=int, default=1200, help="scenarios (the families in turn)")
    p.add_argument("--seed", type=int, default=41)
    p.add_argument(
        "--keep",
        type=Path,
        help="keep the scenario and Kueue result files in this directory; the scenarios whose Kueue "
        "results it already holds are judged without the oracle (a run cut short resumes)",
    )
    p.add_argument("--disagreements", type=Path, help="write every disagreement (JSON) here")
    p.add_argument("--jobs", type=int, default=2, help="oracle processes (default: 2, the machine's cores)")
    p.add_argument(
        "--partial",
        action="store_true",
        help="with --keep: judge only the scenarios whose Kueue results are all there (a run cut short)",
    )
    args = p.parse_args(argv)
    start = time.monotonic()
    if args.partial and args.keep:
        kept = kept_results(args.keep)
        scenarios = [s for s in generate(args.count, args.seed) if s["id"] in kept]
        for line in judge(scenarios, kept).lines():
            print(line)
        print(f"  partial: {len(scenarios)} of {args.count} scenarios (seed={args.seed})")
        return 0
    try:
        _, report = run(args.count, args.seed, args.keep, args.jobs)
    except kueue_oracle.OracleUnavailableError as error:
        print(f"whatif-vs-kueue: {error}", file=sys.stderr)
        return 2
    for line in report.lines():
        print(line)
    print(f"  seed={args.seed} scenarios={args.count} wall_s={time.monotonic() - start:.1f}")
    if args.disagreements:
        args.disagreements.write_text(json.dumps(report.disagreements, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
