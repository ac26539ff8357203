"""Entry point the analyzer host runs (``python -m pulumi.policy <engine> .`` with cwd=policies).

Only builds the PolicyPack: its constructor starts the gRPC server and blocks forever, so nothing
may import this file (tests import ``gpu_batch_policy`` instead).  Rules default to MANDATORY;
per-stack levels come from ``--policy-pack-config policies/config.<stack>.json``.
"""

import gc

from gpu_batch_policy.runtime import sdk_speedups, servicer_guard
from gpu_batch_policy.runtime.registry import ALL_POLICIES
from pulumi_policy import EnforcementLevel, PolicyPack

# The SDK turns every request into many short-lived objects; with thousands of resources the
# default GC thresholds spend a third of the run re-scanning the long-lived heap (48 s -> 34.5 s
# at 1,000 teams with this).  Freeze what is loaded now and collect young objects less often.
gc.collect()
gc.freeze()
gc.set_threshold(100_000, 50, 100)
# Decode each resource once per analyzer call instead of once per stack policy (see the module).
sdk_speedups.install()
# Undecodable requests and secrets in messages are handled around every call (see the module).
servicer_guard.install()

PolicyPack(
    name="gpu-batch",
    policies=ALL_POLICIES,
    enforcement_level=EnforcementLevel.MANDATORY,
    description="Quota, gang-scheduling and wiring invariants for GKE + Kueue / KAI / KubeRay / SkyPilot stacks.",
)
