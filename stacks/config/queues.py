"""Config of the Kueue objects (key ``gpu-batch:kueueQueues``), rendered as Kueue v1beta2.

Field names follow the Kueue v1beta2 API where one exists (``cohortName`` is spelled
``cohort`` here because it must name a Cohort this key declares), so a reader who knows Kueue
recognises them; reference/kueue.md §2-3 lists the upstream fields, limits and defaults.
Cross-key rules (references, quota arithmetic) live in :mod:`stacks.checks.queue`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    Field,
    ModelWrapValidatorHandler,
    StringConstraints,
    ValidationError,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from stacks.base import ConfigModel, DnsLabel, NonEmptyStr, NonNegativeInt, known_keys
from stacks.errors import suggest
from stacks.quantity import Quantity
from stacks.workload_templates import merge

# Cluster-scoped Kueue object names are DNS-1123 subdomains of at most 253 characters.
DnsSubdomain = Annotated[
    str,
    StringConstraints(
        min_length=1,
        max_length=253,
        pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
    ),
]
# Resource names are qualified names (``cpu``, ``nvidia.com/gpu``), kueue.md §4 rule 7.
ResourceName = Annotated[
    str,
    StringConstraints(
        min_length=1,
        max_length=316,
        pattern=r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
        r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$",
    ),
]

QUEUED_PROVISIONING_CLASS = "queued-provisioning.gke.io"
CHECK_CAPACITY_CLASS = "check-capacity.autoscaling.x-k8s.io"
BEST_EFFORT_ATOMIC_CLASS = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
ProvisioningClass = Literal[
    "queued-provisioning.gke.io",
    "check-capacity.autoscaling.x-k8s.io",
    "best-effort-atomic-scale-up.autoscaling.x-k8s.io",
]
DEFAULT_COVERED_RESOURCES = ("cpu", "memory", "nvidia.com/gpu")


# GKE caps a ProvisioningRequest's maxRunDurationSeconds at 7 days, its default (kueue.md §7).
MAX_RUN_DURATION_SECONDS = 7 * 24 * 3600


def _provisioning_parameter(value: str) -> str:
    """A ProvisioningRequest parameter value: never empty (an empty ``maxRunDurationSeconds`` is
    not "no limit", it is a request GKE rejects)."""
    if not value:
        raise ValueError("expected a non-empty value, e.g. maxRunDurationSeconds: '86400'")
    return value


ProvisioningParameter = Annotated[str, AfterValidator(_provisioning_parameter)]


class ResourceFlavorConfig(ConfigModel):
    """A ResourceFlavor: which nodes an admitted workload's pods are steered to."""

    name: DnsSubdomain = Field(description="ResourceFlavor name; ClusterQueues list it under flavors.")
    pool: DnsLabel | None = Field(
        None,
        description="A GPU pool (or the system pool) whose nodes the flavor selects, with tolerations "
        "for its taints; omitted: any node (the seeds' default-flavor).",
    )
    node_labels: dict[str, str] = Field(
        default_factory=dict,
        description="Extra node labels to select on, besides the pool's (at most 8 labels in all).",
    )
    topology: bool = Field(
        False,
        description="Kueue topology-aware scheduling on this flavor: topologyName of the pool's GPU family "
        "(gke-default: block, subblock, host, hostname; a4x-default adds the node pool as third level), "
        "as cluster-toolkit's gke-a3-megagpu / gke-a3-ultragpu / gke-a4 / gke-a4x blueprints declare it. "
        "Only for a GPU pool of a machine type GKE labels with cloud.google.com/gce-topology-*.",
    )


class RetryStrategyConfig(ConfigModel):
    """How Kueue retries a failed ProvisioningRequest (CRD defaults: 3, 60 s, 1800 s)."""

    backoff_limit_count: NonNegativeInt = Field(3, description="Retries; 0 turns retries off.")
    backoff_base_seconds: NonNegativeInt = Field(60, description="First back-off, doubled per retry.")
    backoff_max_seconds: NonNegativeInt = Field(1800, description="Longest back-off.")


class AdmissionCheckConfig(ConfigModel):
    """An AdmissionCheck driven by Kueue's ProvisioningRequest controller, with its config object."""

    name: DnsSubdomain = Field(
        description="AdmissionCheck name; its ProvisioningRequestConfig is <name>-config."
    )
    provisioning_class_name: ProvisioningClass = Field(
        description="queued-provisioning.gke.io (DWS, queued pools only), check-capacity.autoscaling.x-k8s.io "
        "(capacity already in the cluster) or best-effort-atomic-scale-up.autoscaling.x-k8s.io."
    )
    managed_resources: list[ResourceName] = Field(
        default_factory=list,
        description="Only pod sets requesting one of these get capacity requested (e.g. [nvidia.com/gpu], "
        "which keeps a CPU-only Ray head out); empty: every pod set.",
    )
    pod_set_merge_policy: (
        Literal["IdenticalPodTemplates", "IdenticalWorkloadSchedulingRequirements"] | None
    ) = Field(
        None,
        description="Merge pod sets into one request (GKE serves one pod set per ProvisioningRequest); "
        "omitted: never merge.",
    )
    parameters: dict[str, ProvisioningParameter] = Field(
        default_factory=dict,
        description="ProvisioningRequest parameters, e.g. maxRunDurationSeconds: '86400'.",
    )
    retry_strategy: RetryStrategyConfig | None = Field(
        None, description="Retry back-off; omitted: Kueue's defaults."
    )


