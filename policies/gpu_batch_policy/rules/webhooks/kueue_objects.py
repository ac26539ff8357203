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
* ``kueue-resourceflavor-webhook``: ``pkg/webhooks/resourceflavor_webhook.go``
  ``ValidateResourceFlavor``: ``spec.nodeLabels`` are valid labels (``metavalidation.ValidateLabels``:
  qualified-name keys, label values); each ``spec.nodeTaints`` entry has a qualified-name key and a
  label value and no two share key and effect (``validateNodeTaints``); a toleration's key, when
  set, is a qualified name (``workload_webhook.go`` ``validateTolerations``).
* ``kueue-queue-spec-webhook``: ``pkg/webhooks/common.go`` ``validateResourceName`` (every
  ``coveredResources`` name is a label key) and ``validateFairSharing`` (``fairSharing.weight`` is
  not negative and, when not 0, above 1n: "When not 0, weight must be > 10e-9"), run by
  ``clusterqueue_webhook.go`` ``validateClusterQueueSpec`` and ``cohort_webhook.go``
  ``validateCohort``; and ``validateConcurrentAdmissionPolicy`` (StrictFIFO with a
  ``concurrentAdmissionPolicy``, when the ConcurrentAdmission gate is on).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from pulumi_policy import Policy, PolicyConfigSchema

from ...facts.demand import CannotTellError
from ...facts.kueue_install import INSTALL_PROPERTIES, feature_gate
from ...facts.model import StackModel
from ...facts.model.base import KubeObject
from ...primitives.k8s_names import has_placeholder, label_value_error, qualified_name_error
from ...primitives.tokens import KUEUE_GROUP
from ...primitives.values import Unknown, dig, quantity
from ..kit.builders import stack_policy
from ..kit.report import Reporter

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


def _no_placeholder(value: Any, path: str) -> None:
    if isinstance(value, str) and has_placeholder(value):
        raise CannotTellError(f"{path} '{value}' (an unsubstituted template placeholder)")


def label_problems(items: Any, path: str) -> list[str]:
    """``ValidateLabels`` on a known map: each bad key or value, named; raises CannotTellError on a
    template placeholder."""
    out: list[str] = []
    for key, value in (items if isinstance(items, dict) else {}).items():
        _no_placeholder(str(key), path)
        _no_placeholder(value, f"{path}.{key}")
        key_error = qualified_name_error(str(key))
        if key_error is not None:
            out.append(f"{path} has key '{key}', which {key_error}")
        elif isinstance(value, str) and (value_error := label_value_error(value)) is not None:
            out.append(f"{path} has '{key}: {value}', whose value {value_error}")
    return out


def _taint_problems(taints: Any, path: str) -> list[str]:
    out: list[str] = []
    seen: set[tuple[Any, Any]] = set()
    for index, taint in enumerate(taints if isinstance(taints, list) else []):
        key, value, effect = dig(taint, "key"), dig(taint, "value"), dig(taint, "effect")
        here = f"{path}[{index}]"
        if any(isinstance(v, Unknown) for v in (key, value, effect)):
            raise CannotTellError(here)
        _no_placeholder(key, f"{here}.key")
        _no_placeholder(value, f"{here}.value")
        if isinstance(key, str):
            error = qualified_name_error(key)
            if error is not None:
                out.append(f"{here}.key '{key}' {error}")
        if isinstance(value, str) and (error := label_value_error(value)) is not None:
            out.append(f"{here}.value '{value}' {error}")
        if not isinstance(key, str) or not isinstance(effect, (str, type(None))):
            continue  # a key or effect of the wrong type is the CRD schema's finding
        if (key, effect) in seen:
            out.append(
                f"{here} repeats key '{key}' with effect {effect}: taints must be unique by key and effect"
            )
        seen.add((key, effect))
    return out


def _toleration_problems(tolerations: Any, path: str) -> list[str]:
    out: list[str] = []
    for index, toleration in enumerate(tolerations if isinstance(tolerations, list) else []):
        key = dig(toleration, "key")
        _no_placeholder(key, f"{path}[{index}].key")
        if isinstance(key, str) and key and (error := qualified_name_error(key)) is not None:
            out.append(f"{path}[{index}].key '{key}' {error}")
    return out


