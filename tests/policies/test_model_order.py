"""The pack's model reads resources in one order, whatever order the engine sends them in.

``AnalyzeStack`` sends resources in registration order, which varies between runs of the same
program; before ``model.canonical_order`` the model kept it, and every rule that names "the
first" objects, lists them, or joins its "cannot check yet" items followed it.  Two pack runs of
one program, each in its own process with its own ``PYTHONHASHSEED`` and its own registration
order (``tests/policies/model_order_probe.py``), now report the same text.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

from gpu_batch_policy.facts.model import StackModel

from tests.policies.model_order_probe import TEAMS, program
from tests.stack_runner import ROOT


def _probe(hash_seed: str, order_seed: int) -> dict[str, dict[str, object]]:
    env = dict(
        os.environ, PYTHONHASHSEED=hash_seed, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "policies")])
    )
    done = subprocess.run(
        [sys.executable, "-m", "tests.policies.model_order_probe", str(order_seed)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found: dict[str, dict[str, object]] = json.loads(done.stdout)
    return found


def test_two_processes_with_other_hash_seeds_and_orders_report_the_same_text() -> None:
    first, second = _probe("1", 1), _probe("2", 2)
    assert first == second
    # Not vacuous: findings that name the first objects of many, list them, or join them.
    bug = str(first["known-bug-in-pinned-version"]["violations"])
    assert f"and {TEAMS - 3} more" in bug
    unknown = str(first["kueue-localqueue-target-exists"]["cannotCheck"])
    assert unknown.count("spec.clusterQueue is unknown until apply") == TEAMS
    assert len(first["kueue-localqueue-target-exists"]["violations"]) == TEAMS  # type: ignore[arg-type]


def test_the_model_order_is_by_urn_whatever_the_registration_order() -> None:
    items = [(r.type, r.props, r.urn, r.name) for r in program()]
    orders = []
    for seed in (1, 2, 3):
        shuffled = list(items)
        random.Random(seed).shuffle(shuffled)
        orders.append([r.urn for r in StackModel.from_plain(shuffled, render=False).resources])
    assert orders[0] == orders[1] == orders[2] == sorted(orders[0])