class ResourceQuotaConfig(ConfigModel):
    """Quota of one resource in one flavor."""

    nominal_quota: Quantity = Field(
        description="Guaranteed amount (a quantity string: '16', '500m', '64Gi')."
    )
    borrowing_limit: Quantity | None = Field(
        None, description="Most it may borrow from its cohort; needs a cohort. Omitted: no limit."
    )
    lending_limit: Quantity | None = Field(
        None,
        description="Most of nominalQuota it lends to its cohort (<= nominalQuota); needs a cohort. "
        "Omitted: all of it.",
    )


class FlavorQuotaConfig(ConfigModel):
    """One flavor of a resource group with a quota for every covered resource."""

    name: DnsSubdomain = Field(description="A flavor declared under resourceFlavors.")
    resources: dict[ResourceName, ResourceQuotaConfig] = Field(
        description="Quota per covered resource, keyed by resource name (exactly the coveredResources)."
    )


class ResourceGroupConfig(ConfigModel):
    """Resources that are assigned one flavor together, and the flavors tried in order."""

    covered_resources: list[ResourceName] = Field(
        default_factory=lambda: list(DEFAULT_COVERED_RESOURCES),
        min_length=1,
        max_length=64,
        description="Resources this group governs; default cpu, memory, nvidia.com/gpu.",
    )
    flavors: list[FlavorQuotaConfig] = Field(
        min_length=1, max_length=64, description="Flavors in the order Kueue tries them."
    )


class PreemptionConfig(ConfigModel):
    """When an incoming workload may evict admitted ones (Kueue defaults: never)."""

    within_cluster_queue: Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"] = Field(
        "Never", description="Preempt lower-priority workloads of the same ClusterQueue."
    )
    reclaim_within_cohort: Literal["Never", "LowerPriority", "Any"] = Field(
        "Never", description="Reclaim lent quota from other ClusterQueues of the cohort."
    )
    borrow_within_cohort: Literal["Never", "LowerPriority"] = Field(
        "Never", description="Preempt in the cohort while borrowing; needs reclaimWithinCohort != Never."
    )
    max_priority_threshold: int | None = Field(
        None,
        ge=-(2**31),
        le=2**31 - 1,
        description="With borrowWithinCohort LowerPriority: only preempt workloads at or below this priority.",
    )


class AdmissionCheckUseConfig(ConfigModel):
    """An admission check a ClusterQueue applies."""

    name: DnsSubdomain = Field(description="An admission check declared under admissionChecks.")
    on_flavors: list[DnsSubdomain] = Field(
        default_factory=list, description="Flavors of this queue it applies to; empty: all of them."
    )


class ClusterQueueConfig(ConfigModel):
    """A ClusterQueue: a pool of quota, shared (one for all teams) or per team."""

    name: DnsSubdomain = Field(description="ClusterQueue name; teams point their LocalQueue at it.")
    template: DnsLabel | None = Field(
        None,
        description="A clusterQueueTemplates entry whose keys this queue starts from (its own keys win).",
    )
    cohort: DnsSubdomain | None = Field(
        None, description="A Cohort declared under cohorts, to borrow and lend quota (Kueue cohortName)."
    )
    admit_namespaces: Literal["teams", "all"] = Field(
        "teams",
        description="teams: namespaceSelector admits only the namespaces of teams whose LocalQueue points "
        "here; all: {} admits every namespace, as the seeds do.",
    )
    queueing_strategy: Literal["BestEffortFIFO", "StrictFIFO"] = Field(
        "BestEffortFIFO", description="StrictFIFO blocks the queue behind a workload that does not fit."
    )
    preemption: PreemptionConfig = Field(
        default_factory=lambda: PreemptionConfig.model_validate({}),
        description="Preemption policy (see preemption.* keys).",
    )
    fair_sharing_weight: Quantity | None = Field(
        None, description="Share of the cohort's unused quota under fair sharing; omitted: 1."
    )
    admission_checks: list[AdmissionCheckUseConfig] = Field(
        default_factory=list,
        max_length=64,
        description="Checks a workload must pass before admission (v1beta2 admissionChecksStrategy).",
    )
    resource_groups: list[ResourceGroupConfig] = Field(
        min_length=1, max_length=16, description="Quotas by resource group and flavor."
    )
    mix_accelerator_types: bool = Field(
        False,
        description="Allow one resource group to list flavors of different GPU types (Kueue then admits "
        "a job that does not fit the first on the next, e.g. L4 -> H100); default false: one GPU type "
        "per ClusterQueue.",
    )


