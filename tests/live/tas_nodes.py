"""GKE's Nodes for Kueue's Topology-Aware Scheduling, made from the stack's own model of its pools.

Kueue v0.19.2 places a TAS pod set only over Nodes that exist: ``pkg/cache/scheduler/
tas_nodes_cache.go`` keeps, per Node, its ``metadata.labels``, ``spec.taints``,
``spec.unschedulable`` and ``status.allocatable`` (``copyAndStripNode``), and drops a Node that is
unschedulable or not ``Ready`` (``nodesCache.sync``: the ``SchedulerLibraryIntegration`` gate is off
at v0.19.2); ``nodesCache.find`` keeps those carrying the flavor's ``nodeLabels`` and a label per
Topology level (``pkg/util/tas/node.go`` ``NodeMatchesFlavor``); ``tas_topology_tree.go``
``addNode`` makes a domain per distinct value path, with the Node's allocatable as capacity; and
``tas_flavor_snapshot.go`` ``findTopologyAssignment`` counts a pod as its requests plus one
``pods`` (``resources.OnePodRequest``), tolerates taints with the pod's and the flavor's
tolerations, and matches the pod set's node selector (its podSetUpdates merged) against the labels.

The live tier has no kubelet or kube-controller-manager, so the test creates the Nodes and writes
their status itself, as GKE's would be (:func:`pool_nodes`):

- labels: the pool's (``NodePool.node_labels``: its own, ``cloud.google.com/gke-nodepool``,
  ``gke-accelerator``, ``node.kubernetes.io/instance-type``, ...), ``kubernetes.io/hostname`` = the
  Node's name, and on machine types GKE labels (``facts.tas.levels.labelled``) the
  ``cloud.google.com/gce-topology-block`` / ``-subblock`` / ``-host`` labels: nodes are put in as
  few blocks and sub-blocks as the declared reservation allows (``facts.tas.reservations
  .domain_nodes``, the gang-fits rule's bound), a host per node;
- taints: ``facts.fit.placement.pool_taints`` (declared plus GKE's GPU and queued-provisioning
  taints);
- allocatable: ``facts.fit.placement.pool_allocatable`` (the machine's shape less GKE's
  reservations, every GPU), and ``pods``: the pool's ``maxPodsPerNode``, else GKE Standard's
  default of 110 (GKE docs, "Configure maximum Pods per node": 110 Pods per node by default on
  Standard clusters).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final

from gpu_batch_policy.facts.fit.placement import pool_allocatable, pool_taints
from gpu_batch_policy.facts.model import NodePool, StackModel
from gpu_batch_policy.facts.tas.levels import BLOCK, HOST, HOSTNAME, SUBBLOCK, labelled
from gpu_batch_policy.facts.tas.reservations import ReservationSize, domain_nodes
from gpu_batch_policy.primitives.values import Unknown, as_int

from tests.live.cluster import Cluster

GPU = "nvidia.com/gpu"
GKE_DEFAULT_MAX_PODS: Final = 110
"""GKE Standard's default maximum Pods per node ("Configure maximum Pods per node")."""
MANAGED_BY: Final = "gpu-batch-live/played-by"
"""A label of ours on every Node the test plays, so it deletes exactly those."""


def _name_part(text: str) -> str:
    """A stable, DNS-safe stand-in for a GCE block / sub-block id (GKE writes opaque ids)."""
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _allocatable(pool: NodePool) -> dict[str, str]:
    found = pool_allocatable(pool)
    assert found is not None and not isinstance(found, Unknown), f"{pool.name}: allocatable {found}"
    pods = as_int(pool.res.get("maxPodsPerNode"))
    out = {
        "cpu": f"{int(found.cpu * 1000)}m",
        "memory": str(int(found.memory)),
        "pods": str(pods if isinstance(pods, int) else GKE_DEFAULT_MAX_PODS),
    }
    if found.gpus:
        out[GPU] = str(int(found.gpus))
    return out


