"""GKE clusters and node pools (pulumi_gcp wire names) as the capacity and DWS rules need them.

Field names are pulumi_gcp 10.x wire names (kueue.md §8 "pulumi_gcp 10.2.0 argument names"):
``autoscaling.{minNodeCount,maxNodeCount,totalMinNodeCount,totalMaxNodeCount,locationPolicy}``,
``queuedProvisioning.enabled``, ``management.autoRepair`` (GKE default: on),
``nodeConfig.{machineType,guestAccelerators,reservationAffinity,flexStart,spot,preemptible,
taints,labels}``, ``placementPolicy.type``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...primitives.values import Unknown, as_bool, as_int, as_list, as_str, dig, str_map
from .base import Resource

# GPUs per node for accelerator-optimised machine types, where GKE attaches the GPUs implied by
# the machine type (kueue.md §8 table, from cluster-toolkit's gpu-definition module).
MACHINE_TYPE_GPUS: dict[str, tuple[str, int]] = {
    **{f"g2-standard-{n}": ("nvidia-l4", 1) for n in (4, 8, 12, 16, 32)},
    "g2-standard-24": ("nvidia-l4", 2),
    "g2-standard-48": ("nvidia-l4", 4),
    "g2-standard-96": ("nvidia-l4", 8),
    "a2-highgpu-1g": ("nvidia-tesla-a100", 1),
    "a2-highgpu-2g": ("nvidia-tesla-a100", 2),
    "a2-highgpu-4g": ("nvidia-tesla-a100", 4),
    "a2-highgpu-8g": ("nvidia-tesla-a100", 8),
    "a2-megagpu-16g": ("nvidia-tesla-a100", 16),
    "a2-ultragpu-1g": ("nvidia-a100-80gb", 1),
    "a2-ultragpu-2g": ("nvidia-a100-80gb", 2),
    "a2-ultragpu-4g": ("nvidia-a100-80gb", 4),
    "a2-ultragpu-8g": ("nvidia-a100-80gb", 8),
    "a3-highgpu-1g": ("nvidia-h100-80gb", 1),
    "a3-highgpu-2g": ("nvidia-h100-80gb", 2),
    "a3-highgpu-4g": ("nvidia-h100-80gb", 4),
    "a3-highgpu-8g": ("nvidia-h100-80gb", 8),
    "a3-megagpu-8g": ("nvidia-h100-mega-80gb", 8),
    "a3-ultragpu-8g": ("nvidia-h200-141gb", 8),
    "a4-highgpu-8g": ("nvidia-b200", 8),
    "a4x-highgpu-4g": ("nvidia-gb200", 4),
}

# GKE node labels (kueue.md §8 "Node labels"; flex-start label from the DWS how-to).
NODEPOOL_LABEL = "cloud.google.com/gke-nodepool"
ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
SPOT_LABEL = "cloud.google.com/gke-spot"
FLEX_START_LABEL = "cloud.google.com/gke-flex-start"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
QUEUED_TAINT_KEY = "cloud.google.com/gke-queued"

# A GKE zone ends in "-<letter>" (us-west1-b); a region does not (us-west1).
_ZONE = re.compile(r"^[a-z]+-[a-z]+\d+-[a-z]$")
# GKE picks three zones of the region for a regional cluster without node locations.
REGIONAL_DEFAULT_ZONES = 3


def is_zone(location: str) -> bool:
    return bool(_ZONE.match(location))


@dataclass(frozen=True)
class GkeCluster:
    res: Resource
    name: str
    location: str | Unknown | None
    node_locations: tuple[str, ...] | Unknown | None
    min_master_version: str | Unknown | None
    node_version: str | Unknown | None
    release_channel: str | Unknown | None

    @property
    def urn(self) -> str:
        return self.res.urn

    def describe(self) -> str:
        return f"GKE Cluster '{self.name}'"

    def zones(self) -> int | None:
        """Zones a pool without its own nodeLocations spans; None if not knowable yet."""
        if isinstance(self.node_locations, Unknown) or isinstance(self.location, Unknown):
            return None
        extra = len(self.node_locations) if self.node_locations else 0
        if isinstance(self.location, str) and is_zone(self.location):
            # Zonal: nodeLocations lists *additional* zones (the cluster's zone is omitted).
            return 1 + extra
        return extra or REGIONAL_DEFAULT_ZONES


def gke_cluster(res: Resource) -> GkeCluster:
    name = as_str(res.get("name"))
    locs = res.get("nodeLocations")
    return GkeCluster(
        res=res,
        name=name if isinstance(name, str) else res.pulumi_name,
        location=as_str(res.get("location")),
        node_locations=locs
        if isinstance(locs, Unknown)
        else (tuple(x for x in locs if isinstance(x, str)) if isinstance(locs, list) else None),
        min_master_version=as_str(res.get("minMasterVersion")),
        node_version=as_str(res.get("nodeVersion")),
        release_channel=as_str(res.get("releaseChannel", "channel")),
    )


@dataclass(frozen=True)
class Accelerator:
    type: str | Unknown | None
    count: int | Unknown | None
    # gpuDriverInstallationConfig.gpuDriverVersion: GPU_DRIVER_VERSION_UNSPECIFIED | INSTALLATION_DISABLED
    # | DEFAULT | LATEST (pulumi_gcp 10.2.0); None = unset (GKE >= 1.30.1-gke.1156000 installs the default).
    driver_version: str | Unknown | None = None
    # gpuSharingConfig.{gpuSharingStrategy,maxSharedClientsPerGpu}: GKE's time-sharing / MPS.
    sharing_strategy: str | Unknown | None = None
    max_shared_clients: int | Unknown | None = None

    def units_per_gpu(self) -> int | Unknown:
        """``nvidia.com/gpu`` GKE's device plugin advertises per physical GPU: N when shared
        (container-engine-accelerators ``pkg/gpu/nvidia/manager.go``: N virtual devices per GPU)."""
        if self.sharing_strategy is None:
            return 1
        if isinstance(self.sharing_strategy, Unknown):
            return self.sharing_strategy
        if isinstance(self.max_shared_clients, Unknown):
            return self.max_shared_clients
        return self.max_shared_clients if self.max_shared_clients and self.max_shared_clients > 0 else 1


@dataclass(frozen=True)
class Taint:
    key: str | Unknown | None
    value: str | Unknown | None
    # pulumi_gcp spelling: NO_SCHEDULE | PREFER_NO_SCHEDULE | NO_EXECUTE
    effect: str | Unknown | None


@dataclass(frozen=True)
class Autoscaling:
    min_node_count: int | Unknown | None
    max_node_count: int | Unknown | None
    total_min_node_count: int | Unknown | None
    total_max_node_count: int | Unknown | None
    location_policy: str | Unknown | None


@dataclass(frozen=True)
class NodePool:
    res: Resource
    name: str
    # False when props.name is absent (GCP auto-names the pool) or unknown.
    name_known: bool
    cluster_ref: str | Unknown | None
    location: str | Unknown | None
    node_locations: tuple[str, ...] | Unknown | None
    machine_type: str | Unknown | None
    accelerators: tuple[Accelerator, ...]
    accelerators_known: bool
    autoscaling: Autoscaling | Unknown | None
    node_count: int | Unknown | None
    initial_node_count: int | Unknown | None
    labels: dict[str, str | Unknown]
    taints: tuple[Taint, ...]
    queued_provisioning: bool | Unknown | None
    flex_start: bool | Unknown | None
    spot: bool | Unknown | None
    preemptible: bool | Unknown | None
    reservation_affinity: str | Unknown | None
    placement_policy_type: str | Unknown | None
    # None = not set, which GKE treats as enabled (NodePoolManagementArgs: "enabled by default").
    auto_repair: bool | Unknown | None
    auto_upgrade: bool | Unknown | None

    @property
    def urn(self) -> str:
        return self.res.urn

    def describe(self) -> str:
        return f"GKE NodePool '{self.name}'"

    @property
    def is_queued(self) -> bool:
        return self.queued_provisioning is True

    def accelerator_type(self) -> str | Unknown | None:
        for acc in self.accelerators:
            if acc.type is not None:
                return acc.type
        if isinstance(self.machine_type, str) and self.machine_type in MACHINE_TYPE_GPUS:
            return MACHINE_TYPE_GPUS[self.machine_type][0]
        return None

    def gpus_per_node(self) -> int | Unknown:
        """``nvidia.com/gpu`` a node advertises: Σ guestAccelerators counts (× maxSharedClientsPerGpu
        under GKE time-sharing / MPS), else the machine type's built-in GPUs, else 0."""
        if not self.accelerators_known:
            return Unknown(f"{self.res.pulumi_name}.nodeConfig.guestAccelerators")
        total = 0
        for acc in self.accelerators:
            if isinstance(acc.count, Unknown):
                return acc.count
            units = acc.units_per_gpu()
            if isinstance(units, Unknown):
                return units
            total += (acc.count or 0) * units
        if total:
            return total
        if isinstance(self.machine_type, Unknown):
            return self.machine_type
        if isinstance(self.machine_type, str) and self.machine_type in MACHINE_TYPE_GPUS:
            return MACHINE_TYPE_GPUS[self.machine_type][1]
        return 0

    def zones(self, cluster: GkeCluster | None) -> int | None:
        """Zones the pool spans: its own nodeLocations, else its cluster's; None if unknowable."""
        if isinstance(self.node_locations, Unknown):
            return None
        if self.node_locations:
            return len(self.node_locations)
        if cluster is not None:
            return cluster.zones()
        if isinstance(self.location, str) and is_zone(self.location):
            return 1
        return None

    def max_nodes(self, cluster: GkeCluster | None) -> int | Unknown | None:
        """Most nodes the pool can ever have.

        Autoscaling: ``totalMaxNodeCount`` (whole pool) if set, else per-zone ``maxNodeCount`` ×
        zones.  Without autoscaling: ``nodeCount`` (or ``initialNodeCount``) × zones.  ``None``
        when the zone count cannot be known (regional cluster, unknown locations).
        """
        auto = self.autoscaling
        if isinstance(auto, Unknown):
            return auto
        if auto is not None:
            if auto.total_max_node_count is not None:
                return auto.total_max_node_count
            per_zone = auto.max_node_count
        else:
            per_zone = self.node_count if self.node_count is not None else self.initial_node_count
        if per_zone is None or isinstance(per_zone, Unknown):
            return per_zone
        zones = self.zones(cluster)
        return None if zones is None else per_zone * zones

    def node_labels(self) -> dict[str, str | Unknown]:
        """Labels GKE nodes of this pool carry: user labels plus GKE's own."""
        labels: dict[str, str | Unknown] = dict(self.labels)
        if self.name_known:
            labels[NODEPOOL_LABEL] = self.name
        acc = self.accelerator_type()
        if acc is not None:
            labels[ACCELERATOR_LABEL] = acc
        if isinstance(self.machine_type, (str, Unknown)):
            labels[INSTANCE_TYPE_LABEL] = self.machine_type
        if self.spot is True:
            labels[SPOT_LABEL] = "true"
        if self.flex_start is True:
            labels[FLEX_START_LABEL] = "true"
        return labels


