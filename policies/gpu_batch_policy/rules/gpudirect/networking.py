"""GPUDirect node networking: what GKE refuses, and what makes NCCL fall back to TCP.

Sources:

- GoogleCloudPlatform/cluster-toolkit v1.95.0 ``modules/scheduler/gke-cluster/main.tf``
  preconditions "'enable_dataplane_v2' cannot be false when enabling multi networking" and
  "'enable_multi_networking' cannot be false when using multivpc module, which passes
  additional_networks" (GKE refuses a pool's ``additionalNodeNetworkConfigs`` on a cluster without
  multi-networking, and multi-networking without Dataplane V2: GKE how-to
  setup-multinetwork-support-for-pods, "Requirements");
- the same repository's ``modules/compute/gke-node-pool/gpu_direct.tf``: ``min_additional_networks``
  per machine type (check ``gpu_direct_check_multi_vpc``) and the GKE version floor per minor
  (check ``gke_version_requirements``) -- both ``check`` blocks, i.e. warnings: GPUDirect then does
  not work and NCCL runs over TCP, so these rules are advisory unless a stack raises them;
- ``examples/gke-a3-ultragpu/gke-a3-ultragpu.yaml``: the RoCE VPC's network profile
  ``<zone>-vpc-roce`` is zonal, so a pool in another zone cannot attach its subnets (mandatory);
- GoogleCloudPlatform/gke-networking-api ``config/crds/networking.gke.io_networks.yaml``: a
  ``Network`` of ``type: Device`` names its ``GKENetworkParamSet`` in ``spec.parametersRef``; GKE
  leaves a Network whose param set does not exist not ready, and pods that name it never start.

The machine-type table is :mod:`..gpudirect.profiles` (shared with the program).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, Policy

from ...facts.gpudirect.profiles import ROCE_PROFILE_SUFFIX, profile_for
from ...facts.model import NodePool, StackModel
from ...facts.model.gke import GkeCluster, is_zone
from ...facts.open_world import World, world_schema
from ...primitives.gke_version import satisfies
from ...primitives.values import Unknown, as_bool, as_str, dig
from ..kit.builders import resource_policy, stack_policy
from ..kit.references import unresolved
from ..kit.report import Reporter

NETWORKING_GROUP = "networking.gke.io"
COMPUTE_NETWORK = "gcp:compute/network:Network"
ADVANCED_DATAPATH = "ADVANCED_DATAPATH"


def extra_nics(pool: NodePool) -> list[Any] | Unknown:
    """``networkConfig.additionalNodeNetworkConfigs`` of ``pool`` (empty when unset)."""
    raw = pool.res.get("networkConfig", "additionalNodeNetworkConfigs")
    if isinstance(raw, Unknown):
        return raw
    return list(raw) if isinstance(raw, list) else []


def _short(ref: object) -> str | Unknown | None:
    """A network/subnetwork reference's last path segment (names, self links and ids alike)."""
    value = as_str(ref)
    return value.rstrip("/").rsplit("/", 1)[-1] if isinstance(value, str) else value


