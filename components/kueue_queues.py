"""Kueue's queue objects as code, in the v1beta2 API (Kueue's storage version since 0.16).

Why v1beta2 and not the seeds' v1beta1: Kueue 0.19.2 still *serves* v1beta1 but converts it
through its webhook, and v1beta2 renamed or removed fields the seeds use -- ClusterQueue
``cohort`` is ``cohortName`` and the ``admissionChecks`` name list is gone in favour of
``admissionChecksStrategy.admissionChecks[{name, onFlavors}]`` (reference/kueue.md §1).  A
v1beta1 field on a v1beta2 object is pruned silently by the API server, so every object here is
validated against the upstream CRD before deploy (preview/manifests.py).

Objects: ResourceFlavors, ProvisioningRequestConfigs with their AdmissionChecks, Cohorts,
ClusterQueues, LocalQueues and WorkloadPriorityClasses.  All are cluster-scoped except
LocalQueues.  Names are plain strings so a reviewer (and the policy pack) can resolve every
reference at preview time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi

from components.k8s_object import KubeObject, compact, inherited_depends_on

API_VERSION = "kueue.x-k8s.io/v1beta2"
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
MANAGED_BY = {"app.kubernetes.io/managed-by": "pulumi"}
# On a ClusterQueue whose resource group lists flavors of different GPU types on purpose: the
# policy pack's kueue-flavors-mix-accelerator-types then accepts it (policies/README.md, issue 21).
ACCELERATOR_MIXING_ANNOTATION = "gpu-batch/accelerator-mixing"
ACCELERATOR_MIXING_ALLOWED = "allowed"


@dataclass(frozen=True)
class Toleration:
    key: str
    effect: str = "NoSchedule"
    operator: str = "Exists"
    value: str | None = None

    def render(self) -> dict[str, str]:
        out = {"key": self.key, "operator": self.operator, "effect": self.effect}
        if self.value is not None:
            out["value"] = self.value
        return out


@dataclass(frozen=True)
class FlavorArgs:
    """A ResourceFlavor: node labels to select and tolerations added to admitted pods."""

    name: str
    node_labels: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Toleration, ...] = ()
    # Kueue TAS: the Topology whose levels the flavor's nodes are placed by (None: no TAS).
    topology_name: str | None = None


@dataclass(frozen=True)
class TopologyArgs:
    """A Kueue ``Topology``: node labels from the widest domain to the single node."""

    name: str
    levels: tuple[str, ...]


@dataclass(frozen=True)
class RetryArgs:
    backoff_limit_count: int
    backoff_base_seconds: int
    backoff_max_seconds: int


@dataclass(frozen=True)
class ProvisioningCheckArgs:
    """An AdmissionCheck of the ProvisioningRequest controller and its ProvisioningRequestConfig."""

    name: str
    provisioning_class_name: str
    managed_resources: tuple[str, ...] = ()
    pod_set_merge_policy: str | None = None
    parameters: Mapping[str, str] = field(default_factory=dict)
    retry: RetryArgs | None = None

    @property
    def config_name(self) -> str:
        return f"{self.name}-config"


@dataclass(frozen=True)
class Quota:
    """One resource of one flavor; quantities as written (int or Kubernetes quantity string)."""

    resource: str
    nominal: str
    borrowing_limit: str | None = None
    lending_limit: str | None = None


@dataclass(frozen=True)
class FlavorQuotas:
    flavor: str
    quotas: tuple[Quota, ...]


@dataclass(frozen=True)
class ResourceGroup:
    covered_resources: tuple[str, ...]
    flavors: tuple[FlavorQuotas, ...]


@dataclass(frozen=True)
class Preemption:
    within_cluster_queue: str = "Never"
    reclaim_within_cohort: str = "Never"
    borrow_within_cohort: str = "Never"
    max_priority_threshold: int | None = None


@dataclass(frozen=True)
class CheckUse:
    name: str
    on_flavors: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClusterQueueArgs:
    name: str
    resource_groups: tuple[ResourceGroup, ...]
    # The rendered LabelSelector; None omits it, which admits *no* namespace (kueue.md §2).
    namespace_selector: Mapping[str, Any] | None
    cohort: str | None = None
    queueing_strategy: str = "BestEffortFIFO"
    preemption: Preemption = field(default_factory=Preemption)
    fair_sharing_weight: str | None = None
    admission_checks: tuple[CheckUse, ...] = ()
    # Flavors of different GPU types in one group are intended: annotate the queue so.
    mix_accelerator_types: bool = False


@dataclass(frozen=True)
class CohortArgs:
    name: str
    parent: str | None = None
    fair_sharing_weight: str | None = None
    resource_groups: tuple[ResourceGroup, ...] = ()


@dataclass(frozen=True)
class LocalQueueArgs:
    name: str
    namespace: str
    cluster_queue: str


@dataclass(frozen=True)
class PriorityClassArgs:
    name: str
    value: int
    description: str | None = None


@dataclass(frozen=True)
class KueueQueuesArgs:
    topologies: tuple[TopologyArgs, ...] = ()
    flavors: tuple[FlavorArgs, ...] = ()
    checks: tuple[ProvisioningCheckArgs, ...] = ()
    cohorts: tuple[CohortArgs, ...] = ()
    cluster_queues: tuple[ClusterQueueArgs, ...] = ()
    local_queues: tuple[LocalQueueArgs, ...] = ()
    priority_classes: tuple[PriorityClassArgs, ...] = ()
    # Resources a LocalQueue must wait for, by namespace (the team's Namespace object).
    namespaces: Mapping[str, pulumi.Resource] = field(default_factory=dict)
    # Starts every child's Pulumi name: one program may declare the same queues on several
    # clusters (MultiKueue workers); "" keeps a single cluster's names.
    name_prefix: str = ""


def flavor_spec(flavor: FlavorArgs) -> dict[str, Any]:
    return compact(
        {
            "nodeLabels": dict(flavor.node_labels),
            "tolerations": [t.render() for t in flavor.tolerations],
            "topologyName": flavor.topology_name,
        }
    )


def resource_groups(groups: Sequence[ResourceGroup]) -> list[dict[str, Any]]:
    """Kueue requires ``resources[i].name == coveredResources[i]``: rendered in that order."""
    rendered = []
    for group in groups:
        flavors = []
        for flavor in group.flavors:
            by_name = {q.resource: q for q in flavor.quotas}
            flavors.append(
                {"name": flavor.flavor, "resources": [_quota(by_name[r]) for r in group.covered_resources]}
            )
        rendered.append({"coveredResources": list(group.covered_resources), "flavors": flavors})
    return rendered


def _quota(quota: Quota) -> dict[str, Any]:
    return compact(
        {
            "name": quota.resource,
            "nominalQuota": quota.nominal,
            "borrowingLimit": quota.borrowing_limit,
            "lendingLimit": quota.lending_limit,
        }
    )


# GKE's queued-provisioning class, and the node label GKE puts on the nodes it creates for one
# ProvisioningRequest.  Without a nodeSelector on it, a gang's pods may land on nodes provisioned
# for another gang (xpk src/xpk/templates/kueue_config.yaml.j2 and Kueue v0.19.2
# site/content/en/docs/concepts/admission_check/provisioning_request.md "podSetUpdates").
QUEUED_PROVISIONING_CLASS = "queued-provisioning.gke.io"
QUEUED_PROVISIONING_NODE_SELECTOR = {
    "key": "autoscaling.gke.io/provisioning-request",
    "valueFromProvisioningClassDetail": "ResizeRequestName",
}


def provisioning_config_spec(check: ProvisioningCheckArgs) -> dict[str, Any]:
    retry = check.retry
    queued = check.provisioning_class_name == QUEUED_PROVISIONING_CLASS
    return compact(
        {
            "provisioningClassName": check.provisioning_class_name,
            "podSetUpdates": {"nodeSelector": [dict(QUEUED_PROVISIONING_NODE_SELECTOR)]} if queued else None,
            "managedResources": list(check.managed_resources),
            "podSetMergePolicy": check.pod_set_merge_policy,
            "parameters": dict(check.parameters),
            "retryStrategy": {
                "backoffLimitCount": retry.backoff_limit_count,
                "backoffBaseSeconds": retry.backoff_base_seconds,
                "backoffMaxSeconds": retry.backoff_max_seconds,
            }
            if retry is not None
            else None,
        }
    )


def admission_check_spec(check: ProvisioningCheckArgs) -> dict[str, Any]:
    return {
        "controllerName": PROVISIONING_CONTROLLER,
        "parameters": {
            "apiGroup": "kueue.x-k8s.io",
            "kind": "ProvisioningRequestConfig",
            "name": check.config_name,
        },
    }


def cluster_queue_spec(cq: ClusterQueueArgs) -> dict[str, Any]:
    """Every preemption field is written out, defaults included: in a cohort the reader (and the
    policy pack) should not have to remember Kueue's defaults to know who can evict whom."""
    preemption = cq.preemption
    checks = [compact({"name": use.name, "onFlavors": list(use.on_flavors)}) for use in cq.admission_checks]
    spec = compact(
        {
            "resourceGroups": resource_groups(cq.resource_groups),
            "cohortName": cq.cohort,
            "queueingStrategy": cq.queueing_strategy,
            "preemption": {
                "withinClusterQueue": preemption.within_cluster_queue,
                "reclaimWithinCohort": preemption.reclaim_within_cohort,
                "borrowWithinCohort": compact(
                    {
                        "policy": preemption.borrow_within_cohort,
                        "maxPriorityThreshold": preemption.max_priority_threshold,
                    }
                ),
            },
            "fairSharing": {"weight": cq.fair_sharing_weight} if cq.fair_sharing_weight is not None else None,
            "admissionChecksStrategy": {"admissionChecks": checks} if checks else None,
        }
    )
    # Not through compact: {} (every namespace) and an omitted selector (no namespace) differ.
    if cq.namespace_selector is not None:
        spec["namespaceSelector"] = dict(cq.namespace_selector)
    return spec


