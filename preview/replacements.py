"""Which input changes make the engine replace a resource, from the provider's ForceNew schema.

Why: on `pulumi up` a changed input that the provider marks ForceNew deletes the resource and
creates it again.  For a node pool that takes every node (and every operator on the system pool)
down; for a protected resource the engine refuses, so the update fails.  A reviewer needs to see
that in the pull request, before anything runs.

The table holds the ForceNew input paths of the GKE resource types the stacks create, in wire
(camelCase) form, from terraform-provider-google, which pulumi-gcp 10.2.0 bridges:

* ``gcp:container/nodePool:NodePool``: google/services/container/resource_container_node_pool.go
  ``schemaNodePool`` (``name``, ``location``, ``cluster``, ``project``, ``initial_node_count``,
  ``queued_provisioning``, ``placement_policy``, ``max_pods_per_node``) and the pool's
  ``node_config`` from google/services/container/node_config.go ``schemaNodeConfig``
  (``guest_accelerator`` with its type, count and ``gpu_driver_installation_config``,
  ``gpu_sharing_config``, ``spot``, ``preemptible``, ``service_account``, ``oauth_scopes``,
  ``reservation_affinity``, ``shielded_instance_config``, ``max_run_duration``, ``flex_start``,
  ``metadata``, ``local_ssd_count``); the pool's ``network_config.additional_node_network_configs``
  (ForceNew in ``schemaNodePool``: GKE cannot change a node's interfaces, so a GPUDirect pool's
  networks are fixed for its life, issue 29).  ``machine_type``, ``disk_size_gb``, ``labels``, ``taint``,
  ``tags`` and ``autoscaling`` are updated in place.
* ``gcp:container/cluster:Cluster``: google/services/container/resource_container_cluster.go
  (``name``, ``location``, ``project``, ``network``, ``subnetwork``, ``initial_node_count``,
  ``node_config`` of the default pool, ``ip_allocation_policy``, ``networking_mode``,
  ``datapath_provider``: turning Dataplane V2 on or off is a new cluster).  ``enable_multi_networking``
  is not ForceNew there (updated in place).

* any ``kubernetes:`` object: ``metadata.name`` and ``metadata.namespace``, its identity in the
  cluster (pulumi-kubernetes replaces on either); a Helm ``kubernetes:helm.sh/v3:Release``:
  ``name`` and ``namespace`` (a Helm release cannot be renamed or moved).

A path listed here replaces the resource when its value differs, unless the resource names it in
``ignoreChanges`` (the engine keeps the old value then).  Types not in the table are not judged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

NODE_POOL: Final = "gcp:container/nodePool:NodePool"
CLUSTER: Final = "gcp:container/cluster:Cluster"

FORCE_NEW: Final[Mapping[str, tuple[str, ...]]] = {
    NODE_POOL: (
        "name",
        "location",
        "cluster",
        "project",
        "initialNodeCount",
        "queuedProvisioning",
        "placementPolicy",
        "maxPodsPerNode",
        "nodeConfig.guestAccelerators",
        "nodeConfig.spot",
        "nodeConfig.preemptible",
        "nodeConfig.serviceAccount",
        "nodeConfig.oauthScopes",
        "nodeConfig.reservationAffinity",
        "nodeConfig.shieldedInstanceConfig",
        "nodeConfig.maxRunDuration",
        "nodeConfig.flexStart",
        "nodeConfig.metadata",
        "nodeConfig.localSsdCount",
        "networkConfig.additionalNodeNetworkConfigs",
    ),
    CLUSTER: (
        "name",
        "location",
        "project",
        "network",
        "subnetwork",
        "initialNodeCount",
        "nodeConfig",
        "ipAllocationPolicy",
        "networkingMode",
        "datapathProvider",
    ),
}

HELM_RELEASE: Final = "kubernetes:helm.sh/v3:Release"
CRD: Final = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
KUBERNETES_IDENTITY: Final = ("metadata.name", "metadata.namespace")
HELM_IDENTITY: Final = ("name", "namespace")

_ABSENT: Final = object()


def force_new_paths(type_token: str) -> tuple[str, ...]:
    """The ForceNew input paths of a resource type (empty: not judged)."""
    if type_token == HELM_RELEASE:
        return HELM_IDENTITY
    if type_token.startswith("kubernetes:"):
        return KUBERNETES_IDENTITY
    return FORCE_NEW.get(type_token, ())


def _at(inputs: Mapping[str, Any], path: str) -> Any:
    value: Any = inputs
    for step in path.split("."):
        if not isinstance(value, Mapping) or step not in value:
            return _ABSENT
        value = value[step]
    return value


def _ignored(path: str, ignore_changes: Iterable[str]) -> bool:
    return any(path == ignored or path.startswith(f"{ignored}.") for ignored in ignore_changes)


def replacing_paths(
    type_token: str, old: Mapping[str, Any], new: Mapping[str, Any], ignore_changes: Iterable[str] = ()
) -> list[str]:
    """The ForceNew input paths whose value differs between ``old`` and ``new`` inputs (wire
    form), leaving out those the resource's ``ignoreChanges`` keeps; empty: updated in place."""
    ignored = tuple(ignore_changes)
    return [
        path
        for path in force_new_paths(type_token)
        if not _ignored(path, ignored) and _at(old, path) != _at(new, path)
    ]


def immutable_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The fields of a custom resource whose change its CRD's transition rules refuse (Kueue 0.19's
    Topology levels, a TAS flavor's node labels), as ``path: message``; empty for built-in kinds,
    objects of a kind no pinned CRD defines, or updates the rules allow."""
    from gpu_batch_policy.schema.transition import refused_updates  # the pack's CEL engine

    from preview.crd_validation import get_catalog

    api_version, kind = new.get("apiVersion"), new.get("kind")
    if not isinstance(api_version, str) or "/" not in api_version or not isinstance(kind, str):
        return []
    if old.get("apiVersion") != api_version:
        return []
    group, version = api_version.split("/", 1)
    crd = get_catalog().crd(group, kind)
    entry = crd.versions.get(version) if crd is not None else None
    if entry is None:
        return []
    return refused_updates(entry.schema, old, new)