def _tuple_of_str(raw: object) -> tuple[str, ...] | Unknown | None:
    if isinstance(raw, Unknown):
        return raw
    if isinstance(raw, list):
        return tuple(x for x in raw if isinstance(x, str))
    return None


def node_pool(res: Resource) -> NodePool:
    name = as_str(res.get("name"))
    accs_raw = res.get("nodeConfig", "guestAccelerators")
    accelerators = tuple(
        Accelerator(
            as_str(dig(a, "type")),
            as_int(dig(a, "count")),
            driver_version=as_str(dig(a, "gpuDriverInstallationConfig", "gpuDriverVersion")),
            sharing_strategy=as_str(dig(a, "gpuSharingConfig", "gpuSharingStrategy")),
            max_shared_clients=as_int(dig(a, "gpuSharingConfig", "maxSharedClientsPerGpu")),
        )
        for a in (accs_raw if isinstance(accs_raw, list) else [])
    )
    auto_raw = res.get("autoscaling")
    autoscaling: Autoscaling | Unknown | None
    if isinstance(auto_raw, Unknown):
        autoscaling = auto_raw
    elif isinstance(auto_raw, dict):
        autoscaling = Autoscaling(
            as_int(auto_raw.get("minNodeCount")),
            as_int(auto_raw.get("maxNodeCount")),
            as_int(auto_raw.get("totalMinNodeCount")),
            as_int(auto_raw.get("totalMaxNodeCount")),
            as_str(auto_raw.get("locationPolicy")),
        )
    else:
        autoscaling = None
    taints_raw = as_list(res.get("nodeConfig", "taints"))
    taints = tuple(
        Taint(as_str(dig(t, "key")), as_str(dig(t, "value")), as_str(dig(t, "effect")))
        for t in (taints_raw if isinstance(taints_raw, list) else [])
    )
    return NodePool(
        res=res,
        name=name if isinstance(name, str) else res.pulumi_name,
        name_known=isinstance(name, str),
        cluster_ref=as_str(res.get("cluster")),
        location=as_str(res.get("location")),
        node_locations=_tuple_of_str(res.get("nodeLocations")),
        machine_type=as_str(res.get("nodeConfig", "machineType")),
        accelerators=accelerators,
        accelerators_known=not isinstance(accs_raw, Unknown),
        autoscaling=autoscaling,
        node_count=as_int(res.get("nodeCount")),
        initial_node_count=as_int(res.get("initialNodeCount")),
        labels=str_map(res.get("nodeConfig", "labels")),
        taints=taints,
        queued_provisioning=as_bool(res.get("queuedProvisioning", "enabled")),
        flex_start=as_bool(res.get("nodeConfig", "flexStart")),
        spot=as_bool(res.get("nodeConfig", "spot")),
        preemptible=as_bool(res.get("nodeConfig", "preemptible")),
        reservation_affinity=as_str(res.get("nodeConfig", "reservationAffinity", "consumeReservationType")),
        placement_policy_type=as_str(res.get("placementPolicy", "type")),
        auto_repair=as_bool(res.get("management", "autoRepair")),
        auto_upgrade=as_bool(res.get("management", "autoUpgrade")),
    )
