"""Private GKE clusters and the VPC resources that open them up (pulumi_gcp wire names).

- A cluster has private nodes when ``privateClusterConfig.enablePrivateNodes`` is true, or when
  one of its node pools sets ``networkConfig.enablePrivateNodes`` (pulumi_gcp
  ``NodePoolNetworkConfigArgs.enable_private_nodes``: private nodes per pool); its
  control plane then reaches the nodes from ``privateClusterConfig.masterIpv4CidrBlock``, and GKE
  creates a firewall rule for TCP 443 and 10250 only (GKE doc "Create a private cluster" →
  "Adding firewall rules for specific use cases",
  cloud.google.com/kubernetes-engine/docs/how-to/private-clusters#add_firewall_rules).
- Private nodes reach the internet only through Cloud NAT (GKE doc "Advanced private cluster
  configurations" → "Granting private nodes outbound internet access": a ``Router`` with a
  ``RouterNat`` in the cluster's region and network).
- ``network`` unset means the project's ``default`` network; a network may be given as a name
  or a self link, so networks are compared by their last path segment.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from ...primitives.values import Unknown, as_bool, as_list, as_str, dig
from ..model import GkeCluster, Resource, StackModel
from ..model.gke import is_zone

FIREWALL = "gcp:compute/firewall:Firewall"
ROUTER = "gcp:compute/router:Router"
ROUTER_NAT = "gcp:compute/routerNat:RouterNat"
PORTS_GKE_OPENS = frozenset({443, 10250})


def short(ref: str) -> str:
    return ref.rstrip("/").rsplit("/", 1)[-1]


@dataclass(frozen=True)
class PrivateCluster:
    cluster: GkeCluster
    master_cidr: str | Unknown | None
    network: str | Unknown
    region: str | Unknown | None


def private_clusters(model: StackModel) -> tuple[list[PrivateCluster], list[GkeCluster]]:
    """Clusters with private nodes, and clusters for which that is unknown until apply."""
    found: list[PrivateCluster] = []
    unknown: list[GkeCluster] = []
    pool_private: dict[int, bool | Unknown | None] = {}
    for pool in model.node_pools():
        cluster_of = model.cluster_of(pool)
        flag = as_bool(pool.res.get("networkConfig", "enablePrivateNodes"))
        if cluster_of is not None and flag is not None and pool_private.get(id(cluster_of.res)) is not True:
            pool_private[id(cluster_of.res)] = flag
    for cluster in model.gke_clusters():
        private = as_bool(cluster.res.get("privateClusterConfig", "enablePrivateNodes"))
        if private is not True and pool_private.get(id(cluster.res)) is not None:
            private = pool_private[id(cluster.res)]
        if isinstance(private, Unknown):
            unknown.append(cluster)
        if private is not True:
            continue
        network = as_str(cluster.res.get("network"))
        location = cluster.location
        region: str | Unknown | None = location
        if isinstance(location, str) and is_zone(location):
            region = location.rsplit("-", 1)[0]
        found.append(
            PrivateCluster(
                cluster=cluster,
                master_cidr=as_str(cluster.res.get("privateClusterConfig", "masterIpv4CidrBlock")),
                network=network if isinstance(network, Unknown) else short(network or "default"),
                region=region,
            )
        )
    return found, unknown


def same_network(ref: str | Unknown | None, network: str | Unknown) -> bool | None:
    if isinstance(ref, Unknown) or isinstance(network, Unknown):
        return None
    return short(ref or "default") == network


def _port_allowed(allows: object, port: int) -> bool | None:
    if isinstance(allows, Unknown):
        return None
    undecided = False
    for allow in allows if isinstance(allows, list) else []:
        protocol = as_str(dig(allow, "protocol"))
        ports = as_list(dig(allow, "ports"))
        if isinstance(protocol, Unknown) or isinstance(ports, Unknown):
            undecided = True
            continue
        if protocol not in ("tcp", "all", "6"):
            continue
        if not ports:
            return True
        for item in ports:
            if not isinstance(item, str):
                undecided = undecided or isinstance(item, Unknown)
                continue
            low, _, high = item.partition("-")
            try:
                if int(low) <= port <= int(high or low):
                    return True
            except ValueError:
                continue
    return None if undecided else False


def _covers(ranges: object, cidr: str) -> bool | None:
    if isinstance(ranges, Unknown):
        return None
    try:
        want = ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        return None
    for item in ranges if isinstance(ranges, list) else []:
        if isinstance(item, Unknown):
            return None
        try:
            have = ipaddress.ip_network(str(item), strict=False)
        except ValueError:
            continue
        if have.version == want.version and want.subnet_of(have):  # type: ignore[arg-type]
            return True
    return False


def _tags_cover(model: StackModel, target: PrivateCluster, tags: object) -> bool | None:
    """Whether every node pool of the cluster carries one of the firewall's ``targetTags``
    (``nodeConfig.tags`` become the VMs' network tags); None when not knowable."""
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        return None
    pools = [p for p in model.node_pools() if model.cluster_of(p) is target.cluster]
    if not pools:
        return None
    verdict: bool | None = True
    for pool in pools:
        have = pool.res.get("nodeConfig", "tags")
        if not isinstance(have, list):
            verdict = None  # GKE's own gke-<cluster>-<hash>-node tag is not known here
        elif not set(tags) & {t for t in have if isinstance(t, str)}:
            return False
    return verdict


def firewall_opens(
    firewall: Resource, target: PrivateCluster, port: int, model: StackModel | None = None
) -> bool | None:
    """Whether this Firewall lets the control plane reach ``port`` on the cluster's nodes.

    ``targetTags`` must be on every pool's nodes (``nodeConfig.tags``); ``targetServiceAccounts``
    cannot be matched here: undecided.
    """
    props = firewall.props
    if as_bool(props.get("disabled")) is True:
        return False
    direction = as_str(props.get("direction"))
    if isinstance(direction, str) and direction != "INGRESS":
        return False
    verdicts = [
        None if isinstance(direction, Unknown) else True,
        same_network(as_str(props.get("network")), target.network),
        _port_allowed(props.get("allows"), port),
        None
        if not isinstance(target.master_cidr, str)
        else _covers(props.get("sourceRanges"), target.master_cidr),
    ]
    if False in verdicts:
        return False
    if props.get("targetServiceAccounts"):
        return None
    if props.get("targetTags"):
        covered = None if model is None else _tags_cover(model, target, props.get("targetTags"))
        if covered is False:
            return False
        verdicts.append(covered)
    return True if all(v is True for v in verdicts) else None


def port_open(model: StackModel, target: PrivateCluster, port: int) -> bool | None:
    if port in PORTS_GKE_OPENS:
        return True
    verdict: bool | None = False
    for firewall in model.of_type(FIREWALL):
        got = firewall_opens(firewall, target, port, model)
        if got is True:
            return True
        if got is None:
            verdict = None
    return verdict


def has_cloud_nat(model: StackModel, target: PrivateCluster) -> bool | None:
    """A RouterNat on a Router in the cluster's region and network (None: cannot tell yet)."""
    routers = model.of_type(ROUTER)
    verdict: bool | None = False
    for nat in model.of_type(ROUTER_NAT):
        region, router_ref = as_str(nat.get("region")), as_str(nat.get("router"))
        if (
            isinstance(region, Unknown)
            or isinstance(router_ref, Unknown)
            or isinstance(target.region, Unknown)
        ):
            verdict = None
            continue
        if region is not None and target.region is not None and region != target.region:
            continue
        matches = [
            r
            for r in routers
            if as_str(r.get("name")) == short(router_ref or "") or isinstance(r.get("name"), Unknown)
        ]
        if not matches:
            verdict = None  # a router declared elsewhere: cannot see its network
            continue
        for router in matches:
            got = same_network(as_str(router.get("network")), target.network)
            if got is True and not isinstance(router.get("name"), Unknown):
                return True
            if got is None or isinstance(router.get("name"), Unknown):
                verdict = None
    return verdict
