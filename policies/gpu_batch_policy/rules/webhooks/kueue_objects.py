"""Kueue objects the pinned Kueue (0.19.2) refuses outright, before deploy (issue 11 item 5).

* ``kueue-served-api-version``: Kueue 0.19.2 serves every ``kueue.x-k8s.io`` kind at
  ``v1beta1`` and ``v1beta2`` only (the CRDs of the pinned chart,
  ``charts/kueue/templates/crd/kueue.x-k8s.io_*.yaml`` at v0.19.2, list those two versions, both
  ``served: true``); an object at ``v1alpha1`` (Cohort, Topology, MultiKueueCluster/Config of
  Kueue <= 0.12) or any other version fails to apply ("no matches for kind").
* ``kueue-clusterqueue-size-limits``: the ClusterQueue webhook rejects more than 256 flavors or
  256 covered resources across all resource groups, and more than 512 flavor-resource
  combinations in one group (kubernetes-sigs/kueue v0.19.2 ``pkg/webhooks/clusterqueue_webhook.go``
  ``validateTotalFlavors`` L187-198, ``validateTotalCoveredResources`` L200-211,
  ``validateFlavorResourceCombinations`` L213-229).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...builders import stack_policy
from ...model import StackModel
from ...report import Reporter
from ...tokens import KUEUE_GROUP
from ...values import Unknown, dig

SERVED_VERSIONS = ("v1beta1", "v1beta2")
SERVED_KINDS = (
    "AdmissionCheck",
    "ClusterQueue",
    "Cohort",
    "LocalQueue",
    "MultiKueueCluster",
    "MultiKueueConfig",
    "ProvisioningRequestConfig",
    "ResourceFlavor",
    "Topology",
    "WorkloadPriorityClass",
    "Workload",
)
MAX_FLAVORS = 256
MAX_COVERED = 256
MAX_COMBINATIONS = 512


def check_served_version(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for obj in model.kube_objects(KUEUE_GROUP):
        if obj.version in SERVED_VERSIONS and obj.kind in SERVED_KINDS:
            continue
        if obj.kind not in SERVED_KINDS:
            problem = f"is a kind Kueue 0.19 does not define ({', '.join(SERVED_KINDS)})"
            fix = "use one of Kueue's kinds, or remove the object"
        else:
            problem = (
                f"uses {obj.api_version}, which Kueue 0.19 no longer serves (only "
                f"{', '.join(f'{KUEUE_GROUP}/{v}' for v in SERVED_VERSIONS)}), so it fails to apply"
            )
            fix = f"set apiVersion to {KUEUE_GROUP}/v1beta2 (renaming fields as that version requires)"
        reporter.violation(obj, problem, fix)


def _length(value: Any) -> int | None:
    return len(value) if isinstance(value, list) else (None if isinstance(value, Unknown) else 0)


def check_clusterqueue_size_limits(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for cq in model.cluster_queues():
        groups = dig(cq.obj.spec, "resourceGroups")
        if isinstance(groups, Unknown):
            reporter.cannot_check(cq, "spec.resourceGroups")
            continue
        flavors = covered = 0
        for index, group in enumerate(groups if isinstance(groups, list) else []):
            group_flavors = dig(group, "flavors")
            n_covered = _length(dig(group, "coveredResources"))
            if isinstance(group_flavors, Unknown) or n_covered is None:
                reporter.cannot_check(cq, f"spec.resourceGroups[{index}]")
                continue
            items = group_flavors if isinstance(group_flavors, list) else []
            flavors += len(items)
            covered += n_covered
            combinations = sum(_length(dig(f, "resources")) or 0 for f in items)
            if combinations > MAX_COMBINATIONS:
                reporter.violation(
                    cq,
                    f"spec.resourceGroups[{index}] has {combinations} flavor-resource combinations; Kueue's "
                    f"webhook accepts at most {MAX_COMBINATIONS} per resource group",
                    "split the flavors over more resource groups or ClusterQueues",
                )
        for what, total, limit in (
            ("flavors", flavors, MAX_FLAVORS),
            ("covered resources", covered, MAX_COVERED),
        ):
            if total > limit:
                reporter.violation(
                    cq,
                    f"has {total} {what} across its resource groups; Kueue's webhook accepts at most {limit}",
                    "split the queue into several ClusterQueues in one cohort",
                )


POLICIES: list[Policy] = [
    stack_policy(
        "kueue-served-api-version",
        "Kueue objects use an API version Kueue 0.19 serves (kueue.x-k8s.io/v1beta1 or v1beta2).",
        check_served_version,
    ),
    stack_policy(
        "kueue-clusterqueue-size-limits",
        "A ClusterQueue stays within the webhook's limits: <= 256 flavors and <= 256 covered resources in "
        "total, <= 512 flavor-resource combinations per resource group.",
        check_clusterqueue_size_limits,
    ),
]