def _per_domain(pool: NodePool, level: str, reservations: Mapping[str, ReservationSize], count: int) -> int:
    """Nodes one ``level`` domain holds: the declared bound, else all of them (one compact domain)."""
    return domain_nodes(pool, level, reservations) or max(count, 1)


def pool_nodes(
    model: StackModel,
    pool: NodePool,
    count: int,
    *,
    prefix: str,
    reservations: Mapping[str, ReservationSize],
    labels: Mapping[str, str] | None = None,
    played_by: str,
) -> list[dict[str, Any]]:
    """``count`` Nodes of ``pool`` as GKE would create them (names ``gke-<prefix>-<i>``)."""
    base: dict[str, str] = {}
    for key, value in pool.node_labels().items():
        assert isinstance(value, str), f"{pool.name}: node label {key} unknown"
        base[key] = value
    base.update(labels or {})
    base[MANAGED_BY] = played_by
    taints = pool_taints(model, pool)
    assert not isinstance(taints, Unknown), taints
    machine = pool.machine_type
    topology = isinstance(machine, str) and labelled(machine)
    per_block = _per_domain(pool, BLOCK, reservations, count)
    per_subblock = min(_per_domain(pool, SUBBLOCK, reservations, count), per_block)
    nodes = []
    for i in range(count):
        name = f"gke-{prefix}-{i}"
        node_labels = dict(base)
        node_labels[HOSTNAME] = name
        if topology:
            block = f"{prefix}-b{i // per_block}"
            node_labels[BLOCK] = _name_part(block)
            node_labels[SUBBLOCK] = _name_part(f"{block}-s{(i % per_block) // per_subblock}")
            node_labels[HOST] = _name_part(name)
        nodes.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": node_labels},
                "spec": {"taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in taints]},
                "status": {"allocatable": _allocatable(pool)},
            }
        )
    return nodes


def create_nodes(cluster: Cluster, nodes: Sequence[Mapping[str, Any]]) -> None:
    """Create each Node and write its status (the status subresource: ``Ready``, allocatable =
    capacity), as the kubelet would; then put back the pool's own taints, as the node lifecycle
    controller does once the Node is Ready (kubernetes v1.37.2 ``pkg/controller/nodelifecycle``
    ``doNoScheduleTaintingPass``): the API server's ``TaintNodesByCondition`` admission plugin adds
    ``node.kubernetes.io/not-ready:NoSchedule`` to every Node created
    (``plugin/pkg/admission/nodetaint/admission.go`` ``addNotReadyTaint``), which Kueue's TAS
    would otherwise count against every pod ("excluded: taint ... not-ready")."""
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    for node in nodes:
        body = {k: v for k, v in node.items() if k != "status"}
        status, answer = cluster.request("POST", "/api/v1/nodes", body)
        assert status == 201, (status, answer)
        allocatable = node["status"]["allocatable"]
        ready = {
            "type": "Ready",
            "status": "True",
            "reason": "KubeletReady",
            "message": "played by the live tier",
            "lastHeartbeatTime": now,
            "lastTransitionTime": now,
        }
        patch = {"status": {"capacity": allocatable, "allocatable": allocatable, "conditions": [ready]}}
        path = f"/api/v1/nodes/{node['metadata']['name']}"
        status, answer = cluster.request(
            "PATCH", path + "/status", patch, content_type="application/merge-patch+json"
        )
        assert status == 200, (status, answer)
        taints = {"spec": {"taints": node["spec"]["taints"] or None}}
        status, answer = cluster.request("PATCH", path, taints, content_type="application/merge-patch+json")
        assert status == 200 and (answer["spec"].get("taints") or []) == node["spec"]["taints"], answer


def delete_nodes(cluster: Cluster, played_by: str | None = None) -> None:
    """Delete the Nodes the test played (all of them, or those of one ``played_by``)."""
    selector = f"{MANAGED_BY}={played_by}" if played_by else MANAGED_BY
    for node in cluster.list("v1", "Node", label_selector=selector):
        cluster.delete("v1", "Node", node["metadata"]["name"])
    cluster.wait_for(lambda: not cluster.list("v1", "Node", label_selector=selector), 30, "played Nodes gone")
