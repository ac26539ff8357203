"""The seed scenarios, as the seeds write them, pass every capacity/KAI/wiring/SkyPilot rule.

Manifests come from ``tests/fixtures/seeds`` unchanged (v1beta1 where the seeds say so) and are
registered as ``pulumi_kubernetes`` would (``preview.manifest_resources``). What the seeds set on
the command line rather than in manifests -- chart values, node pools -- is added exactly as the
seed text gives it: ``global.gpuSharing=true`` and ``batchScheduler.name=kai-scheduler`` for KAI;
the two SkyPilot releases of the two-team guide (team2 without ingress-nginx at ``/team2``, each
config labelling pods with its own team's queue); the ``gpu-node-pool`` (g2-standard-4, 1 x L4,
0..10, queued provisioning) and the CPU pool of the Kueue + ProvisioningRequest guide.

Each scenario is also shown to be *judged*: one seed-described mistake makes it fail.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from gpu_batch_policy.rules.installs import wiring as rules_wiring
from gpu_batch_policy.rules.kai import queues as rules_kai
from gpu_batch_policy.rules.kueue import capacity as rules_capacity
from gpu_batch_policy.rules.tenancy import skypilot as rules_skypilot
from pulumi_policy import EnforcementLevel

from preview.manifest_resources import records_from_manifests
from tests.policies.workload_stack import (
    Registration,
    gke_cluster,
    helm_release,
    kai_release,
    kuberay_release,
    node_pool,
    run,
)

SEEDS = Path(__file__).resolve().parents[1] / "fixtures" / "seeds"
MY_POLICIES = [
    *rules_kai.POLICIES,
    *rules_capacity.POLICIES,
    *rules_wiring.POLICIES,
    *rules_skypilot.POLICIES,
]


def seed(*names: str) -> list[Registration]:
    docs: list[Any] = []
    for name in names:
        docs.extend(yaml.safe_load_all((SEEDS / name).read_text()))
    return [
        (r.type, r.outputs, r.urn, r.name) for r in records_from_manifests(docs, stack="dev", project="seeds")
    ]


def skypilot_server(team: str, queue: str, **values: Any) -> Registration:
    """``helm upgrade --install skypilot-<team> skypilot/skypilot-nightly`` with the team's config."""
    config = {"kubernetes": {"pod_config": {"metadata": {"labels": {"kueue.x-k8s.io/queue-name": queue}}}}}
    return helm_release(
        f"skypilot-{team}",
        "skypilot-nightly",
        {
            "apiService": {"config": yaml.safe_dump(config)},
            "ingress": {"authCredentials": "user:hash"},
            **values,
        },
        namespace=team,
    )


def dev_pools() -> list[Registration]:
    return [
        gke_cluster("kuberay-gpu-cluster"),
        node_pool(
            "default-pool",
            machine_type="e2-standard-4",
            accelerator=None,
            max_nodes=1,
            cluster="kuberay-gpu-cluster",
        ),
        node_pool("gpu-node-pool", max_nodes=10, queued=True, cluster="kuberay-gpu-cluster"),
    ]


def skypilot_servers(team1_queue: str = "skypilot-local-queue-team1") -> list[Registration]:
    second = {"ingress-nginx": {"enabled": False}, "ingress": {"path": "/team2", "authCredentials": "u:h"}}
    return [
        skypilot_server("team1", team1_queue),
        skypilot_server("team2", "skypilot-local-queue-team2", **second),
    ]


SCENARIOS: dict[str, list[Registration]] = {
    "kueue-provisioning": [*seed("kueue-provisioning.yaml"), *dev_pools(), kuberay_release(None)],
    "kueue-priority": [
        *seed("kueue-provisioning.yaml", "kueue-priority.yaml"),
        *dev_pools(),
        kuberay_release(None),
    ],
    "kai": [*seed("kai.yaml"), kai_release(gpu_sharing=True), kuberay_release("kai-scheduler")],
    "skypilot-shared-queue": [*seed("skypilot-shared-queue.yaml"), *skypilot_servers()],
    "skypilot-cohort": [*seed("skypilot-cohort.yaml"), *skypilot_servers()],
    # No chart values at all: the wiring rules cannot check, and must not fail.
    "kai-manifests-only": seed("kai.yaml"),
    "skypilot-manifests-only": seed("skypilot-cohort.yaml"),
}


def mandatory_findings(resources: list[Registration]) -> list[str]:
    found: list[str] = []
    for policy in MY_POLICIES:
        if policy.enforcement_level != EnforcementLevel.MANDATORY:
            continue
        found.extend(f"{policy.name}: {v}" for v in run(policy, resources).violations)
    return found


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_seed_scenario_has_no_mandatory_findings(name: str) -> None:
    assert mandatory_findings(SCENARIOS[name]) == []


def test_kai_seed_counts_the_half_gpu_gang_as_one_gpu() -> None:
    """A team-a GPU limit of 1 still fits the 2 x 0.5 workers; a limit of 0.5 does not."""
    resources = SCENARIOS["kai"]
    queue = next(r for r in resources if r[3] == "team-a")
    limited = yaml.safe_load(yaml.safe_dump(queue[1]))
    limited["spec"]["resources"]["gpu"].update(quota=0, limit=1)
    swapped = [(*queue[:1], limited, *queue[2:]) if r is queue else r for r in resources]
    assert mandatory_findings(swapped) == []
    limited["spec"]["resources"]["gpu"]["limit"] = 0.5
    assert any("needs 1 GPUs" in f for f in mandatory_findings(swapped))


@pytest.mark.parametrize(
    ("name", "mistake", "expected"),
    [
        (
            "kai",
            lambda rs: [r for r in rs if "kai-scheduler" not in r[3]] + [kai_release(gpu_sharing=False)],
            "gpuSharing",
        ),
        (
            "kai",
            lambda rs: [r for r in rs if "kuberay" not in r[3]] + [kuberay_release(None)],
            "batchScheduler.name",
        ),
        # The guide's typo: team1's server installed with skypilot-team2-config.yaml.
        (
            "skypilot-shared-queue",
            lambda rs: (
                [r for r in rs if "skypilot-team" not in r[3]]
                + skypilot_servers("skypilot-local-queue-team2")
            ),
            "another team",
        ),
        (
            "kueue-provisioning",
            lambda rs: (
                [r for r in rs if r[3] != "gpu-node-pool"]
                + [node_pool("gpu-node-pool", max_nodes=10, queued=False, cluster="kuberay-gpu-cluster")]
            ),
            "queued provisioning",
        ),
    ],
)
def test_seed_scenario_mistakes_are_caught(name: str, mistake: Any, expected: str) -> None:
    findings = mandatory_findings(mistake(SCENARIOS[name]))
    assert any(expected in f for f in findings), findings
