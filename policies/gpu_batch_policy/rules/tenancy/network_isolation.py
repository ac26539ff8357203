"""NetworkPolicies that a cluster enforces, and tenant namespaces they isolate (issue 27 item 3).

* **networkpolicy-enforced** (mandatory: the policy cannot work).  GKE enforces NetworkPolicy only
  with Dataplane V2 (``datapathProvider: ADVANCED_DATAPATH``) or the Calico add-on
  (``networkPolicy.enabled: true`` with ``addonsConfig.networkPolicyConfig.disabled: false``)
  (GKE docs, how-to/network-policy and concepts/dataplane-v2; field names of
  terraform-provider-google resource_container_cluster.go ``datapath_provider``,
  ``network_policy``, ``addons_config.network_policy_config``).  Elsewhere the API server stores
  a NetworkPolicy and nothing applies it: every pod stays reachable from every other.  Judged
  when the stack declares GKE clusters and none enforces policies.
* **namespace-default-deny** (advisory; raised in prod's and skypilot's config): a tenant
  namespace the stack creates or patches (one holding a LocalQueue or a Ray workload, as in
  :mod:`.pod_security`) with no
  NetworkPolicy that isolates all its pods for ingress (``podSelector: {}`` and ``Ingress`` in
  ``policyTypes``).  Without one, every pod of every other namespace reaches its Ray heads (job
  API 8265, GCS 6379) and servers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, Policy

from ...facts.model import KubeObject, StackModel
from ...facts.model.gke import GkeCluster
from ...facts.selectors import CORE_GROUP, NAMESPACE_PATCH
from ...primitives.values import Unknown, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter
from .pod_security import tenant_namespaces

NETWORKING_GROUP = "networking.k8s.io"
ADVANCED_DATAPATH = "ADVANCED_DATAPATH"


def enforces_policies(cluster: GkeCluster) -> bool | None:
    """Whether GKE enforces NetworkPolicy on ``cluster``; None when unknown until apply."""
    res = cluster.res
    datapath = res.get("datapathProvider")
    calico = res.get("networkPolicy", "enabled")
    addon_disabled = res.get("addonsConfig", "networkPolicyConfig", "disabled")
    if datapath == ADVANCED_DATAPATH:
        return True
    if calico is True and addon_disabled is False:
        return True
    if any(isinstance(v, Unknown) for v in (datapath, calico, addon_disabled)):
        return None
    return False


def network_policies(model: StackModel) -> list[KubeObject]:
    return model.kube_objects(NETWORKING_GROUP, "NetworkPolicy")


def check_enforced(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    clusters = model.gke_clusters()
    policies = network_policies(model)
    if not clusters or not policies:
        return
    verdicts = [enforces_policies(c) for c in clusters]
    if True in verdicts:
        return
    for policy in policies:
        if None in verdicts:
            reporter.cannot_check(policy, "whether the cluster enforces NetworkPolicy is unknown until apply")
            continue
        reporter.violation(
            policy,
            "no GKE cluster of the stack enforces NetworkPolicy (neither Dataplane V2 nor the Calico "
            "add-on), so this policy is stored and never applied: every pod stays reachable",
            "set the cluster's datapathProvider: ADVANCED_DATAPATH (gpu-batch:cluster.dataplaneV2: "
            "true; a new cluster) or enable its network policy add-on",
        )


def isolates_ingress(policy: KubeObject) -> bool:
    """``podSelector: {}`` (every pod) with Ingress among the policy types: every pod of the
    namespace then takes only what some policy allows."""
    spec = policy.spec
    selector = dig(spec, "podSelector")
    types = dig(spec, "policyTypes")
    empty = isinstance(selector, Mapping) and not any(
        dig(selector, k) for k in ("matchLabels", "matchExpressions")
    )
    # policyTypes unset means Ingress (plus Egress when egress rules exist): API reference.
    has_ingress = types is None or (isinstance(types, list) and "Ingress" in types)
    return empty and has_ingress


def check_default_deny(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    isolated = {p.namespace for p in network_policies(model) if isolates_ingress(p)}
    # Open world: only namespaces this stack creates or patches; another stack may own the rest
    # (and their NetworkPolicies).
    declared = {ns.obj.name for ns in model.namespaces()} | {
        p.name for p in model.kube_objects(CORE_GROUP, NAMESPACE_PATCH)
    }
    for namespace, subject in tenant_namespaces(model).items():
        if namespace in isolated or namespace not in declared:
            continue
        reporter.violation(
            subject,
            f"tenant namespace {namespace} has no NetworkPolicy isolating its pods for ingress: every "
            "pod of every other namespace reaches its Ray heads (8265, 6379) and servers",
            "add a NetworkPolicy with podSelector: {} and policyTypes: [Ingress], and allow the "
            "namespace itself and the platform's namespaces",
        )


POLICIES: list[Policy] = [
    stack_policy(
        "networkpolicy-enforced",
        "A NetworkPolicy lives in a GKE cluster that enforces it (Dataplane V2 or the Calico add-on).",
        check_enforced,
    ),
    stack_policy(
        "namespace-default-deny",
        "A namespace where tenants run work isolates its pods for ingress (default deny).",
        check_default_deny,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
]
