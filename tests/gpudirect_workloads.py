"""The 2 x 8-GPU RayJob the gpudirect example stack's tests submit, with a topology request."""

from __future__ import annotations

from typing import Any


def ray_gang(**topology: Any) -> list[dict[str, Any]]:
    """``gpu-batch:workloads`` holding one RayJob: two 8-GPU workers under ``topology``."""
    return [
        {
            "name": "train",
            "kind": "RayJob",
            "team": "training",
            "scheduler": "kueue",
            "image": "rayproject/ray:2.46.0-gpu",
            "entrypoint": "python train.py",
            "head": {"cpu": "2", "memory": "8Gi"},
            "workerGroups": [
                {
                    "groupName": "gpu",
                    "replicas": 2,
                    "cpu": "100",
                    "memory": "900Gi",
                    "gpu": 8,
                    "topology": topology,
                }
            ],
        }
    ]