def cohort_spec(cohort: CohortArgs) -> dict[str, Any]:
    return compact(
        {
            "parentName": cohort.parent,
            "fairSharing": {"weight": cohort.fair_sharing_weight}
            if cohort.fair_sharing_weight is not None
            else None,
            "resourceGroups": resource_groups(cohort.resource_groups),
        }
    )


class KueueQueues(pulumi.ComponentResource):
    """Every Kueue queue object of a stack, in dependency order.

    Order inside one ``pulumi up``: flavors, provisioning configs, checks, cohorts and priority
    classes first, then ClusterQueues (which reference them), then LocalQueues.  Kueue accepts
    dangling references, but a ClusterQueue created before its flavor or check starts inactive
    and emits warnings, so the dependencies are explicit.  ``opts.depends_on`` should name the
    Kueue release: its validating webhooks must be serving before any of these is created.
    """

    cluster_queues: dict[str, KubeObject]
    local_queues: dict[str, KubeObject]

    def __init__(self, name: str, args: KueueQueuesArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-batch:kueue:Queues", name, None, opts)
        after = inherited_depends_on(opts)

        def child(depends_on: Sequence[pulumi.Resource] = ()) -> pulumi.ResourceOptions:
            return pulumi.ResourceOptions(parent=self, depends_on=[*after, *depends_on])

        def obj(
            kind: str,
            obj_name: str,
            *,
            spec: Mapping[str, Any] | None = None,
            namespace: str | None = None,
            fields: Mapping[str, Any] | None = None,
            depends_on: Sequence[pulumi.Resource] = (),
            annotations: Mapping[str, str] | None = None,
        ) -> KubeObject:
            metadata: dict[str, Any] = {"name": obj_name, "labels": dict(MANAGED_BY)}
            if annotations:
                metadata["annotations"] = dict(annotations)
            if namespace is not None:
                metadata["namespace"] = namespace
            resource = f"{namespace}/{obj_name}" if namespace else obj_name
            return KubeObject(
                f"{args.name_prefix}{kind.lower()}-{resource.replace('/', '-')}",
                api_version=API_VERSION,
                kind=kind,
                metadata=metadata,
                spec=spec,
                fields=fields,
                opts=child(depends_on),
            )

        referenced: list[pulumi.Resource] = []
        # A TAS flavor's Topology first: Kueue keeps a flavor naming a missing Topology out of TAS.
        topologies = {
            t.name: obj("Topology", t.name, spec={"levels": [{"nodeLabel": label} for label in t.levels]})
            for t in args.topologies
        }
        for flavor in args.flavors:
            after_topology = [topologies[flavor.topology_name]] if flavor.topology_name in topologies else []
            referenced.append(
                obj("ResourceFlavor", flavor.name, spec=flavor_spec(flavor), depends_on=after_topology)
            )
        for check in args.checks:
            prc = obj("ProvisioningRequestConfig", check.config_name, spec=provisioning_config_spec(check))
            referenced.append(
                obj("AdmissionCheck", check.name, spec=admission_check_spec(check), depends_on=[prc])
            )
        cohorts: list[pulumi.Resource] = []
        for cohort in args.cohorts:
            cohorts.append(obj("Cohort", cohort.name, spec=cohort_spec(cohort), depends_on=referenced))
        for pc in args.priority_classes:
            fields: dict[str, Any] = {"value": pc.value}
            if pc.description:
                fields["description"] = pc.description
            obj("WorkloadPriorityClass", pc.name, fields=fields)
        self.cluster_queues = {
            cq.name: obj(
                "ClusterQueue",
                cq.name,
                spec=cluster_queue_spec(cq),
                depends_on=[*referenced, *cohorts],
                annotations={ACCELERATOR_MIXING_ANNOTATION: ACCELERATOR_MIXING_ALLOWED}
                if cq.mix_accelerator_types
                else None,
            )
            for cq in args.cluster_queues
        }
        self.local_queues = {}
        for lq in args.local_queues:
            waits: list[pulumi.Resource] = []
            if lq.cluster_queue in self.cluster_queues:
                waits.append(self.cluster_queues[lq.cluster_queue])
            if lq.namespace in args.namespaces:
                waits.append(args.namespaces[lq.namespace])
            self.local_queues[f"{lq.namespace}/{lq.name}"] = obj(
                "LocalQueue",
                lq.name,
                namespace=lq.namespace,
                spec={"clusterQueue": lq.cluster_queue},
                depends_on=waits,
            )
        self.register_outputs(
            {"clusterQueues": list(self.cluster_queues), "localQueues": list(self.local_queues)}
        )
