"""Which of :data:`.kueue.SETTING_KEYS` the stack's Kueue has on: the rules' and the report's view.

Read from the install the pack already resolves (:func:`..kueue_install.kueue_install`: the
stack's Kueue releases, else the stated ``kueueConfiguration``, else Kueue 0.19.2's chart
defaults) plus the chart's ``controllerManager.featureGates`` (the ``--feature-gates`` flag).
Feature-gate defaults are kubernetes-sigs/kueue v0.19.2 ``pkg/features/kube_features.go``:
``LocalQueueMetrics``, ``MetricForWorkloadCreationLatency``, ``MetricsForCohorts``,
``AdmissionFairSharing`` Beta and on; ``DisableWaitForPodsReady`` Alpha and off.
``waitForPodsReady`` is defaulted in when absent since 0.19 (``apis/config/v1beta2/defaults.go``)
and then off only through ``DisableWaitForPodsReady`` (``pkg/config/config_test.go``
``TestWaitForPodsReadyIsEnabled``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...primitives.values import Unknown, as_bool, dig
from ..kueue_install import KueueInstall, kueue_install
from ..model import StackModel
from .kueue import Setting

GATE_DEFAULTS: dict[str, bool] = {
    "LocalQueueMetrics": True,
    "MetricForWorkloadCreationLatency": True,
    "MetricsForCohorts": True,
    "AdmissionFairSharing": True,
    "DisableWaitForPodsReady": False,
}


@dataclass(frozen=True)
class KueueMetricSettings:
    on: frozenset[Setting]
    # " (assuming ...)" when the install is not the stack's own; None: unknown until apply.
    assumption: str = ""
    unknown: str | None = None


def _gates(model: StackModel, install: KueueInstall) -> dict[str, bool] | Unknown:
    gates = dict(GATE_DEFAULTS)
    for config in install.configs:
        raw = dig(config, "featureGates")
        for name, value in raw.items() if isinstance(raw, Mapping) else ():
            if isinstance(as_bool(value), bool):
                gates[str(name)] = bool(value)
    for release in model.kueue_releases():
        cli = release.kueue_cli_feature_gates()
        if isinstance(cli, Unknown):
            return cli
        for gate in cli:
            if isinstance(gate.name, str) and isinstance(gate.enabled, bool):
                gates[gate.name] = gate.enabled
    return gates


def _any(configs: tuple[Mapping[str, Any], ...], *keys: str) -> Any:
    for config in configs:
        value = dig(config, *keys)
        if value is not None:
            return value
    return None


def kueue_metric_settings(model: StackModel, config: Mapping[str, Any] | None) -> KueueMetricSettings:
    install = kueue_install(model, config)
    if install.unknown is not None:
        return KueueMetricSettings(frozenset(), unknown=install.unknown)
    gates = _gates(model, install)
    if isinstance(gates, Unknown):
        return KueueMetricSettings(frozenset(), unknown="the Kueue release's feature gates")
    configs = install.configs
    on: set[Setting] = set()
    if as_bool(_any(configs, "metrics", "enableClusterQueueResources")) is True:
        on.add("cluster_queue_resources")
    lq_enable = as_bool(_any(configs, "metrics", "localQueueMetrics", "enable"))
    lq_block = _any(configs, "metrics", "localQueueMetrics")
    if gates["LocalQueueMetrics"] and (lq_block is None or lq_enable is True):
        on.add("local_queue_metrics")
    if _any(configs, "fairSharing") is not None:
        on.add("fair_sharing")
    if not gates["DisableWaitForPodsReady"]:
        on.add("wait_for_pods_ready")
    if gates["MetricForWorkloadCreationLatency"]:
        on.add("workload_creation_latency")
    if gates["MetricsForCohorts"]:
        on.add("cohorts")
    if gates["AdmissionFairSharing"] and _any(configs, "admissionFairSharing") is not None:
        on.add("admission_fair_sharing")
    return KueueMetricSettings(frozenset(on), assumption=install.suffix())
