"""Admission fair sharing as a stack configures it: Kueue's Configuration, ClusterQueues, LocalQueues.

Upstream (kubernetes-sigs/kueue@v0.19.2):
- ``apis/config/v1beta2/configuration_types.go`` ``AdmissionFairSharing`` (the same fields in
  v1beta1): ``usageHalfLifeTime``, ``usageSamplingInterval`` (``metav1.Duration`` strings) and
  ``resourceWeights`` (resource -> float, default 1); ``apis/config/v1beta2/defaults.go``:
  ``usageSamplingInterval`` defaults to 5m; ``pkg/config/validation.go``
  ``validateAdmissionFairSharing``: the half-life must not be negative, the interval must be
  positive, weights must not be negative (Kueue refuses to start otherwise);
- ``pkg/util/admissionfairsharing`` ``Enabled``: the Configuration sets ``admissionFairSharing``
  and the ``AdmissionFairSharing`` feature gate is on -- Beta and on by default since 0.15
  (``pkg/features/kube_features.go``); it can be turned off in the Configuration's
  ``featureGates`` or by the chart's ``controllerManager.featureGates`` (``--feature-gates``);
- ``ResourceWeights``: a ClusterQueue takes part when ``spec.admissionScope.admissionMode`` is
  ``UsageBasedAdmissionFairSharing`` (absent or ``NoAdmissionFairSharing``: it does not);
- ``LQWeightAsFloat64`` / ``ResolveLQWeight``: a LocalQueue's ``spec.fairSharing.weight``, 1 when
  absent or when the LocalQueue does not exist;
- ``pkg/scheduler/scheduler.go`` ``updateEntryPenalty``: with ``resources.quotaCheckStrategy:
  IgnoreUndeclared`` (gate ``QuotaCheckStrategy``, on by default in 0.19) the penalty counts only
  the resources the ClusterQueue covers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from whatif.errors import WhatIfError
from whatif.pack import parse_go_duration

USAGE_BASED = "UsageBasedAdmissionFairSharing"
ADMISSION_MODES = (USAGE_BASED, "NoAdmissionFairSharing")
GATE = "AdmissionFairSharing"
DEFAULT_SAMPLING_SECONDS = 300.0  # defaults.go: 5*time.Minute
WHERE = "Kueue Configuration admissionFairSharing"


def go_duration_seconds(raw: Any, where: str) -> float:
    """A ``metav1.Duration`` (a Go duration string such as ``168h`` or ``1h30m``) in seconds."""
    seconds = parse_go_duration(raw)
    if seconds is None:
        raise WhatIfError(f"{where}: got {raw!r}, expected a Go duration such as 5m, 168h or 1h30m")
    return seconds


@dataclass(frozen=True)
class AfsConfig:
    """Kueue's Configuration ``admissionFairSharing``, defaulted and validated."""

    half_life: float = 0.0  # seconds; 0: usage is reset at every sample
    sampling: float = DEFAULT_SAMPLING_SECONDS
    resource_weights: dict[str, float] = field(default_factory=dict)
    ignore_undeclared: bool = False  # resources.quotaCheckStrategy: IgnoreUndeclared


def gate_enabled(config: dict[str, Any], cli_gates: dict[str, bool]) -> bool:
    """The ``AdmissionFairSharing`` gate: on by default in v0.19.2, off when either place says so."""
    gates = config.get("featureGates")
    in_config = gates.get(GATE) if isinstance(gates, dict) else None
    return in_config is not False and cli_gates.get(GATE) is not False


def afs_config(config: dict[str, Any] | None, cli_gates: dict[str, bool]) -> AfsConfig | None:
    """``Enabled``: the Configuration's ``admissionFairSharing`` under the gate, else None."""
    if not config or config.get("admissionFairSharing") is None or not gate_enabled(config, cli_gates):
        return None
    raw = config["admissionFairSharing"]
    if not isinstance(raw, dict):
        raise WhatIfError(f"{WHERE}: got {raw!r}, expected a mapping")
    half_life = 0.0
    if raw.get("usageHalfLifeTime") is not None:
        half_life = go_duration_seconds(raw["usageHalfLifeTime"], f"{WHERE}.usageHalfLifeTime")
    if half_life < 0:
        raise WhatIfError(f"{WHERE}.usageHalfLifeTime: got {raw['usageHalfLifeTime']!r}, expected >= 0")
    sampling = DEFAULT_SAMPLING_SECONDS
    if raw.get("usageSamplingInterval") is not None:
        sampling = go_duration_seconds(raw["usageSamplingInterval"], f"{WHERE}.usageSamplingInterval")
        sampling = sampling or DEFAULT_SAMPLING_SECONDS  # cmp.Or: a zero duration takes the default
    if sampling <= 0:
        raise WhatIfError(
            f"{WHERE}.usageSamplingInterval: got {raw['usageSamplingInterval']!r}, expected > 0"
        )
    weights_raw = raw.get("resourceWeights") or {}
    if not isinstance(weights_raw, dict):
        raise WhatIfError(
            f"{WHERE}.resourceWeights: got {weights_raw!r}, expected a map of resource to weight"
        )
    weights: dict[str, float] = {}
    for name, value in weights_raw.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise WhatIfError(
                f"{WHERE}.resourceWeights.{name}: got {value!r}, expected a non-negative number"
            )
        weights[str(name)] = float(value)
    resources = config.get("resources")
    strategy = resources.get("quotaCheckStrategy") if isinstance(resources, dict) else None
    return AfsConfig(half_life, sampling, weights, strategy == "IgnoreUndeclared")


def admission_mode(spec: Any, where: str) -> bool:
    """Whether a ClusterQueue's ``spec.admissionScope.admissionMode`` is usage based."""
    scope = spec.get("admissionScope") if isinstance(spec, dict) else None
    mode = scope.get("admissionMode") if isinstance(scope, dict) else None
    if mode is None:
        return False
    if mode not in ADMISSION_MODES:
        raise WhatIfError(
            f"{where} spec.admissionScope.admissionMode: got {mode!r}, expected one of {', '.join(ADMISSION_MODES)}"
        )
    return bool(mode == USAGE_BASED)
