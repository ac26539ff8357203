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

Every preset runs Ray 2.52.0 so that its cluster gets KubeRay's token auth, which needs Ray
2.52.0 or later (issue 27; components.workloads.token_auth); the KAI samples use 2.50.1.  The text
classifier's sample image, ``rayproject/ray-ml:2.46.0...-gpu``, has no 2.52 successor: Ray
stopped the ray-ml images (kuberay v1.7.0's last sample of one is
``ray-ml:2.49.2.deprecated-py311-gpu``, ray-service.text-summarizer.yaml).  It runs on Ray's CUDA
image ``rayproject/ray:2.52.0-gpu`` instead (the tag is the base image of public Dockerfiles;
not pulled here), and gets PyTorch from its runtime environment the way kuberay v1.7.0's
pytorch-mnist sample on ``rayproject/ray:2.52.0`` does (``pip: [torch, ...]``).  That the
sample's pinned pytorch-lightning 1.8.5 installs under that image's Python was not verified here.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

TEMPLATES: Final[Mapping[str, Mapping[str, Any]]] = {
    "pytorch-text-classifier": {
        "kind": "RayJob",
        "image": "rayproject/ray:2.52.0-gpu",
        "rayVersion": "2.52.0",
        "entrypoint": "python ray-operator/config/samples/pytorch-text-classifier/"
        "fine-tune-pytorch-text-classifier.py",
        "runtimeEnvYaml": (
            "pip:\n"
            "  - torch\n"
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
