"""GKE topology labels and the Kueue ``Topology`` levels for each GPU family.

GKE labels the nodes of its dense GPU machine types with ``cloud.google.com/gce-topology-block``,
``-subblock`` and ``-host``; Kueue's TAS builds its domains from those labels.  The levels are the
ones GoogleCloudPlatform/cluster-toolkit v1.95.0 declares in each blueprint's
``kueue-configuration.yaml.tftpl``:

- ``gke-default`` (block, subblock, host, ``kubernetes.io/hostname``): ``examples/gke-a3-highgpu``,
  ``gke-a3-megagpu``, ``gke-a3-ultragpu`` and ``gke-a4``;
- ``a4x-default`` (block, subblock, ``cloud.google.com/gke-nodepool``, host, hostname): ``examples/gke-a4x``,
  where one node pool is one NVLink domain (72 GPUs, 18 ``a4x-highgpu-4g`` nodes).

A machine type outside this table never gets the ``gce-topology-*`` labels, so a Topology using them
has no domain on its nodes and Kueue reports "no topology domains at level: <label>"
(kubernetes-sigs/kueue v0.19.2 ``pkg/cache/scheduler/tas_flavor_snapshot.go``
``findLevelWithFitDomains``).
"""

from __future__ import annotations

from typing import Final

BLOCK: Final = "cloud.google.com/gce-topology-block"
SUBBLOCK: Final = "cloud.google.com/gce-topology-subblock"
HOST: Final = "cloud.google.com/gce-topology-host"
HOSTNAME: Final = "kubernetes.io/hostname"
NODEPOOL: Final = "cloud.google.com/gke-nodepool"

GKE_TOPOLOGY_LABELS: Final = (BLOCK, SUBBLOCK, HOST)
"""The labels only GKE's dense machine types carry."""

DEFAULT_TOPOLOGY: Final = "gke-default"
A4X_TOPOLOGY: Final = "a4x-default"

TOPOLOGIES: Final[dict[str, tuple[str, ...]]] = {
    DEFAULT_TOPOLOGY: (BLOCK, SUBBLOCK, HOST, HOSTNAME),
    A4X_TOPOLOGY: (BLOCK, SUBBLOCK, NODEPOOL, HOST, HOSTNAME),
}

TOPOLOGY_OF_MACHINE: Final[dict[str, str]] = {
    "a3-highgpu-8g": DEFAULT_TOPOLOGY,
    "a3-megagpu-8g": DEFAULT_TOPOLOGY,
    "a3-ultragpu-8g": DEFAULT_TOPOLOGY,
    "a4-highgpu-8g": DEFAULT_TOPOLOGY,
    "a4x-highgpu-4g": A4X_TOPOLOGY,
}
"""Machine types GKE labels with the ``gce-topology-*`` labels, and the Topology cluster-toolkit uses."""

A4X_NVLINK_GPUS: Final = 72
"""GPUs in one A4X NVLink domain (one node pool of 18 x 4 GB200), the ``gke-nodepool`` level."""

LEVEL_NAMES: Final[dict[str, str]] = {
    "block": BLOCK,
    "subblock": SUBBLOCK,
    "host": HOST,
    "hostname": HOSTNAME,
    "nodepool": NODEPOOL,
}
"""Short names the stack config uses for a level."""


def labelled(machine_type: str) -> bool:
    """GKE gives this machine type's nodes the ``gce-topology-*`` labels."""
    return machine_type in TOPOLOGY_OF_MACHINE
