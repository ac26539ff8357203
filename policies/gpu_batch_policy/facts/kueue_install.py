"""How the Kueue that admits the stack's workloads is configured: the stack's release, the
user's stated install, or Kueue 0.19.2's shipped defaults (issue 18 item 6).

A workloads stack often holds ClusterQueues and jobs but no Kueue Helm release (the cluster
stack installs it).  The stack's queues are still there to judge, so rules that depend on the
install's configuration read it from, in order:

1. the stack's Kueue releases (``managerConfig.controllerManagerConfigYaml``, rendered chart
   defaults when absent);
2. the rule's ``kueueConfiguration`` property: the install's ``Configuration`` object
   (``config.kueue.x-k8s.io/v1beta2``, the content of ``controller_manager_config.yaml``), for a
   cluster whose Kueue is configured differently;
3. Kueue 0.19.2's chart as shipped (``../shared/vendor/kueue-0.19.2/values.yaml``
   ``managerConfig``: the default ``integrations.frameworks``, no resource exclusions or
   transformations, default feature gates such as ``TopologyAwareScheduling`` (beta, on since
   0.14: kubernetes-sigs/kueue v0.19.2 ``pkg/features/kube_features.go``)).  Every finding made
   under this assumption says so.

The resource view (``requested`` / ``as_kueue_sees``) follows the Configuration's ``resources``
(kubernetes-sigs/kueue v0.19.2 ``apis/config/v1beta2/configuration_types.go`` ``Resources``:
``excludeResourcePrefixes``, ``transformations`` with ``Retain``/``Replace``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..primitives.values import Unknown, as_bool, dig
from .demand import PodSet
from .model import StackModel
from .model.base import KubeObject
from .model.helm import KUEUE_CHART_DEFAULT_FRAMEWORKS
from .model.kueue import QUEUE_NAME_LABEL
from .workload_kinds.base import at_minimum
from .workload_kinds.queue_names import POD_BASED_KINDS, pod_template
from .workload_kinds.registry import FRAMEWORK_OF_KIND

KUEUE_VERSION = "0.19.2"
CONFIG_KEY = "kueueConfiguration"
# Feature gates whose 0.19.2 default a rule depends on (pkg/features/kube_features.go): both beta,
# on by default (TopologyAwareScheduling since 0.14, MultiKueue since 0.9).
DEFAULT_GATES = {
    "TopologyAwareScheduling": True,
    "MultiKueue": True,
    "ConcurrentAdmission": False,
    "QuotaCheckStrategy": True,  # beta, on since 0.19
    "PartialAdmission": True,  # beta, on since 0.5
}
# Resources the API accepts in requests that Kueue never quota-checks by default.
NOT_QUOTAED = ("ephemeral-storage",)

INSTALL_PROPERTIES: dict[str, dict[str, Any]] = {
    CONFIG_KEY: {
        "type": "object",
        "description": (
            "The Kueue Configuration (config.kueue.x-k8s.io/v1beta2, as in controller_manager_config.yaml) "
            "of an install this stack does not declare; without it, Kueue "
            f"{KUEUE_VERSION}'s shipped defaults are assumed."
        ),
    },
}

# (API group, kind) -> Kueue integration framework name: Kueue's registry (workload_kinds.registry).
FRAMEWORKS: dict[tuple[str, str], str] = FRAMEWORK_OF_KIND


def framework_of(obj: KubeObject) -> str | None:
    """The integration that queues ``obj``: its kind's, or ``pod`` for a Deployment/StatefulSet
    labelled only on its pod template (its pods are queued one by one, ``workload_kinds.queue_names``)."""
    if (
        (obj.group, obj.kind) in POD_BASED_KINDS
        and obj.labels.get(QUEUE_NAME_LABEL) is None
        and pod_template(obj).labels.get(QUEUE_NAME_LABEL) is not None
    ):
        return "pod"
    if (obj.group, obj.kind) == ("batch", "CronJob"):
        return FRAMEWORKS[("batch", "Job")]  # its Jobs are queued (workload_kinds.cronjob)
    return FRAMEWORKS.get((obj.group, obj.kind))


# Integrations that switch on ``pod`` with them (``ImplicitlyEnabledFrameworkNames`` in
# pkg/controller/jobs/{deployment,statefulset,leaderworkerset}/*_controller.go; honoured by
# pkg/controller/jobframework/setup.go ``setupControllers``).
IMPLIES_POD = frozenset({"deployment", "statefulset", "leaderworkerset.x-k8s.io/leaderworkerset"})


def with_implicit(frameworks: Iterable[str]) -> frozenset[str]:
    """The enabled integrations, with those Kueue enables implicitly."""
    names = set(frameworks)
    if names & IMPLIES_POD:
        names.add("pod")
    return frozenset(names)


@dataclass(frozen=True)
class KueueInstall:
    """The effective Configuration(s) of the Kueue that admits the stack's workloads."""

    configs: tuple[Mapping[str, Any], ...]
    frameworks: frozenset[str]
    assumption: str | None  # None: read from the stack; else what is assumed, for findings
    unknown: str | None = None  # set when the configuration is unknown until apply
    excluded: frozenset[str] = field(default_factory=frozenset)
    outputs: Mapping[str, frozenset[str]] = field(default_factory=dict)
    retained: frozenset[str] = field(default_factory=frozenset)

    def manages(self, obj: KubeObject) -> bool:
        """Whether the integration that would queue ``obj`` is enabled (unknown kinds: no)."""
        name = framework_of(obj)
        return name is not None and name in self.frameworks

    def gate(self, name: str) -> bool:
        """A feature gate from the Configuration's ``featureGates``, else its 0.19.2 default."""
        for config in self.configs:
            value = as_bool(dig(config, "featureGates", name))
            if isinstance(value, bool):
                return value
        return DEFAULT_GATES.get(name, False)

    def as_kueue_sees(self, names: set[str]) -> set[str]:
        """Resource names after ``excludeResourcePrefixes`` and ``transformations``."""
        seen: set[str] = set()
        for name in names:
            if any(name.startswith(prefix) for prefix in self.excluded):
                continue
            if name in self.outputs:
                seen.update(self.outputs[name])
                if name not in self.retained:
                    continue
            seen.add(name)
        return seen

    def suffix(self) -> str:
        """`` (assuming ...)`` for findings made on an assumed install."""
        return f" ({self.assumption})" if self.assumption else ""


