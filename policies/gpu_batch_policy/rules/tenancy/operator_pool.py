"""A Kueue ResourceFlavor that steers tenant pods onto the node pool where the operators run.

Kueue injects an admitted pod set's flavor ``nodeLabels`` into the pods' ``nodeSelector`` and its
``tolerations`` into theirs (kueue v0.19.2 ``pkg/podset/podset.go``, ``FromAssignment`` /
``Merge``), so the pools a flavor's pods can use are the pools whose node labels satisfy
``nodeLabels`` and whose taints the flavor tolerates.  GKE labels every node with its pool's name,
``cloud.google.com/gke-nodepool=<pool>``, next to ``nodeConfig.labels`` (GKE docs,
concepts/node-pools "Deploying Services to specific node pools"; terraform-provider-google
``resource_container_node_pool.go`` ``node_config.labels``).

The operator pool is found from the program itself, not from a naming convention: the pools the
Deployments rendered from the Kueue, KubeRay and KAI Scheduler Helm releases surely schedule on
(their ``nodeSelector``, node affinity and tolerations against each pool's labels and taints,
``fit.placement``).  Those operators hold cluster-wide tokens: KubeRay's ClusterRole creates pods
and reads Secrets in every namespace (kuberay v1.7.0
``helm-chart/kuberay-operator/templates/_helpers.tpl``, ``role.consistentRules``: pods
``create``, secrets), so a tenant
pod that escapes to its node owns the cluster (issue 27).

A flavor is flagged when one of the pools its ``nodeLabels`` surely select is an operator pool.
A flavor without ``nodeLabels`` (Kueue's "empty" default flavor) steers nothing and is not
flagged: the pods' own selectors decide, and Pod Security keeps them from the node.

KAI Scheduler places pods too, without flavors: a scheduler shard sees only the nodes, PodGroups
and Queues whose node-pool label (``kai.scheduler/node-pool``, KAI v0.17.0
``pkg/common/constants/constants.go`` ``DefaultNodePoolLabelKey``; ``global.nodePoolLabelKey`` of
the chart overrides it) equals its value, and the default shard those *without* the label
(``pkg/scheduler/conf/scheduler_conf.go`` ``SchedulingNodePoolParams.GetLabelSelector``:
``Equals`` value, else ``DoesNotExist``; ``cache/cluster_info/data_lister/kubernetes_lister.go``
``ListNodes``/``ListQueues``/``ListPodGroups`` filter by it).  A PodGroup takes the label from its
pods (``pkg/podgrouper/pod_controller.go`` ``addNodePoolLabel``), and a Queue is scheduled only by
the shard of its own label.  So a leaf KAI Queue's pods, with no selector or toleration of their
own, may land on the pools its shard sees and whose taints they tolerate: a leaf queue whose
shard includes an operator pool is flagged the same way.

A risk, not a failure: advisory by default, mandatory where the stack's config raises it
(``policies/config.prod.json``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, Policy

from ...facts.fit.placement import placement
from ...facts.model import NodePool, StackModel
from ...facts.model.workloads import PodTemplate
from ...primitives.values import Unknown, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter

# Controllers whose pods run on chosen nodes (a DaemonSet runs on every pool: it marks none).
CONTROLLER_KINDS = ("Deployment", "StatefulSet")


def operator_pools(model: StackModel) -> dict[str, tuple[NodePool, list[str]]]:
    """Pool URN -> (pool, the operator Deployments that surely run there)."""
    releases = {r.urn: r for r in (*model.kueue_releases(), *model.kuberay_releases(), *model.kai_releases())}
    out: dict[str, tuple[NodePool, list[str]]] = {}
    for kind in CONTROLLER_KINDS:
        for obj in model.kube_objects("apps", kind):
            if obj.rendered_from not in releases:
                continue
            template = dig(obj.props, "spec", "template")
            raw = template if isinstance(template, (dict, Unknown)) else {}
            for pool in placement(model, PodTemplate(raw, f"{obj.describe()}.spec.template")).matched:
                out.setdefault(pool.urn, (pool, []))[1].append(obj.describe())
    return out


def check_operator_pool(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    flavors = [f for f in model.resource_flavors() if f.node_labels and f.node_labels_known]
    if not flavors and not model.kai_queues():
        return
    operators = operator_pools(model)
    if not operators:
        return
    check_kai_placement(model, reporter, operators)
    for flavor in flavors:
        pod = PodTemplate(
            {"spec": {"nodeSelector": dict(flavor.node_labels), "tolerations": list(flavor.tolerations)}},
            f"ResourceFlavor {flavor.obj.name}",
        )
        for pool in placement(model, pod).matched:
            if pool.urn not in operators:
                continue
            _, running = operators[pool.urn]
            reporter.violation(
                flavor.obj,
                f"ResourceFlavor '{flavor.obj.name}' (nodeLabels {dict(flavor.node_labels)}) puts the pods "
                f"it admits on node pool '{pool.name}', where {' and '.join(running)} run with cluster-wide tokens",
                "give tenant pods without GPUs a CPU pool of their own (gpu-batch:cluster.tenantPool) "
                "and point the flavor at it (pool: <tenant pool>)",
            )
            break


# KAI v0.17.0 pkg/common/constants/constants.go DefaultNodePoolLabelKey.
KAI_NODE_POOL_LABEL = "kai.scheduler/node-pool"


def kai_node_pool_key(model: StackModel) -> str | None:
    """The node-pool label key KAI's shards use; None when a release sets it to an unknown value."""
    for release in model.kai_releases():
        key = dig(release.values, "global", "nodePoolLabelKey") if isinstance(release.values, dict) else None
        if isinstance(key, Unknown) or isinstance(release.values, Unknown):
            return None
        if isinstance(key, str) and key:
            return key
    return KAI_NODE_POOL_LABEL


