"""``python -m whatif.status``: why is my job pending, and when will it start?

Reads a live cluster (``--kubeconfig`` / ``--context``, only what the caller may read) or a
``kubectl get -o yaml`` dump (``--dump``), and prints per pending Workload of the namespaces
Kueue's own reason, what would have to change and an ETA range replayed with the what-if
simulator.  Exit codes: 0 answered; 2 bad input (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from whatif.errors import WhatIfError
from whatif.status.collect import collect
from whatif.status.objects import timestamp
from whatif.status.reads import DumpReader, KubeReader, Reader, flatten
from whatif.status.render import summary, table, to_json
from whatif.status.replay import Inputs, Item, Profile, Range
from whatif.status.report import Report, build


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m whatif.status", description=__doc__)
    p.add_argument(
        "--dump", type=Path, help="a kubectl get -o yaml List (or many documents) instead of a cluster"
    )
    p.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config)")
    p.add_argument("--context", help="kubeconfig context")
    p.add_argument(
        "-n",
        "--namespace",
        action="append",
        help="your team's namespace (repeatable; default: the context's)",
    )
    declared = p.add_mutually_exclusive_group()
    declared.add_argument(
        "--stack",
        help="the stack: its declared queues where yours are not visible, its load profile's durations",
    )
    declared.add_argument(
        "--manifests",
        type=Path,
        help="YAML of the declared Kueue objects (build/<stack>/manifests.yaml, or the platform team's "
        "queue files) where yours are not visible",
    )
    p.add_argument("--durations", type=Path, help="YAML: <namespace>/<name>: seconds or [low, high]")
    p.add_argument(
        "--provisioning-delay", help="DWS provisioning seconds, or LOW,HIGH (default: the stack's profile)"
    )
    p.add_argument("--now", help="RFC 3339 time the state is of (default: now; a dump: its newest timestamp)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print JSON")
    out.add_argument("--summary", action="store_true", help="print one line for a chat message")
    return p


def _fail(where: str, value: Any, expected: str) -> WhatIfError:
    return WhatIfError(f"{where}: got {value!r}, expected {expected}")


def parse_range(raw: Any, where: str) -> Range:
    if isinstance(raw, str) and "," in raw:
        raw = raw.split(",")
    values = raw if isinstance(raw, list) else [raw]
    try:
        nums = [float(v) for v in values]
    except (TypeError, ValueError):
        raise _fail(where, raw, "seconds, or [low, high]") from None
    if len(nums) not in (1, 2) or any(not n >= 0 for n in nums) or nums[0] > nums[-1]:
        raise _fail(where, raw, "seconds >= 0, or [low, high] with low <= high")
    return (nums[0], nums[-1])


def load_durations(path: Path) -> dict[str, Range]:
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise WhatIfError(f"--durations {path}: cannot read it ({error})") from None
    if not isinstance(doc, dict):
        raise _fail(f"--durations {path}", doc, "a mapping of <namespace>/<name> to seconds or [low, high]")
    out = {}
    for key, raw in doc.items():
        if not isinstance(key, str) or "/" not in key:
            raise _fail(f"--durations {path}", key, "<namespace>/<name>")
        out[key] = parse_range(raw, f"--durations {path} {key}")
    return out


def _dump_objects(path: Path) -> list[dict[str, Any]]:
    try:
        return flatten(yaml.safe_load_all(path.read_text()))
    except OSError as error:
        raise WhatIfError(f"--dump {path}: cannot read it ({error.strerror})") from None
    except yaml.YAMLError as error:
        raise WhatIfError(f"--dump {path}: not valid YAML ({str(error).splitlines()[0]})") from None


def newest_time(objects: list[dict[str, Any]]) -> float:
    """The newest timestamp of a dump: the moment it shows, at the earliest."""
    found = [0.0]
    for o in objects:
        meta = o.get("metadata") or {}
        found.append(timestamp(meta.get("creationTimestamp")) or 0.0)
        for c in (o.get("status") or {}).get("conditions") or []:
            found.append(timestamp(c.get("lastTransitionTime")) or 0.0)
    return max(found)


def _manifests(path: Path) -> list[Item]:
    """The objects of a YAML file as declared items (``whatif.sources.manifests_items``, as
    ``python -m whatif --manifests`` reads them)."""
    from whatif.sources import manifests_items

    try:
        text = path.read_text()
    except OSError as error:
        raise WhatIfError(f"--manifests {path}: cannot read it ({error.strerror})") from None
    return manifests_items(text, f"--manifests {path}")


def _stack(stack: str | None) -> tuple[list[Item], Profile]:
    if stack is None:
        return [], Profile()
    from whatif.profiles import load_profile, profile_path
    from whatif.sources import stack_records

    items: list[Item] = [r[:4] for r in stack_records(stack)]
    path = profile_path(stack)
    return items, Profile.from_doc(load_profile(path) if path.exists() else None)


def run(args: argparse.Namespace, reader: Reader | None = None) -> Report:
    """The report for ``args``; ``reader``: answer the reads with it (tests: a Role in front)."""
    objects: list[dict[str, Any]] = []
    if reader is None:
        if args.dump is not None:
            objects = _dump_objects(args.dump)
            reader = DumpReader(objects)
        else:
            reader = KubeReader(args.kubeconfig, args.context)
    namespaces = args.namespace or _default_namespaces(args, objects)
    if args.now:
        now = timestamp(args.now)
        if now is None:
            raise _fail("--now", args.now, "an RFC 3339 time such as 2026-11-29T01:00:00Z")
    elif args.dump is not None:
        now = newest_time(objects)
    else:
        now = time.time()
    snap = collect(reader, namespaces)
    items, profile = _stack(args.stack)
    declared_by = "the stack"
    if args.manifests is not None:
        items, declared_by = _manifests(args.manifests), f"--manifests {args.manifests}"
    durations = load_durations(args.durations) if args.durations else None
    provisioning = (
        parse_range(args.provisioning_delay, "--provisioning-delay") if args.provisioning_delay else None
    )
    return build(snap, now, Inputs(items, profile, durations or {}, provisioning, declared_by))


def _default_namespaces(args: argparse.Namespace, objects: list[dict[str, Any]]) -> list[str]:
    if args.dump is None:
        from kubernetes.config.config_exception import ConfigException

        try:
            return [KubeReader.default_namespace(args.kubeconfig, args.context)]
        except (ConfigException, OSError) as error:
            raise WhatIfError(f"--kubeconfig {args.kubeconfig or '(default)'}: {error}") from None
    found = sorted(
        {
            str((o.get("metadata") or {}).get("namespace"))
            for o in objects
            if o.get("kind") == "LocalQueue" and (o.get("metadata") or {}).get("namespace")
        }
    )
    if not found:
        raise WhatIfError(f"--dump {args.dump}: no LocalQueue in it; pass --namespace")
    return found


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        report = run(args)
    except WhatIfError as error:
        print(f"whatif.status: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(to_json(report), indent=1))
    elif args.summary:
        print(summary(report))
    else:
        print("\n".join(table(report)))
    return 0
