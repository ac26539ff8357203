"""``python -m whatif``: simulate Kueue admission (or, for a stack whose queues are KAI
Scheduler's, KAI's allocate / reclaim / preempt) for a stack or a manifests file.

Exit codes: 0 simulated; 2 bad input or a Kueue behaviour the simulator does not model (one line
on stderr, never a traceback).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from preview.project import PROJECT_DIR
from whatif.compare import check_base, diff_lines, model_at
from whatif.errors import NotModelledError, NotSettledError, WhatIfError
from whatif.kai.compare import kai_compare_lines
from whatif.kai.run import default_kai_trace, has_kai_queues, simulate_kai
from whatif.kai.section import kai_starved_lines, kai_table
from whatif.multikueue.fleet import Fleet, fleet
from whatif.multikueue.summary import multikueue_lines
from whatif.pack import StackModel
from whatif.run import default_trace, simulate
from whatif.sources import from_manifests, stack_records
from whatif.summary import queue_table, starved_lines
from whatif.trace import Trace, load_trace


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m whatif", description=__doc__)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--stack", help="a stack: build/<stack>/plan.json, or its program when absent")
    src.add_argument("--manifests", type=Path, help="multi-document Kubernetes YAML (kind: List too)")
    p.add_argument("--trace", type=Path, help="workload trace YAML (default: the stack's load profile)")
    p.add_argument("--profile", type=Path, help="load profile YAML (default: whatif/<stack>.yaml)")
    p.add_argument("--json", type=Path, help="write events and per-queue figures here")
    p.add_argument("--fresh", action="store_true", help="run the stack's program even if a plan exists")
    p.add_argument("--base", help="git ref: compare the stack at this ref with the working tree")
    p.add_argument("--provisioning-delay", type=float, help="seconds a ProvisioningRequest takes")
    p.add_argument(
        "--ignore-fair-sharing",
        action="store_true",
        help="simulate a stack that enables fair sharing with classical preemption instead (said in every output)",
    )
    p.add_argument(
        "--eviction-delay",
        type=float,
        help="seconds from a preemption until the victim's quota is released (default: the trace's "
        "evictionDelaySeconds, else 0)",
    )
    p.add_argument(
        "--requeue-batch",
        type=float,
        help="seconds from a release until parked workloads are back in their queues, Kueue's "
        "requeueBatchPeriod (default: the trace's requeueBatchSeconds, else 1; 0: at once, the instant view)",
    )
    p.add_argument("--build-dir", type=Path, default=PROJECT_DIR / "build", help=argparse.SUPPRESS)
    return p


def _trace(args: argparse.Namespace, model: Any) -> Trace:
    if args.trace is not None:
        return load_trace(args.trace)
    return default_trace(model, args.stack, args.profile)


def _simulate(
    args: argparse.Namespace, model: Any, trace: Trace, fleet: Fleet | None = None
) -> dict[str, Any]:
    return simulate(
        model,
        trace,
        provisioning_delay=args.provisioning_delay,
        eviction_delay=args.eviction_delay,
        requeue_batch=args.requeue_batch,
        ignore_fair_sharing=args.ignore_fair_sharing,
        fleet=fleet,
    )


def _simulate_or_reason(args: argparse.Namespace, model: Any, trace: Trace) -> dict[str, Any] | str:
    try:
        return _simulate(args, model, trace)
    except NotModelledError as error:
        return f"not simulated: {error}"


def _compare(args: argparse.Namespace, model: Any) -> None:
    """The change per queue: Kueue ClusterQueues and KAI queues, each where either side has them."""
    if args.manifests is not None:
        raise WhatIfError("--base needs --stack (a stack's history), not --manifests")
    base_model = model_at(args.base, args.stack)
    sides = (model, base_model)
    queues = sorted({cq.name for m in sides for cq in m.cluster_queues()})
    kai = [m for m in sides if has_kai_queues(m)]
    if not queues and not kai:
        print("no Kueue ClusterQueues or KAI queues at either side: nothing to compare")
        return
    lines: list[str] = []
    if queues:
        trace = _trace(args, model)
        head = _simulate_or_reason(args, model, trace)
        base = _simulate_or_reason(args, base_model, trace)
        lines += diff_lines(args.stack, args.base, base, head, queues)
    if kai:
        kai_trace = (
            load_trace(args.trace)
            if args.trace is not None
            else default_kai_trace(kai[0], args.stack, args.profile)
        )
        if lines:
            lines.append("")
        lines += kai_compare_lines(args.stack, args.base, base_model, model, kai_trace)
    print("\n".join(lines))


def _print(result: dict[str, Any]) -> None:
    print("\n".join(queue_table(result["queues"])))
    if "multiKueue" in result:
        print("\n" + "\n".join(multikueue_lines(result)))
    starved = starved_lines(result["queues"])
    if starved:
        print("\nnever admitted:\n" + "\n".join(starved))
    for note in result["notes"]:
        print(f"note: {note}")


def _run_kai(args: argparse.Namespace, model: Any) -> int:
    """A stack whose queues are KAI Scheduler's (:mod:`whatif.kai`)."""
    trace = (
        load_trace(args.trace)
        if args.trace is not None
        else default_kai_trace(model, args.stack, args.profile)
    )
    result = simulate_kai(model, trace)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    print("\n".join(kai_table(result["queues"])))
    starved = kai_starved_lines(result["queues"])
    if starved:
        print("\nnever admitted:\n" + "\n".join(starved))
    for note in result["notes"]:
        print(f"note: {note}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        for option in ("provisioning_delay", "eviction_delay", "requeue_batch"):
            value = getattr(args, option)
            if value is not None and not value >= 0:  # NaN too
                flag = "--" + option.replace("_", "-")
                raise WhatIfError(f"{flag}: got {value:g}, expected a number of seconds >= 0")
        if args.base:
            check_base(args.base)
        found: Fleet | None = None
        if args.manifests is not None:
            model = from_manifests(args.manifests)
        else:
            records = stack_records(args.stack, build_dir=args.build_dir, fresh=args.fresh or bool(args.base))
            model = StackModel.from_plain(r[:4] for r in records)
            found = None if args.base else fleet(records)
        if args.base:
            _compare(args, model)
            return 0
        if not model.cluster_queues():
            if has_kai_queues(model):
                return _run_kai(args, model)
            print("no Kueue ClusterQueues or KAI queues in these objects: nothing to simulate")
            return 0
        trace = _trace(args, model)
        result = _simulate(args, model, trace, found)
    except NotSettledError as error:
        print(f"whatif: {error}", file=sys.stderr)
        return 3
    except WhatIfError as error:
        print(f"whatif: {error}", file=sys.stderr)
        return 2
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    _print(result)
    return 0