def _shard_pod(key: str, value: str | None, where: str) -> PodTemplate:
    """A pod of a shard with no selector or toleration of its own: the shard's node filter."""
    expression: dict[str, Any] = (
        {"key": key, "operator": "In", "values": [value]}
        if value
        else {"key": key, "operator": "DoesNotExist"}
    )
    affinity = {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [expression]}]
        }
    }
    return PodTemplate({"spec": {"affinity": {"nodeAffinity": affinity}}}, where)


def check_kai_placement(
    model: StackModel, reporter: Reporter, operators: dict[str, tuple[NodePool, list[str]]]
) -> None:
    queues = model.kai_queues()
    if not queues or not operators:
        return
    key = kai_node_pool_key(model)
    if key is None:
        return
    parents = {q.parent_queue for q in queues if isinstance(q.parent_queue, str)}
    for queue in queues:
        if queue.name in parents or not queue.obj.labels_known:
            continue
        value = queue.obj.labels.get(key)
        if isinstance(value, Unknown):
            continue
        pod = _shard_pod(key, value, f"KAI Queue {queue.name}")
        for pool in placement(model, pod).matched:
            if pool.urn not in operators:
                continue
            _, running = operators[pool.urn]
            shard = f"{key}={value}" if value else f"no {key} label (KAI's default shard)"
            reporter.violation(
                queue.obj,
                f"KAI Queue '{queue.name}' ({shard}) schedules its pods on node pool '{pool.name}', "
                f"where {' and '.join(running)} run with cluster-wide tokens",
                "taint the operators' pool for platform components only (components.gke.io/"
                "gke-managed-components=true:NoSchedule, which gpu-batch does with cluster.tenantPool) or "
                f"give the queue a {key} shard whose nodes are the tenant and GPU pools",
            )
            break


POLICIES: list[Policy] = [
    stack_policy(
        "kueue-flavor-on-operator-pool",
        "A Kueue ResourceFlavor or a KAI queue's shard puts tenant pods on the node pool where the operators run.",
        check_operator_pool,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
]