def check_resourceflavor_webhook(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for obj in model.kube_objects(KUEUE_GROUP, "ResourceFlavor"):
        spec = obj.spec
        parts = {key: dig(spec, key) for key in ("nodeLabels", "nodeTaints", "tolerations")}
        unknown = [k for k, v in parts.items() if isinstance(v, Unknown)]
        for key in unknown:
            reporter.cannot_check(obj, f"spec.{key}")
        try:
            problems = (
                label_problems(parts["nodeLabels"], "spec.nodeLabels")
                + _taint_problems(parts["nodeTaints"], "spec.nodeTaints")
                + _toleration_problems(parts["tolerations"], "spec.tolerations")
            )
        except CannotTellError as why:
            reporter.cannot_check(obj, why.what)
            continue
        for problem in problems:
            reporter.violation(
                obj,
                f"{problem}; Kueue's ResourceFlavor webhook refuses it",
                "use valid Kubernetes label keys and values",
            )


MIN_FAIR_WEIGHT = Decimal("1e-9")  # resource.MustParse("1n")


def _strict_fifo_with_concurrent_admission(
    obj: KubeObject, concurrent: bool | Unknown, reporter: Reporter
) -> None:
    """``validateConcurrentAdmissionPolicy``: with the ConcurrentAdmission gate on (alpha, off by
    default: ``pkg/features/kube_features.go``) a ClusterQueue that sets ``concurrentAdmissionPolicy``
    may not use ``queueingStrategy: StrictFIFO``."""
    policy, strategy = dig(obj.spec, "concurrentAdmissionPolicy"), dig(obj.spec, "queueingStrategy")
    if policy is None or strategy != "StrictFIFO":
        return
    if isinstance(concurrent, Unknown) or isinstance(policy, Unknown):
        reporter.cannot_check(obj, "whether Kueue's ConcurrentAdmission gate is on")
    elif concurrent:
        reporter.violation(
            obj,
            "sets queueingStrategy StrictFIFO and a concurrentAdmissionPolicy; Kueue's ClusterQueue webhook refuses "
            "them together ('StrictFIFO queueing strategy cannot be used when ConcurrentAdmissionPolicy is defined')",
            "use queueingStrategy BestEffortFIFO, or drop concurrentAdmissionPolicy",
        )


def check_queue_spec_webhook(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    concurrent = feature_gate(model, config, "ConcurrentAdmission")
    for obj in model.kube_objects(KUEUE_GROUP, "ClusterQueue"):
        _strict_fifo_with_concurrent_admission(obj, concurrent, reporter)
    for obj in [*model.kube_objects(KUEUE_GROUP, "ClusterQueue"), *model.kube_objects(KUEUE_GROUP, "Cohort")]:
        groups = dig(obj.spec, "resourceGroups")
        if isinstance(groups, Unknown):
            reporter.cannot_check(obj, "spec.resourceGroups")
        for index, group in enumerate(groups if isinstance(groups, list) else []):
            covered = dig(group, "coveredResources")
            if isinstance(covered, Unknown):
                reporter.cannot_check(obj, f"spec.resourceGroups[{index}].coveredResources")
            for position, name in enumerate(covered if isinstance(covered, list) else []):
                error = qualified_name_error(name) if isinstance(name, str) else None
                if error is not None:
                    reporter.violation(
                        obj,
                        f"spec.resourceGroups[{index}].coveredResources[{position}] '{name}' {error}; Kueue's "
                        "webhook refuses a resource name that is not a label key",
                        "use a Kubernetes resource name (cpu, memory, nvidia.com/gpu, ...)",
                    )
        raw_weight = dig(obj.spec, "fairSharing", "weight")
        weight = None if raw_weight is None else quantity(raw_weight)
        if weight is None or weight.error is not None:
            continue  # a bad quantity is kueue-quota-quantities' / the schema's finding
        if weight.unknown:
            reporter.cannot_check(obj, "spec.fairSharing.weight")
        elif weight.value is not None and (weight.value < 0 or 0 < weight.value <= MIN_FAIR_WEIGHT):
            reporter.violation(
                obj,
                f"has spec.fairSharing.weight {weight}; Kueue's webhook accepts 0 or a weight above 1n (10e-9)",
                "use a weight of 0 or more than 1n",
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
    stack_policy(
        "kueue-resourceflavor-webhook",
        "A ResourceFlavor's nodeLabels, nodeTaints (unique by key and effect) and toleration keys are valid "
        "Kubernetes labels (Kueue's ResourceFlavor webhook).",
        check_resourceflavor_webhook,
    ),
    stack_policy(
        "kueue-queue-spec-webhook",
        "ClusterQueue/Cohort coveredResources are resource names and fairSharing.weight is 0 or above 1n; no "
        "StrictFIFO with a concurrentAdmissionPolicy when that gate is on (Kueue's webhook).",
        check_queue_spec_webhook,
        config_schema=PolicyConfigSchema(properties=INSTALL_PROPERTIES),
    ),
]