class CohortConfig(ConfigModel):
    """A Cohort: ClusterQueues (and child Cohorts) that borrow from one another."""

    name: DnsSubdomain = Field(description="Cohort name; ClusterQueues join it with cohort: <name>.")
    parent: DnsSubdomain | None = Field(
        None, description="Parent Cohort (declared here) for a hierarchy; omitted: a root cohort."
    )
    fair_sharing_weight: Quantity | None = Field(
        None, description="Weight of this cohort within its parent under fair sharing; omitted: 1."
    )
    resource_groups: list[ResourceGroupConfig] = Field(
        default_factory=list,
        max_length=16,
        description="Extra quota owned by the cohort itself, on top of its members'; borrowing and "
        "lending limits need a parent.",
    )


class PriorityClassConfig(ConfigModel):
    """A WorkloadPriorityClass; jobs name it with the kueue.x-k8s.io/priority-class label."""

    name: DnsSubdomain = Field(description="Class name, e.g. prod-priority.")
    value: int = Field(ge=-(2**31), le=2**31 - 1, description="Priority; higher wins and may preempt.")
    description: NonEmptyStr | None = Field(None, max_length=2048, description="What the class is for.")


class KueueQueuesConfig(ConfigModel):
    """All Kueue queue objects of the stack."""

    resource_flavors: list[ResourceFlavorConfig] = Field(
        default_factory=list, description="ResourceFlavors (see resourceFlavors[].* keys)."
    )
    admission_checks: list[AdmissionCheckConfig] = Field(
        default_factory=list, description="ProvisioningRequest admission checks (see admissionChecks[].*)."
    )
    cohorts: list[CohortConfig] = Field(default_factory=list, description="Cohorts (see cohorts[].* keys).")
    cluster_queue_templates: dict[DnsLabel, dict[str, Any]] = Field(
        default_factory=dict,
        description="Named ClusterQueue settings many queues share (any clusterQueues[] key but name), "
        "so a stack of many teams stays small.",
    )
    cluster_queues: list[ClusterQueueConfig] = Field(
        default_factory=list, description="ClusterQueues (see clusterQueues[].* keys)."
    )
    priority_classes: list[PriorityClassConfig] = Field(
        default_factory=list, description="WorkloadPriorityClasses (see priorityClasses[].* keys)."
    )

    @model_validator(mode="wrap")
    @classmethod
    def _expand_templates(
        cls, data: Any, handler: ModelWrapValidatorHandler[KueueQueuesConfig]
    ) -> KueueQueuesConfig:
        """Merge each ClusterQueue over its template (mappings key by key), then validate.

        A queue naming a template that does not exist is reported alone, at its own ``template``
        key: the keys the template would have supplied are missing too, and listing them would
        bury the one mistake.
        """
        if not isinstance(data, dict) or not isinstance(data.get("clusterQueueTemplates"), dict):
            return handler(data)
        templates = data["clusterQueueTemplates"]
        unknown: list[InitErrorDetails] = list(_template_key_errors(templates))
        queues = data.get("clusterQueues")
        if not isinstance(queues, list):
            queues = []
        expanded = []
        for index, queue in enumerate(queues):
            name = queue.get("template") if isinstance(queue, dict) else None
            if name is None or not isinstance(name, str):
                expanded.append(queue)
            elif name in templates and isinstance(templates[name], dict):
                expanded.append(merge(templates[name], queue))
            else:
                known = ", ".join(sorted(templates)) or "none"
                unknown.append(
                    InitErrorDetails(
                        type=PydanticCustomError(
                            "value_error",
                            "expected the name of a clusterQueueTemplates entry ({known})",
                            {"known": known},
                        ),
                        loc=("clusterQueues", index, "template"),
                        input=name,
                    )
                )
        if unknown:
            raise ValidationError.from_exception_data("KueueQueuesConfig", unknown)
        return handler({**data, "clusterQueues": expanded} if "clusterQueues" in data else data)


def _template_key_errors(templates: dict[str, Any]) -> list[InitErrorDetails]:
    """A typo in a template is caught even before any queue uses it, at the template's own key."""
    accepted = sorted(set(known_keys(ClusterQueueConfig)) - {"name", "template"})
    errors: list[InitErrorDetails] = []
    for name, template in templates.items():
        for key in template if isinstance(template, dict) else ():
            if key not in accepted:
                errors.append(
                    InitErrorDetails(
                        type=PydanticCustomError(
                            "value_error",
                            "expected a ClusterQueue key{hint}; a template accepts {accepted}",
                            {"hint": suggest(key, accepted), "accepted": ", ".join(accepted)},
                        ),
                        loc=("clusterQueueTemplates", name, key),
                        input=key,
                    )
                )
    return errors
