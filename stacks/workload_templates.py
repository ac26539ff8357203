"""The built-in workload catalogue: named presets for ``gpu-batch:workloads[].template``.

A template is nothing but config a user could have written: the keys of a workload entry, in
the stack file's own camelCase spelling.  The entry's own keys are merged over it (mappings
key by key, lists and scalars replaced), and the result is validated like any other entry, so a
template can never produce something a hand-written entry could not.

Each preset reproduces an upstream sample the seed scenarios use:

* ``pytorch-text-classifier``: ray-project/kuberay ray-operator/config/samples/
  pytorch-text-classifier/ray-job.pytorch-distributed-training.yaml (the seed 000 RayJob;
  tests/fixtures/seeds/kueue-provisioning.yaml): one head with 1 GPU, 2 CPU, 8G.
* ``kai-ray-cluster``: ray-cluster.kai-scheduler.yaml (seed 002): a CPU head and two workers.
* ``kai-half-gpu-cluster``: ray-cluster.kai-gpu-sharing.yaml (seed 002): two workers sharing
  one GPU through KAI's ``gpu-fraction: "0.5"`` pod annotation.

The two KAI presets run Ray 2.52.0 (the samples use 2.50.1) so that their clusters get KubeRay's
token auth, which needs Ray 2.52.0 or later (issue 27; components.workloads.token_auth).  The
text classifier keeps the sample's ray-ml 2.46 image (no ray-ml image of 2.52 is pinned here) and
so runs without token auth: only the NetworkPolicies keep other teams from its head.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

TEMPLATES: Final[Mapping[str, Mapping[str, Any]]] = {
    "pytorch-text-classifier": {
        "kind": "RayJob",
        "image": "rayproject/ray-ml:2.46.0.0e19ea-py311-gpu",
        "rayVersion": "2.46.0",
        "entrypoint": "python ray-operator/config/samples/pytorch-text-classifier/"
        "fine-tune-pytorch-text-classifier.py",
        "runtimeEnvYaml": (
            "pip:\n"
            "  - numpy\n"
            "  - datasets\n"
            "  - transformers>=4.19.1\n"
            "  - pytorch-lightning==1.8.5\n"
            'working_dir: "https://github.com/ray-project/kuberay/archive/master.zip"\n'
        ),
        "shutdownAfterJobFinishes": True,
        "head": {"cpu": "2", "memory": "8G", "gpu": 1, "rayStartParams": {"dashboard-host": "0.0.0.0"}},
    },
    "kai-ray-cluster": {
        "kind": "RayCluster",
        "image": "rayproject/ray:2.52.0",
        "rayVersion": "2.52.0",
        "head": {"cpu": "1", "memory": "2Gi"},
        "workerGroups": [
            {"groupName": "worker", "replicas": 2, "minReplicas": 2, "cpu": "1", "memory": "1Gi"}
        ],
    },
    "kai-half-gpu-cluster": {
        "kind": "RayCluster",
        "image": "rayproject/ray:2.52.0",
        "rayVersion": "2.52.0",
        "head": {"cpu": "1", "memory": "2Gi"},
        "workerGroups": [
            {
                "groupName": "shared-gpu",
                "replicas": 2,
                "minReplicas": 2,
                "cpu": "1",
                "memory": "2Gi",
                "gpuFraction": 0.5,
            }
        ],
    },
}


def merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """``override`` over ``base``: mappings merged key by key, anything else replaced."""
    merged = copy.deepcopy(dict(base))
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged
