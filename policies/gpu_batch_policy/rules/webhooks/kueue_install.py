"""What the stack's Kueue install turns on: feature gates and integration frameworks.

Kueue's webhooks only exist for the frameworks its Configuration enables
(``integrations.frameworks``; kubernetes-sigs/kueue v0.19.2
``pkg/controller/jobframework/setup.go`` ``SetupControllers`` registers a webhook per enabled
integration), and several rules depend on feature gates whose v0.19.2 defaults are in
``pkg/features/kube_features.go``.  A stack without a Kueue release (Kueue installed elsewhere, or
only its objects declared) is judged under the 0.19.2 chart's defaults.
"""

from __future__ import annotations

from ...model import StackModel
from ...model.helm import KUEUE_CHART_DEFAULT_FRAMEWORKS
from ...values import Unknown

# pkg/features/kube_features.go at v0.19.2 (Beta, on by default): ElasticJobsViaWorkloadSlices
# L712-715, TopologyAwareScheduling L683-686, WorkloadIdentifierAnnotations L884-885.
ELASTIC_GATE = "ElasticJobsViaWorkloadSlices"
TAS_GATE = "TopologyAwareScheduling"
IDENTIFIER_ANNOTATIONS_GATE = "WorkloadIdentifierAnnotations"


def gate_off(model: StackModel, gate: str) -> bool:
    """Whether a Kueue release of the stack turns ``gate`` off (all gates used here default on)."""
    for release in model.kueue_releases():
        for gates in (release.kueue_cli_feature_gates(), release.kueue_config_feature_gates()):
            if not isinstance(gates, Unknown) and any(g.name == gate and g.enabled is False for g in gates):
                return True
    return False


def framework_enabled(model: StackModel, framework: str) -> bool | Unknown | None:
    """Whether any Kueue release enables ``framework`` (chart defaults without a release);
    Unknown during preview, None when a release's configuration cannot be read."""
    releases = model.kueue_releases()
    if not releases:
        return framework in KUEUE_CHART_DEFAULT_FRAMEWORKS
    unreadable: Unknown | None = None
    for release in releases:
        frameworks = release.kueue_frameworks()
        if isinstance(frameworks, Unknown):
            unreadable = frameworks
        elif frameworks is not None and framework in frameworks:
            return True
    return unreadable if unreadable is not None else False
