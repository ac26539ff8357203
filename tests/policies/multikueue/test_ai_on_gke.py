"""Google's published MultiKueue + DWS tutorial, fetched as published, is caught for its v1beta1 shapes.

ai-on-gke/tutorials-and-examples ``workflow-orchestration/multikueue-dws/dws-multi.yaml`` (the
manager) and ``dws-multi-worker.yaml`` (each worker) are read at test time from a git mirror of
that repository (``$GPU_BATCH_AI_ON_GKE_GIT``, default ``../.mirror/ai-on-gke+tutorials-and-examples/repo``
beside this checkout); nothing of it is copied here.  Absent mirror: the test is skipped, saying so.
"""

from __future__ import annotations

from typing import Any

import yaml

from tests.policies.multikueue.fixtures import MANAGER, WORKERS
from tests.policies.pack_harness import Res, policy, run
from tests.upstream import pinned, upstream_file

REPO = "ai-on-gke/tutorials-and-examples"
TUTORIAL = "workflow-orchestration/multikueue-dws"


def _published(name: str) -> list[dict[str, Any]]:
    text = upstream_file(REPO, pinned(REPO), f"{TUTORIAL}/{name}", env="GPU_BATCH_AI_ON_GKE_GIT")
    return [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]


def _registrations(docs: list[dict[str, Any]], provider: str, cluster: str) -> list[Res]:
    """As a program applying the file would register them: one resource per document."""
    out = []
    for i, doc in enumerate(docs):
        group_version = doc["apiVersion"] if "/" in doc["apiVersion"] else f"core/{doc['apiVersion']}"
        out.append(Res(f"kubernetes:{group_version}:{doc['kind']}", f"{cluster}-{i}", doc, provider=provider))
    return out


def test_published_manifests_are_caught_for_v1beta1() -> None:
    manager = _published("dws-multi.yaml")
    worker = _published("dws-multi-worker.yaml")
    resources = [
        *_registrations(manager, MANAGER, "manager"),
        *(r for name, urn in WORKERS.items() for r in _registrations(worker, urn, name)),
    ]
    multikueue = [
        d
        for d in manager
        if d["kind"] in ("MultiKueueCluster", "MultiKueueConfig")
        or (d["kind"] == "AdmissionCheck" and d["spec"]["controllerName"] == "kueue.x-k8s.io/multikueue")
    ]
    assert multikueue and all(d["apiVersion"] == "kueue.x-k8s.io/v1beta1" for d in multikueue)
    result = run(policy("multikueue-v1beta1"), resources)
    assert len(result.violations) == len(multikueue)
    assert sum("spec.clusterSource.kubeConfig" in m for m in result.messages) == sum(
        d["kind"] == "MultiKueueCluster" for d in multikueue
    )
    # The worker Secrets are created by the tutorial's script, not its manifests: not in this stack.
    secrets = run(policy("multikueue-worker-kubeconfig"), resources)
    assert secrets.clean and secrets.cannot_check and "not in this stack" in secrets.cannot_check