def check_multi_networking(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    clusters: dict[str, tuple[GkeCluster, list[str]]] = {}
    for pool in model.node_pools():
        nics = extra_nics(pool)
        if isinstance(nics, Unknown):
            reporter.cannot_check(pool, "networkConfig.additionalNodeNetworkConfigs")
            continue
        cluster = model.cluster_of(pool)
        if nics and cluster is not None:
            clusters.setdefault(cluster.urn, (cluster, []))[1].append(pool.name)
    for cluster in model.gke_clusters():
        pools = clusters.get(cluster.urn, (cluster, []))[1]
        multi = as_bool(cluster.res.get("enableMultiNetworking"))
        datapath = as_str(cluster.res.get("datapathProvider"))
        if isinstance(multi, Unknown) or isinstance(datapath, Unknown):
            reporter.cannot_check(cluster, "enableMultiNetworking / datapathProvider")
            continue
        if pools and multi is not True:
            reporter.violation(
                cluster,
                f"node pool(s) {', '.join(pools)} attach additional node networks, but the cluster has "
                "no multi-networking (GKE refuses additionalNodeNetworkConfigs without it)",
                "set `enableMultiNetworking: true` and `datapathProvider: ADVANCED_DATAPATH` on the cluster",
            )
        if (multi is True or pools) and datapath != ADVANCED_DATAPATH:
            reporter.violation(
                cluster,
                "multi-networking needs GKE Dataplane V2, but datapathProvider is "
                f"{datapath or 'unset (GKE default: legacy datapath)'}",
                f"set `datapathProvider: {ADVANCED_DATAPATH}` (cannot be changed after creation)",
            )


def check_nic_count(pool: NodePool, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    machine = pool.machine_type
    if isinstance(machine, Unknown):
        reporter.cannot_check(pool, "nodeConfig.machineType")
        return
    profile = profile_for(machine) if isinstance(machine, str) else None
    nics = extra_nics(pool)
    if profile is None or isinstance(nics, Unknown) or not nics:
        return
    if len(nics) != profile.nic_count:
        layout = f"{profile.gvnic_networks} gVNIC VPC(s)" + (
            f" + {profile.rdma_subnets} RoCE subnets" if profile.rdma_subnets else ""
        )
        reporter.violation(
            pool,
            f"{machine} has {profile.nic_count} GPU NICs for GPUDirect-{profile.stack}, but the pool attaches "
            f"{len(nics)} additional network(s): NCCL will not use every NIC, or falls back to TCP",
            f"attach exactly {profile.nic_count} additional node networks ({layout})",
        )


def _roce_zones(model: StackModel) -> dict[str, str]:
    """GCE network name -> zone of its ``<zone>-vpc-roce`` network profile."""
    found: dict[str, str] = {}
    for res in model.of_type(COMPUTE_NETWORK):
        name = as_str(res.get("name"))
        profile = _short(res.get("networkProfile"))
        if isinstance(name, str) and isinstance(profile, str) and profile.endswith(ROCE_PROFILE_SUFFIX):
            found[name] = profile.removesuffix(ROCE_PROFILE_SUFFIX)
    return found


def _pool_zones(pool: NodePool, cluster: GkeCluster | None) -> list[str] | None:
    if isinstance(pool.node_locations, tuple) and pool.node_locations:
        return list(pool.node_locations)
    if cluster is not None and isinstance(cluster.location, str) and is_zone(cluster.location):
        extra = cluster.node_locations if isinstance(cluster.node_locations, tuple) else ()
        return [cluster.location, *extra]
    return None


def check_roce_zone(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    roce = _roce_zones(model)
    if not roce:
        return
    for pool in model.node_pools():
        nics = extra_nics(pool)
        if isinstance(nics, Unknown):
            continue
        zones_of = {
            roce[n] for nic in nics if isinstance(n := _short(dig(nic, "network")), str) and n in roce
        }
        if not zones_of:
            continue
        zones = _pool_zones(pool, model.cluster_of(pool))
        if zones is None:
            reporter.cannot_check(pool, "the zones of a pool attached to a RoCE network")
            continue
        if len(zones_of) > 1 or set(zones) != zones_of:
            reporter.violation(
                pool,
                f"the pool runs in {', '.join(zones)} but attaches RoCE network(s) whose profile is zonal "
                f"({', '.join(sorted(zones_of))}-vpc-roce): GCE cannot attach those subnets elsewhere",
                f"run the pool in exactly {sorted(zones_of)[0]} (`nodeLocations`), or use that zone's RoCE network",
            )


def check_param_sets(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    world = World.from_config(config)
    declared = [o.name for o in model.kube_objects(NETWORKING_GROUP, "GKENetworkParamSet")]
    for network in model.kube_objects(NETWORKING_GROUP, "Network"):
        ref = network.get("spec", "parametersRef")
        if isinstance(ref, Unknown):
            reporter.cannot_check(network, "spec.parametersRef")
            continue
        if dig(ref, "kind") != "GKENetworkParamSet":
            continue
        name = as_str(dig(ref, "name"))
        if isinstance(name, Unknown):
            reporter.cannot_check(network, "spec.parametersRef.name")
            continue
        if isinstance(name, str) and name in declared:
            continue
        unresolved(
            world,
            reporter,
            network,
            ("GKENetworkParamSet", str(name), None),
            declared=declared,
            problem=f"Network '{network.name}' names GKENetworkParamSet '{name}', which does not exist: "
            "GKE leaves the Network not ready and pods that attach it never start",
            fix=f"declare GKENetworkParamSet '{name}' (vpc, vpcSubnet, deviceMode) or fix parametersRef.name",
        )


def _floor(version: str, floors: tuple[tuple[str, str], ...]) -> str | None:
    """The profile's floor for ``version``'s minor; the lowest floor for an older minor; None for a
    newer minor (cluster-toolkit: a minor not in the map needs only ``1.0.0-gke.0``)."""
    parts = version.split(".")
    minor = ".".join(parts[:2])
    table = dict(floors)
    if minor in table:
        return table[minor]
    lowest = min(floors, key=lambda f: tuple(int(x) for x in f[0].split(".")))
    try:
        older = tuple(int(x) for x in minor.split(".")) < tuple(int(x) for x in lowest[0].split("."))
    except ValueError:
        return None
    return lowest[1] if older else None


def check_gpudirect_version(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for pool in model.node_pools():
        nics = extra_nics(pool)
        machine = pool.machine_type
        profile = profile_for(machine) if isinstance(machine, str) else None
        if profile is None or not profile.version_floors or isinstance(nics, Unknown) or not nics:
            continue
        cluster = model.cluster_of(pool)
        version = as_str(cluster.res.get("minMasterVersion")) if cluster is not None else None
        if not isinstance(version, str):
            reporter.cannot_check(
                pool, f"the GKE version GPUDirect-{profile.stack} needs (pin minMasterVersion)"
            )
            continue
        floor = _floor(version, profile.version_floors)
        if floor is not None and satisfies(version, floor) == "no":
            reporter.violation(
                pool,
                f"GPUDirect-{profile.stack} on {machine} needs GKE {floor} or newer on this minor, but the "
                f"cluster's minMasterVersion is {version}: NCCL will fall back to TCP",
                f'set `minMasterVersion` to "{floor}" or a newer minor',
            )


POLICIES: list[Policy] = [
    stack_policy(
        "gke-multi-networking-cluster",
        "A node pool with additional node networks needs a cluster with multi-networking and Dataplane V2.",
        check_multi_networking,
    ),
    resource_policy(
        "gke-gpudirect-nic-count",
        "A GPUDirect pool attaches as many additional networks as its machine type has GPU NICs.",
        NodePool,
        check_nic_count,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
    stack_policy(
        "gke-roce-network-zone",
        "A pool attaching a RoCE network (zonal network profile <zone>-vpc-roce) runs in exactly that zone.",
        check_roce_zone,
    ),
    stack_policy(
        "gke-network-param-set-exists",
        "Every networking.gke.io Network names a GKENetworkParamSet that exists.",
        check_param_sets,
        config_schema=world_schema(),
    ),
    stack_policy(
        "gke-gpudirect-version",
        "GPUDirect-TCPX/TCPXO pools run on a GKE version at or above cluster-toolkit's floor for the minor.",
        check_gpudirect_version,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
]
