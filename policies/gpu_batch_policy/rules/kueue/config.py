"""Kueue controller configuration (Helm values of the ``kueue`` chart) fits the stack's workloads.

Sources (kueue.md §5): ``integrations.frameworks`` must list every framework whose jobs Kueue
should gate — a RayJob labelled for a LocalQueue is *ignored* by Kueue (and runs ungated) when
``ray.io/rayjob`` is not enabled; SkyPilot creates bare pods, so it needs ``pod``
(kai-kuberay-skypilot.md §3.3); the same holds for every kind labelled for a LocalQueue (Job,
JobSet, MPIJob, PyTorchJob, TrainJob, LeaderWorkerSet, Pod, Deployment, StatefulSet; a
Deployment/StatefulSet labelled only on its pod template needs ``pod``).  An unknown framework name is a NotSupported error and the manager
exits.  Feature gates removed from Kueue make the manager exit ("unrecognized feature gate");
gates set both as the ``--feature-gates`` flag (chart ``controllerManager.featureGates``) and in
the Configuration's ``featureGates`` fail with "feature gates for CLI and configuration cannot
both specified" (``K:pkg/config/validation.go``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.kueue_install import framework_of, with_implicit
from ...facts.model import HelmRelease, StackModel
from ...facts.model.helm import FeatureGate
from ...facts.model.kueue import QUEUE_NAME_LABEL
from ...facts.workload_kinds.queue_names import kueue_queue_name
from ...facts.workload_kinds.registry import FRAMEWORK_NAMES
from ...primitives.tokens import RAY_GROUP
from ...primitives.values import Unknown, as_bool, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter

# The 18 framework names Kueue 0.19.2 registers (its integration registry: workload_kinds.registry).
KNOWN_FRAMEWORKS = FRAMEWORK_NAMES
_RAY_FRAMEWORK = {
    "RayJob": "ray.io/rayjob",
    "RayCluster": "ray.io/raycluster",
    "RayService": "ray.io/rayservice",
}
# Gates removed from Kueue by 0.19 (K:site/data/featuregates/removed_feature_list.yaml; kueue.md §5
# for LendingLimit, removed after 0.18).  Setting any of them makes the manager exit.
REMOVED_FEATURE_GATES = frozenset(
    {
        "AdmissionCheckValidationRules",
        "ConfigurableResourceTransformations",
        # Removed in 0.19 in favour of KueueDRAIntegration (0.19 changelog).
        "DynamicResourceAllocation",
        "ExposeFlavorsInLocalQueue",
        "FlavorFungibilityImplicitPreferenceDefault",
        "KeepQuotaForProvReqRetry",
        "LendingLimit",
        # GA and locked in 0.17, then listed in removed_feature_list.yaml.
        "LocalQueueDefaulting",
        "ManagedJobsNamespaceSelector",
        "MultiplePreemptions",
        "ProvisioningACC",
        "QueueVisibility",
        "SanitizePodSets",
        "TASProfileLeastFreeCapacity",
        "WorkloadResourceRequestsSummary",
    }
)


def _needed_frameworks(model: StackModel, release: HelmRelease, reporter: Reporter) -> dict[str, str]:
    """framework → why it is needed (first workload that needs it)."""
    needed: dict[str, str] = {}
    config = release.kueue_config()
    manage_all = as_bool(dig(config.data, "manageJobsWithoutQueueName")) is True
    for workload in model.ray_workloads():
        obj = workload.obj
        queue = obj.label(QUEUE_NAME_LABEL)
        if not obj.labels_known:
            reporter.cannot_check(workload, "metadata.labels are unknown until apply")
            continue
        if queue is None and not manage_all:
            continue
        framework = _RAY_FRAMEWORK[obj.kind]
        needed.setdefault(framework, f"{obj.kind} '{obj.qualified_name}' is queued through Kueue")
    for obj in model.objects:
        kind_framework = framework_of(obj)  # 'pod' for a Deployment/StatefulSet labelled on its template
        if kind_framework is None or obj.group == RAY_GROUP or kueue_queue_name(obj) is None:
            continue
        needed.setdefault(
            kind_framework, f"{obj.kind} '{obj.qualified_name}' is labelled for a Kueue LocalQueue"
        )
    for sky in model.skypilot_releases():
        needed.setdefault("pod", f"SkyPilot release '{sky.release_name}' launches bare pods")
    return needed


def check_integrations(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for release in model.kueue_releases():
        config = release.kueue_config()
        if config.error is not None:
            reporter.violation(
                release,
                f"managerConfig.controllerManagerConfigYaml is not valid: {config.error} "
                "(the controller manager cannot start)",
                "fix the YAML string (build it with yaml.safe_dump from a mapping)",
            )
            continue
        frameworks = release.kueue_frameworks()
        if isinstance(frameworks, Unknown):
            reporter.cannot_check(release, "integrations.frameworks is unknown until apply")
            continue
        if frameworks is None:
            continue
        for name in frameworks:
            if name not in KNOWN_FRAMEWORKS:
                reporter.violation(
                    release,
                    f"integrations.frameworks lists unknown framework '{name}' (NotSupported: the "
                    "controller manager exits)",
                    f"use one of Kueue's framework names, e.g. {', '.join(sorted(KNOWN_FRAMEWORKS)[:4])} "
                    "…, or integrations.externalFrameworks for other kinds",
                )
        enabled = with_implicit(frameworks)
        for framework, why in _needed_frameworks(model, release, reporter).items():
            if framework not in enabled:
                reporter.violation(
                    release,
                    f"integrations.frameworks {list(frameworks)} lacks '{framework}', but {why}; Kueue "
                    "would ignore those workloads (they bypass quota and gang admission)",
                    f"add '{framework}' to integrations.frameworks in managerConfig.controllerManagerConfigYaml",
                )


def _gate_names(gates: tuple[FeatureGate, ...]) -> list[str]:
    return [g.name for g in gates if isinstance(g.name, str)]


def check_feature_gates(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for release in model.kueue_releases():
        cli = release.kueue_cli_feature_gates()
        in_config = release.kueue_config_feature_gates()
        if isinstance(cli, Unknown):
            reporter.cannot_check(release, "controllerManager.featureGates is unknown until apply")
            cli = ()
        if isinstance(in_config, Unknown):
            reporter.cannot_check(release, "featureGates in the controller config is unknown until apply")
            in_config = ()
        for where, gates in (
            ("controllerManager.featureGates", cli),
            ("featureGates in managerConfig.controllerManagerConfigYaml", in_config),
        ):
            for name in _gate_names(gates):
                if name in REMOVED_FEATURE_GATES:
                    reporter.violation(
                        release,
                        f"{where} sets '{name}', a gate removed from Kueue (the manager exits with "
                        "'unrecognized feature gate')",
                        f"remove '{name}' (its behaviour is now always on or gone)",
                    )
        if cli and in_config:
            reporter.violation(
                release,
                "feature gates are set both in controllerManager.featureGates (--feature-gates) and in "
                "the controller config's featureGates ('feature gates for CLI and configuration cannot "
                "both specified')",
                "keep them in one place: controllerManager.featureGates is the chart's way",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "kueue-integrations-cover-workloads",
        "Kueue's integrations.frameworks must be valid and include the frameworks of the stack's "
        "queued workloads (every queue-labelled kind: batch/job, ray.io/rayjob, kubeflow.org/mpijob, ..., "
        "pod for SkyPilot and template-labelled Deployments).",
        check_integrations,
    ),
    stack_policy(
        "kueue-feature-gates",
        "Kueue feature gates must not include removed gates, nor be set both as flags and in the config.",
        check_feature_gates,
    ),
]
