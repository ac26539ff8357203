"""Kueue's controller Configuration (``config.kueue.x-k8s.io/v1beta2``), generated from typed args.

The Helm chart takes the *whole* Configuration as one YAML string
(``managerConfig.controllerManagerConfigYaml``); a value file that sets only the keys it cares
about silently replaces the chart's own settings (health/metrics/webhook ports, leader election,
concurrency).  So this module writes the complete document: the chart defaults of Kueue 0.19.2
(``charts/kueue/values.yaml``; reference/kueue.md §5) plus what the stack decides.

Upstream facts this module encodes (kubernetes-sigs/kueue v0.19.2):

- ``waitForPodsReady`` is *on by default since 0.19* with a 30 minute timeout, even when omitted
  (CHANGELOG-0.19, ``defaults.go``), so it is always written out with the stack's values; in
  v1beta2 the block's presence enables it (there is no ``enable`` field).
- ``fairSharing`` likewise has no ``enable``: the block's presence turns fair sharing on, and
  ``preemptionStrategies`` must be one of three ordered sets (``pkg/config/validation.go``).
- the ``pod`` integration requires ``managedJobsNamespaceSelector``, which must not match
  ``kube-system`` or Kueue's own namespace; it is therefore always written explicitly.
- feature gates go to ``controllerManager.featureGates`` (the chart renders ``--feature-gates``),
  never into this document: setting both fails ("feature gates for CLI and configuration cannot
  both specified").  An unknown gate makes the manager exit ("unrecognized feature gate"), so
  gates are checked against the list of gates that exist in 0.19.2 (:data:`FEATURE_GATES`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import yaml

KUEUE_NAMESPACE: Final = "kueue-system"
# The Helm release name; the chart's fullname (and so its webhook Service and cert Secret) derive
# from it, so it is fixed rather than auto-named by Pulumi.
KUEUE_RELEASE_NAME: Final = "kueue"

# Every framework name Kueue 0.19.2 registers (pkg/controller/jobs/*); anything else is a
# NotSupported error at manager start-up.
KNOWN_FRAMEWORKS: Final = (
    "batch/job",
    "pod",
    "deployment",
    "statefulset",
    "ray.io/rayjob",
    "ray.io/raycluster",
    "ray.io/rayservice",
    "jobset.x-k8s.io/jobset",
    "leaderworkerset.x-k8s.io/leaderworkerset",
    "kubeflow.org/mpijob",
    "kubeflow.org/pytorchjob",
    "kubeflow.org/tfjob",
    "kubeflow.org/paddlejob",
    "kubeflow.org/xgboostjob",
    "kubeflow.org/jaxjob",
    "trainer.kubeflow.org/trainjob",
    "workload.codeflare.dev/appwrapper",
    "sparkoperator.k8s.io/sparkapplication",
)
# Kueue manages these through plain pod groups; upstream's config marks them "requires enabling
# pod integration".
NEEDS_POD_INTEGRATION: Final = frozenset(
    {"deployment", "statefulset", "leaderworkerset.x-k8s.io/leaderworkerset"}
)
RAY_FRAMEWORKS: Final = ("ray.io/rayjob", "ray.io/raycluster")

# Valid fairSharing.preemptionStrategies values, in the order Kueue requires.
FAIR_SHARING_STRATEGY_SETS: Final = (
    ("LessThanOrEqualToFinalShare",),
    ("LessThanInitialShare",),
    ("LessThanOrEqualToFinalShare", "LessThanInitialShare"),
)
DEFAULT_FAIR_SHARING_STRATEGIES: Final = FAIR_SHARING_STRATEGY_SETS[2]

# The label a namespace carries to opt in to Kueue management when jobs without a queue name are
# managed (strict tenancy).  With ``manageJobsWithoutQueueName: true`` every Job in a *matched*
# namespace is suspended until admitted -- including Helm hook Jobs of other operators (KAI's
# pre-install hooks) -- so strict tenancy selects team namespaces by this label instead of
# "everything but kube-system" (Kueue docs: opt-in namespace management).
MANAGED_NAMESPACE_LABEL: Final = {"gpu-batch/kueue-managed": "true"}

# Feature gates that exist in Kueue 0.19.2 (site/data/featuregates/versioned_feature_list.yaml
# entries introduced at or before 0.19, plus gates the 0.19.1 and 0.19.2 patch releases added per
# CHANGELOG-0.19).  Gates added by later patch releases (0.19.3+) are deliberately absent.
FEATURE_GATES: Final = frozenset(
    {
        "AdmissionFairSharing",
        "AdmissionGatedBy",
        "AssignQueueLabelsForPods",
        "CleanupProvisioningRequestsOnEviction",
        "ConcurrentAdmission",
        "CustomMetricLabels",
        "DeferRayServiceFinalizationForRedisCleanup",
        "DisableWaitForPodsReady",
        "ElasticJobsViaWorkloadSlices",
        "ElasticJobsViaWorkloadSlicesWithTAS",
        "FailureRecoveryPolicy",
        "FairSharingPreemptWithinNominal",
        "FairSharingPrioritizeNonBorrowing",
        "FastQuotaReleaseInPodIntegration",
        "FinishOrphanedWorkloads",
        "FlavorFungibility",
        "KueueDRAIntegration",
        "KueueDRAIntegrationConsumableCapacity",
        "KueueDRAIntegrationExtendedResource",
        "KueueDRAIntegrationPartitionableDevices",
        "KueueDRARejectWorkloadsWhenDRADisabled",
        "LocalQueueMetrics",
        "LWSImmutableGroupSize",
        "MetricForWorkloadCreationLatency",
        "MetricsForCohorts",
        "MultiKueue",
        "MultiKueueAdaptersForCustomJobs",
        "MultiKueueClusterProfile",
        "MultiKueueIncrementalDispatcherConfig",
        "MultiKueueIncrementalDispatcherRespectConfigOrder",
        "MultiKueueKubeConfigPathValidation",
        "MultiKueueManagerQuotaAutomation",
        "MultiKueueOrchestratedPreemption",
        "PartialAdmission",
        "PreserveFlavorScanProgress",
        "PrioritizePreemptorWorkloads",
        "PriorityBoost",
        "PrioritySortingWithinCohort",
        "QuotaCheckStrategy",
        "ReclaimablePods",
        "RecomputeAssignmentUponPreemptionTargetsOverlap",
        "RejectUpdatesToCQWithInvalidOnFlavors",
        "RemoveFinalizersWithStrictPatch",
        "SchedulerLibraryIntegration",
        "SchedulerLongRequeueInterval",
        "SchedulerTimestampPreemptionBuffer",
        "SchedulingEquivalenceHashing",
        "ShortWorkloadNames",
        "SkipAncestorCheckForDeletedWorkloads",
        "SkipReassignmentForPodOwnedWorkloads",
        "SparkApplicationIntegration",
        "TASAssignmentsEncodingByHostnamePrefix",
        "TASBalancedPlacement",
        "TASCacheNodeMatchResults",
        "TASCacheTopologyTree",
        "TASCachingRemainingResources",
        "TASFailedNodeReplacement",
        "TASFailedNodeReplacementFailFast",
        "TASHandleOverlappingFlavors",
        "TASMultiLayerTopology",
        "TASProfileMixed",
        "TASRecomputeAssignmentWithinSchedulingCycle",
        "TASReplaceNodeDueToNotReadyOverFixedTime",
        "TASReplaceNodeOnNodeTaints",
        "TASReplaceNodeOnPodTermination",
        "TASRespectNodeAffinityPreferred",
        "TASValidateWorkloadSliceSize",
        "TopologyAwareScheduling",
        "UnadmittedWorkloadsExplicitStatus",
        "UnadmittedWorkloadsObservability",
        "ValidateRayAndSparkJobUpdates",
        "VectorizedResourceRequests",
        "VisibilityOnDemand",
        "WorkloadIdentifierAnnotations",
        "WorkloadPriorityClassDefaulting",
        "WorkloadRequestUseMergePatch",
        "WorkloadValidateResourcesAreNonNegative",
        "WorkloadValidationForPodSetMetadata",
    }
)
# GA gates locked to their default in 0.19.2: setting the other value stops the manager.
LOCKED_FEATURE_GATES: Final = {
    "ManagedJobsNamespaceSelectorAlwaysRespected": True,
    "SkipFinalizersForPodsSuspendedByParent": True,
    # GA since 0.17 and locked on (reference/kueue.md §5): `true` is accepted, `false` is not.
    "HierarchicalCohorts": True,
}
# Gates users still copy from old guides, with what happened to them
# (site/data/featuregates/removed_feature_list.yaml, CHANGELOGs).
REMOVED_FEATURE_GATES: Final = {
    "ProvisioningACC": "removed in 0.15; the ProvisioningRequest admission check is always on",
    "KeepQuotaForProvReqRetry": "removed after 0.12",
    "AdmissionCheckValidationRules": "deprecated in 0.9 and removed after 0.12",
    "LendingLimit": "GA in 0.17 and removed after 0.18; lendingLimit is always available",
    "DynamicResourceAllocation": "removed in 0.19; use KueueDRAIntegration",
    "ManagedJobsNamespaceSelector": "removed in 0.15; managedJobsNamespaceSelector is always honoured",
    "ConfigurableResourceTransformations": "removed in 0.16; transformations are always available",
    "SanitizePodSets": "removed after 0.18; always on",
    "LocalQueueDefaulting": "GA and locked since 0.17; always on",
    "QueueVisibility": "removed in 0.14; use VisibilityOnDemand",
    "MultiplePreemptions": "removed after 0.13; always on",
    "WorkloadResourceRequestsSummary": "removed after 0.13; always on",
    "ExposeFlavorsInLocalQueue": "removed in 0.15 with LocalQueue status.flavors",
    "FlavorFungibilityImplicitPreferenceDefault": "removed in 0.16",
    "TASProfileLeastFreeCapacity": "removed in 0.16",
}


def feature_gate_problem(name: str, enabled: bool) -> str | None:
    """Why Kueue 0.19.2 would refuse ``name=enabled`` (None when it accepts it)."""
    if name in REMOVED_FEATURE_GATES:
        return f"a feature gate of Kueue 0.19.2; {name} was {REMOVED_FEATURE_GATES[name]}"
    if name in LOCKED_FEATURE_GATES:
        locked = LOCKED_FEATURE_GATES[name]
        if enabled != locked:
            return f"{str(locked).lower()} or no entry: {name} is GA and locked to {str(locked).lower()} in 0.19.2"
        return None
    if name not in FEATURE_GATES:
        return "a feature gate that exists in Kueue 0.19.2 (unknown gates stop the manager); see FEATURE_GATES in components/kueue_config.py"
    return None


def frameworks_for(kuberay: bool, pod: bool, extra: Iterable[str] = ()) -> tuple[str, ...]:
    """The integrations a stack needs, in a stable order, without duplicates.

    ``batch/job`` always (plain Jobs are the baseline); the two Ray kinds when KubeRay is installed
    (RayService is left to ``extra``: serving is not batch); ``pod`` for stacks whose workloads
    are bare pods (SkyPilot creates pods, not Jobs).
    """
    wanted = ["batch/job", *(RAY_FRAMEWORKS if kuberay else ()), *(("pod",) if pod else ()), *extra]
    return tuple(dict.fromkeys(wanted))


@dataclass(frozen=True)
class WaitForPodsReady:
    """``waitForPodsReady``: evict (and requeue) an admitted workload whose pods are not all
    Ready within ``timeout`` -- the guard against a half-started gang holding quota forever."""

    # Half of Kueue's 30m default: a gang that cannot start frees its quota sooner, while
    # multi-GB training images still have time to land on freshly provisioned GPU nodes.
    timeout: str = "15m"
    # None: same as ``timeout`` (Kueue's default), written out so the plan shows it.
    recovery_timeout: str | None = None
    # Admit one workload at a time until its pods are Ready; prevents two partially started
    # gangs from deadlocking on capacity the autoscaler cannot add all at once.
    block_admission: bool = True
    requeuing_timestamp: str = "Eviction"
    # None = requeue forever (Kueue's default); a number deactivates the workload after that many.
    backoff_limit_count: int | None = 10
    backoff_base_seconds: int = 60
    backoff_max_seconds: int = 3600

    def to_dict(self) -> dict[str, Any]:
        return {
            "timeout": self.timeout,
            "recoveryTimeout": self.recovery_timeout or self.timeout,
            "blockAdmission": self.block_admission,
            "requeuingStrategy": {
                "timestamp": self.requeuing_timestamp,
                "backoffLimitCount": self.backoff_limit_count,
                "backoffBaseSeconds": self.backoff_base_seconds,
                "backoffMaxSeconds": self.backoff_max_seconds,
            },
        }


@dataclass(frozen=True)
class KueueConfiguration:
    """What the stack decides about the Kueue controller; :meth:`document` adds the rest."""

    frameworks: tuple[str, ...] = ("batch/job",)
    # Strict tenancy: jobs without a queue-name label are suspended instead of running unmanaged.
    # Namespaces then opt in with :data:`MANAGED_NAMESPACE_LABEL`.
    manage_jobs_without_queue_name: bool = False
    wait_for_pods_ready: WaitForPodsReady = field(default_factory=WaitForPodsReady)
    # None: fair sharing off; otherwise the preemption strategies (one of FAIR_SHARING_STRATEGY_SETS).
    fair_sharing_strategies: tuple[str, ...] | None = None
    namespace: str = KUEUE_NAMESPACE
    release_name: str = KUEUE_RELEASE_NAME
    # A MultiKueue manager's dispatcher (``multiKueue.dispatcherName``, Kueue v0.19.2
    # apis/config/v1beta2/configuration_types.go); None: not a manager, Kueue's default applies.
    multikueue_dispatcher: str | None = None
    # ``multiKueue.clusterProfile.accessProviders`` (v0.19.2 configuration_types.go
    # ``ClusterProfile``): how the manager reaches workers named by ClusterProfile
    # (components/multikueue_fleet.py); empty: none, as Kueue's default.
    multikueue_access_providers: tuple[Mapping[str, Any], ...] = ()
    # ``metrics.enableClusterQueueResources``: without it Kueue never sets the per-flavor quota
    # and usage gauges (kueue v0.19.2 cmd/kueue/main.go passes it to
    # ``schdcache.WithResourceMetrics`` / ``qcache.WithResourceMetrics``;
    # pkg/cache/scheduler/clusterqueue.go ``reportResourceMetrics`` and
    # pkg/cache/queue/metrics.go ``reportCQPendingWorkloads`` report only when it is on), so a
    # quota panel stays empty.  The chart ships it commented out (charts/kueue/values.yaml).
    cluster_queue_resource_metrics: bool = True

    def problems(self) -> list[str]:
        """What Kueue's own config validation would refuse (the manager would not start)."""
        found: list[str] = []
        unknown = [f for f in self.frameworks if f not in KNOWN_FRAMEWORKS]
        if unknown:
            found.append(f"unknown integrations {unknown}; known: {list(KNOWN_FRAMEWORKS)}")
        if len(set(self.frameworks)) != len(self.frameworks):
            found.append(f"duplicate integrations in {list(self.frameworks)}")
        needing_pod = sorted(NEEDS_POD_INTEGRATION.intersection(self.frameworks))
        if needing_pod and "pod" not in self.frameworks:
            found.append(f"integrations {needing_pod} require the pod integration")
        strategies = self.fair_sharing_strategies
        if strategies is not None and tuple(strategies) not in FAIR_SHARING_STRATEGY_SETS:
            found.append(
                f"fairSharing.preemptionStrategies {list(strategies)} is not one of {FAIR_SHARING_STRATEGY_SETS}"
            )
        return found

    def managed_jobs_namespace_selector(self) -> dict[str, Any]:
        # With the pod integration the chart also uses this selector as the namespaceSelector of
        # its fail-closed pod webhooks (kueue v0.19.2 charts/kueue/templates/webhook/manifests.yaml
        # mpod.kb.io / vpod.kb.io): scope it to the labelled team namespaces, so pods elsewhere
        # (ingress-nginx, KAI, monitoring) never depend on Kueue's webhook being up.
        if self.manage_jobs_without_queue_name or "pod" in self.frameworks:
            return {"matchLabels": dict(MANAGED_NAMESPACE_LABEL)}
        # Kueue's own default, written out: everything except kube-system and Kueue's namespace.
        return {
            "matchExpressions": [
                {
                    "key": "kubernetes.io/metadata.name",
                    "operator": "NotIn",
                    "values": ["kube-system", self.namespace],
                }
            ]
        }

    def document(self) -> dict[str, Any]:
        """The full Configuration object."""
        doc: dict[str, Any] = {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "namespace": self.namespace,
            # Chart defaults of 0.19.2, kept as the chart ships them (metrics: plus the
            # per-ClusterQueue resource gauges, see ``cluster_queue_resource_metrics``).
            "health": {"healthProbeBindAddress": ":8081"},
            "metrics": {
                "bindAddress": ":8443",
                "enableClusterQueueResources": self.cluster_queue_resource_metrics,
            },
            "webhook": {"port": 9443},
            "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
            "controller": {
                "groupKindConcurrency": {
                    "Job.batch": 5,
                    "Pod": 5,
                    "Workload.kueue.x-k8s.io": 10,
                    "LocalQueue.kueue.x-k8s.io": 5,
                    "ClusterQueue.kueue.x-k8s.io": 5,
                    "ResourceFlavor.kueue.x-k8s.io": 1,
                }
            },
            "clientConnection": {"qps": 300, "burst": 500},
            # What the chart template injects when absent (no cert-manager): written out so the
            # plan shows the webhook's certificate wiring.
            "internalCertManagement": {
                "enable": True,
                "webhookServiceName": f"{self.release_name}-webhook-service",
                "webhookSecretName": f"{self.release_name}-webhook-server-cert",
            },
            "manageJobsWithoutQueueName": self.manage_jobs_without_queue_name,
            "managedJobsNamespaceSelector": self.managed_jobs_namespace_selector(),
            "waitForPodsReady": self.wait_for_pods_ready.to_dict(),
            "integrations": {"frameworks": list(self.frameworks)},
        }
        if self.fair_sharing_strategies is not None:
            doc["fairSharing"] = {"preemptionStrategies": list(self.fair_sharing_strategies)}
        if self.multikueue_dispatcher is not None:
            doc["multiKueue"] = {"dispatcherName": self.multikueue_dispatcher}
        if self.multikueue_access_providers:
            doc.setdefault("multiKueue", {})["clusterProfile"] = {
                "accessProviders": [dict(p) for p in self.multikueue_access_providers]
            }
        return doc

    def to_yaml(self) -> str:
        """The document as the chart's ``controllerManagerConfigYaml`` string."""
        return yaml.safe_dump(self.document(), sort_keys=False)


def feature_gate_values(gates: Mapping[str, bool]) -> list[dict[str, Any]]:
    """``controllerManager.featureGates`` in the chart's list form, sorted for stable diffs."""
    return [{"name": name, "enabled": gates[name]} for name in sorted(gates)]


def gate_problems(gates: Mapping[str, bool]) -> list[str]:
    return [f"{name}: expected {p}" for name, v in gates.items() if (p := feature_gate_problem(name, v))]