def _from_configs(
    configs: list[Mapping[str, Any]], frameworks: set[str], assumption: str | None
) -> KueueInstall:
    excluded: set[str] = set()
    outputs: dict[str, set[str]] = {}
    retained: set[str] = set()
    for config in configs:
        for prefix in dig(config, "resources", "excludeResourcePrefixes") or []:
            excluded.add(str(prefix))
        for item in dig(config, "resources", "transformations") or []:
            source = dig(item, "input")
            if not isinstance(source, str):
                continue
            made = dig(item, "outputs")
            outputs.setdefault(source, set()).update(str(k) for k in (made if isinstance(made, dict) else {}))
            if dig(item, "strategy") == "Retain":
                retained.add(source)
    return KueueInstall(
        configs=tuple(configs),
        frameworks=with_implicit(frameworks),
        assumption=assumption,
        excluded=frozenset(excluded),
        outputs={k: frozenset(v) for k, v in outputs.items()},
        retained=frozenset(retained),
    )


def _stated_frameworks(config: Mapping[str, Any]) -> set[str]:
    listed = dig(config, "integrations", "frameworks")
    if isinstance(listed, list) and listed:
        return {str(f) for f in listed}
    return {"batch/job"}  # Kueue's own default for an empty list (model.helm KUEUE_DEFAULT_FRAMEWORKS)


def kueue_install(model: StackModel, config: Mapping[str, Any] | None) -> KueueInstall:
    """The Kueue configuration rules judge by (see the module docstring)."""
    releases = model.kueue_releases()
    if releases:
        configs: list[Mapping[str, Any]] = []
        frameworks: set[str] = set()
        for release in releases:
            parsed = release.kueue_config()
            named = release.kueue_frameworks()
            if parsed.unknown is not None or isinstance(named, Unknown):
                return KueueInstall(
                    (), frozenset(), None, unknown=f"{release.describe()} Kueue configuration"
                )
            if isinstance(parsed.data, dict):
                configs.append(parsed.data)
            frameworks.update(named or ())
        return _from_configs(configs, frameworks, None)
    stated = (config or {}).get(CONFIG_KEY)
    if isinstance(stated, Mapping):
        return _from_configs(
            [stated], _stated_frameworks(stated), f"assuming the Kueue install stated in {CONFIG_KEY}"
        )
    return _from_configs(
        [],
        set(KUEUE_CHART_DEFAULT_FRAMEWORKS),
        f"assuming Kueue {KUEUE_VERSION}'s defaults because no Kueue release is declared; "
        f"set {CONFIG_KEY} in policies/config.<stack>.json if the install differs",
    )


def feature_gate(model: StackModel, config: Mapping[str, Any] | None, name: str) -> bool | Unknown:
    """A Kueue feature gate as the install sets it: the chart's ``controllerManager.featureGates``
    (``--feature-gates``), else the Configuration's ``featureGates``, else its 0.19.2 default."""
    for release in model.kueue_releases():
        gates = release.kueue_cli_feature_gates()
        if isinstance(gates, Unknown):
            return gates
        for gate in gates:
            if gate.name == name and isinstance(gate.enabled, (bool, Unknown)):
                return gate.enabled
    return kueue_install(model, config).gate(name)


def admitted_at_least(
    model: StackModel, config: Mapping[str, Any], pod_sets: tuple[PodSet, ...]
) -> tuple[PodSet, ...]:
    """The smallest gang Kueue may admit: with PartialAdmission (on unless the install turns it
    off), each pod set at its ``min_count`` (``workload_kinds.base.at_minimum``); else all of it.
    A gate unknown until apply counts as on: the smaller gang, so no false alarm."""
    if feature_gate(model, config, "PartialAdmission") is False:
        return pod_sets
    return at_minimum(pod_sets)


def requested(pod_sets: tuple[PodSet, ...] | list[PodSet]) -> set[str]:
    """Resource names any container of a counted pod set requests (or limits), minus those Kueue
    never quota-checks by default."""
    names: set[str] = set()
    for pod_set in pod_sets:
        if pod_set.count <= 0:
            continue
        for key in ("containers", "initContainers"):
            containers = dig(pod_set.template.raw, "spec", key)
            for container in containers if isinstance(containers, list) else []:
                for part in ("requests", "limits"):
                    block = dig(container, "resources", part)
                    if isinstance(block, dict):
                        names.update(str(k) for k in block)
    return {n for n in names if n not in NOT_QUOTAED}
