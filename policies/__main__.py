"""Entry point the analyzer host runs (``python -m pulumi.policy <engine> .`` with cwd=policies).

Only builds the PolicyPack: its constructor starts the gRPC server and blocks forever, so nothing
may import this file (tests import ``gpu_batch_policy`` instead).  Rules default to MANDATORY;
per-stack levels come from ``--policy-pack-config policies/config.<stack>.json``.
"""

from gpu_batch_policy.registry import ALL_POLICIES
from pulumi_policy import EnforcementLevel, PolicyPack

PolicyPack(
    name="gpu-batch",
    policies=ALL_POLICIES,
    enforcement_level=EnforcementLevel.MANDATORY,
    description="Quota, gang-scheduling and wiring invariants for GKE + Kueue / KAI / KubeRay / SkyPilot stacks.",
)
