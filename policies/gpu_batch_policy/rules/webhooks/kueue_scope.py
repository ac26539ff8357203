"""What the stack's Kueue install turns on: feature gates and integration frameworks.

Kueue's webhooks only exist for the frameworks its Configuration enables
(``integrations.frameworks``; kubernetes-sigs/kueue v0.19.2
``pkg/controller/jobframework/setup.go`` ``SetupControllers`` registers a webhook per enabled
integration), and several rules depend on feature gates whose v0.19.2 defaults are in
``pkg/features/kube_features.go``.  A stack without a Kueue release (Kueue installed elsewhere, or
only its objects declared) is judged under the 0.19.2 chart's defaults.

The job webhooks' ``namespaceSelector`` is ``managedJobsNamespaceSelector`` when the
Configuration sets it, else every namespace but ``kube-system`` and the release's
(``charts/kueue/templates/webhook/manifests.yaml`` at v0.19.2, one stanza per webhook).
"""

from __future__ import annotations

from ...facts.model import StackModel
from ...facts.model.helm import KUEUE_CHART_DEFAULT_FRAMEWORKS
from ...facts.selectors import namespace_labels, selector_matches
from ...primitives.values import Unknown, dig

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


DEFAULT_KUEUE_NAMESPACE = "kueue-system"  # the chart's documented install namespace


def webhooks_cover(model: StackModel, namespace: str, *, declared_only: bool = False) -> bool | None:
    """Whether the job webhooks of some Kueue install see objects in ``namespace``; None when it
    depends on something unknown (a namespace label the stack does not declare, a computed config).

    ``declared_only``: judge the namespace by the labels the stack declares for it as if they were
    all it has (what the stack itself does to the namespace, ignoring hand-made labels)."""
    labels, complete = namespace_labels(model, namespace)
    complete = complete or declared_only
    releases = model.kueue_releases()
    if not releases:
        return namespace not in ("kube-system", DEFAULT_KUEUE_NAMESPACE)
    verdicts: list[bool | None] = []
    for release in releases:
        config = release.kueue_config()
        if config.unknown is not None:
            verdicts.append(None)
            continue
        selector = dig(config.data, "managedJobsNamespaceSelector") if isinstance(config.data, dict) else None
        if isinstance(selector, Unknown):
            verdicts.append(None)
        elif isinstance(selector, dict):
            verdicts.append(selector_matches(selector, labels, complete=complete))
        else:
            own = release.namespace if isinstance(release.namespace, str) else None
            verdicts.append(namespace not in ("kube-system", own))
    if True in verdicts:
        return True
    return None if None in verdicts else False
