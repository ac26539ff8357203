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

A risk, not a failure: advisory by default, mandatory where the stack's config raises it
(``policies/config.prod.json``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, Policy

from ..builders import stack_policy
from ..fit.placement import placement
from ..model import NodePool, StackModel
from ..model.workloads import PodTemplate
from ..report import Reporter
from ..values import Unknown, dig

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
    if not flavors:
        return
    operators = operator_pools(model)
    if not operators:
        return
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


POLICIES: list[Policy] = [
    stack_policy(
        "kueue-flavor-on-operator-pool",
        "A Kueue ResourceFlavor steers tenant pods onto the node pool where the operators run.",
        check_operator_pool,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
]
