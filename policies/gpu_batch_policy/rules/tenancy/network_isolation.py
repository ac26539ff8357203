"""NetworkPolicies that a cluster enforces, and tenant namespaces they isolate (issues 27 item 3, 45).

* **networkpolicy-enforced** (mandatory: the policy cannot work).  GKE enforces NetworkPolicy only
  with Dataplane V2 (``datapathProvider: ADVANCED_DATAPATH``) or the Calico add-on
  (``networkPolicy.enabled: true`` with ``addonsConfig.networkPolicyConfig.disabled: false``)
  (GKE docs, how-to/network-policy and concepts/dataplane-v2; field names of
  terraform-provider-google resource_container_cluster.go ``datapath_provider``,
  ``network_policy``, ``addons_config.network_policy_config``).  Elsewhere the API server stores
  a NetworkPolicy and nothing applies it: every pod stays reachable from every other.  Judged
  per cluster: a policy sent through a Kubernetes provider whose kubeconfig depends on one GKE
  cluster is judged against that cluster (``StackModel.cluster_key``), so a worker without
  Dataplane V2 is caught even when the manager has it.
* **namespace-default-deny** (advisory; raised in prod's, skypilot's and multiregion's config): a
  tenant namespace the stack creates or patches (one holding a LocalQueue or a Ray workload, as
  in :mod:`.pod_security`) with no NetworkPolicy *on the same cluster* that isolates all its pods
  for ingress (``podSelector: {}`` and ``Ingress`` in ``policyTypes``), or whose GKE cluster
  enforces no NetworkPolicy at all.  Without either, every pod of every other namespace reaches
  its Ray heads (job API 8265, GCS 6379) and servers.
* **tenant-isolation-uniform** (mandatory): the program isolates the tenant namespaces of one
  cluster (enforced, default-deny) and leaves a tenant namespace of another cluster open.  The
  program means to isolate tenants and one cluster silently does not (a MultiKueue worker added
  without Dataplane V2, issue 45): the guarantee the other clusters give does not hold there.

Issue 45's blind spots, closed here for any program: ``networkpolicy-enforced`` read only the
NetworkPolicies a stack declares (a stack declaring none had nothing to flag) and passed when
*any* GKE cluster of the stack enforced them; ``namespace-default-deny`` matched namespaces by
name across clusters, so a ``research`` namespace isolated on the manager hid an open
``research`` on each worker.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_policy import EnforcementLevel, Policy

from ...facts.model import KubeObject, Resource, StackModel
from ...facts.model.gke import GkeCluster
from ...facts.selectors import CORE_GROUP, NAMESPACE_PATCH
from ...primitives.values import Unknown, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter
from .pod_security import SYSTEM_NAMESPACES

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


def cluster_verdict(model: StackModel, obj: Resource) -> tuple[GkeCluster | None, bool | None]:
    """The GKE cluster ``obj`` goes to and whether it enforces NetworkPolicy (None: unknown).

    The cluster is the one its provider's kubeconfig depends on (``StackModel.cluster_key``); a
    provider depending on no single GKE cluster of the program (the default provider, a cluster
    made elsewhere) reaches the program's only GKE cluster when there is one, else any of them:
    one that enforces passes, as before issue 45."""
    clusters = model.gke_clusters()
    key = model.cluster_key(obj)
    linked = [c for c in clusters if c.urn == key]
    if linked:
        return linked[0], enforces_policies(linked[0])
    if len(clusters) == 1:
        return clusters[0], enforces_policies(clusters[0])
    verdicts = [enforces_policies(c) for c in clusters]
    if True in verdicts:
        return None, True
    return None, None if None in verdicts else False


def check_enforced(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    if not model.gke_clusters():
        return
    for policy in network_policies(model):
        cluster, verdict = cluster_verdict(model, policy)
        if verdict is True:
            continue
        where = f"its GKE cluster {cluster.name}" if cluster is not None else "no GKE cluster of the stack"
        if verdict is None:
            reporter.cannot_check(policy, f"whether {where} enforces NetworkPolicy is unknown until apply")
            continue
        reporter.violation(
            policy,
            f"{where} enforces NetworkPolicy (neither Dataplane V2 nor the Calico add-on), so this "
            "policy is stored and never applied: every pod stays reachable",
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


@dataclass(frozen=True)
class TenantNamespace:
    """One tenant namespace on one cluster, and whether its pods are isolated for ingress there."""

    cluster: str
    name: str
    subject: Any
    declared: bool
    default_deny: bool
    enforced: bool | None
    gke: GkeCluster | None

    @property
    def isolated(self) -> bool:
        return self.default_deny and self.enforced is True


def tenant_namespaces_by_cluster(model: StackModel) -> list[TenantNamespace]:
    """Every (cluster, namespace) holding a LocalQueue or a Ray workload, in a stable order."""

    def build() -> list[TenantNamespace]:
        key = model.cluster_key
        isolated = {(key(p), p.namespace) for p in network_policies(model) if isolates_ingress(p)}
        declared: dict[tuple[str, str], Any] = {(key(ns.obj), ns.obj.name): ns for ns in model.namespaces()}
        declared.update({(key(p), p.name): p for p in model.kube_objects(CORE_GROUP, NAMESPACE_PATCH)})
        holders: dict[tuple[str, str], Any] = {}
        for holder in [*model.ray_workloads(), *model.local_queues()]:
            ns = holder.obj.namespace
            if isinstance(ns, str) and ns not in SYSTEM_NAMESPACES:
                holders.setdefault((key(holder.obj), ns), holder)
        out = []
        for (cluster, ns), holder in sorted(holders.items()):
            subject = declared.get((cluster, ns))
            gke, verdict = cluster_verdict(model, holder.obj)
            out.append(
                TenantNamespace(
                    cluster,
                    ns,
                    subject if subject is not None else holder,
                    subject is not None,
                    (cluster, ns) in isolated,
                    verdict if model.gke_clusters() else None,
                    gke,
                )
            )
        return out

    return model.memo("tenant_namespaces_by_cluster", build)


def check_default_deny(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    # Open world: only namespaces this stack creates or patches; another stack may own the rest
    # (and their NetworkPolicies).
    for tenant in tenant_namespaces_by_cluster(model):
        if not tenant.declared:
            continue
        if not tenant.default_deny:
            reporter.violation(
                tenant.subject,
                f"tenant namespace {tenant.name} has no NetworkPolicy isolating its pods for "
                "ingress on its cluster: every pod of every other namespace reaches its Ray heads (8265, "
                "6379) and servers",
                "add a NetworkPolicy with podSelector: {} and policyTypes: [Ingress], and allow the "
                "namespace itself and the platform's namespaces",
            )
        elif tenant.enforced is False and tenant.gke is not None:
            reporter.violation(
                tenant.subject,
                f"tenant namespace {tenant.name} lives on GKE cluster {tenant.gke.name}, which "
                "enforces no NetworkPolicy: its default deny is never applied",
                "set the cluster's datapathProvider: ADVANCED_DATAPATH (gpu-batch:cluster.dataplaneV2: true)",
            )


def check_uniform(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    tenants = [t for t in tenant_namespaces_by_cluster(model) if t.declared]
    isolated_on = {t.cluster for t in tenants if t.isolated}
    if not isolated_on:
        return
    for tenant in tenants:
        if tenant.isolated or tenant.cluster in isolated_on or tenant.enforced is None:
            continue
        why = (
            "has no default-deny NetworkPolicy"
            if not tenant.default_deny
            else "is on a cluster that enforces none"
        )
        reporter.violation(
            tenant.subject,
            f"the program isolates tenant namespaces on another cluster, but tenant namespace "
            f"{tenant.name} here {why}: the isolation the other clusters give does not hold on this one",
            "give every cluster holding tenant namespaces Dataplane V2 and the same per-namespace "
            "NetworkPolicies (gpu-batch:cluster.dataplaneV2 / multiKueue.workers[].cluster.dataplaneV2: true)",
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
    stack_policy(
        "tenant-isolation-uniform",
        "A program that isolates tenant namespaces on one cluster isolates them on every cluster.",
        check_uniform,
    ),
]
