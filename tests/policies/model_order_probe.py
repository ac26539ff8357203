"""Run every pack policy on one program sent in a shuffled registration order; print the outcome.

``python -m tests.policies.model_order_probe <seed>``: the resources of :func:`program` go to the
pack in an order shuffled by ``seed`` (the engine sends them in registration order, which varies
between runs of one program), and the process's ``PYTHONHASHSEED`` is the caller's.  The output is
JSON: per policy, its violation messages in the order reported and its "cannot check yet" text.
``tests/policies/test_model_order.py`` compares two such runs.
"""

from __future__ import annotations

import json
import random
import sys

from tests.policies.pack_harness import UNKNOWN, Res, run_all
from tests.policies.pack_objects import cluster_queue, kueue_release, local_queue, namespace

TEAMS = 12


def program() -> list[Res]:
    """Objects whose findings name several objects at once, or "the first" of several.

    - BestEffortFIFO ClusterQueues that preempt, on Kueue 0.19.2: the known-bug advisory names
      the first three and counts the rest;
    - LocalQueues whose ClusterQueue is unknown until apply: one "cannot check yet" listing each;
    - LocalQueues naming ClusterQueues that do not exist, and flavors that do not exist.
    """
    release = kueue_release()
    release.props["version"] = "0.19.2"
    out = [release]
    for i in range(TEAMS):
        ns = f"team-{i:02d}"
        out.append(namespace(ns))
        out.append(
            cluster_queue(
                f"cq-{i:02d}",
                queueingStrategy="BestEffortFIFO",
                preemption={"withinClusterQueue": "LowerPriority"},
                namespaceSelector={"matchLabels": {"kubernetes.io/metadata.name": ns}},
            )
        )
        out.append(local_queue(f"lq-{i:02d}", ns, f"cq-{i:02d}"))
        out.append(local_queue(f"unknown-{i:02d}", ns, UNKNOWN))
        out.append(local_queue(f"dangling-{i:02d}", ns, f"missing-{i:02d}"))
    return out


def outcome(seed: int) -> dict[str, dict[str, object]]:
    resources = program()
    random.Random(seed).shuffle(resources)
    return {
        name: {"violations": run.messages, "cannotCheck": run.cannot_check}
        for name, run in sorted(run_all(resources).items())
        if run.violations or run.cannot_check
    }


if __name__ == "__main__":
    print(json.dumps(outcome(int(sys.argv[1])), indent=1, sort_keys=True))
