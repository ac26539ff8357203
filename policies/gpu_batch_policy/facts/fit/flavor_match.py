"""Whether a ResourceFlavor can take a pod set's pods: the one decision the pack's
``kueue-flavor-eligible`` rule and the what-if simulator (``whatif.flavors``) both make.

kubernetes-sigs/kueue v0.19.2 ``pkg/scheduler/flavorassigner/flavorassigner.go``
``checkFlavorForPodSets`` (after the TAS check, which stays with the pack rule: the simulator does
not model TAS), for each pod set of the flavor's group, in this order:

1. taints: ``corev1helpers.FindMatchingUntoleratedTaint`` over the flavor's ``nodeTaints`` with
   ``NoSchedule``/``NoExecute`` effect, against the pod's tolerations followed by the flavor's own
   ``tolerations`` ("untolerated taint %s in flavor %s");
2. node affinity: ``flavorSelector`` keeps the pod's ``nodeSelector`` entries and required node
   affinity expressions whose key is one of *this* flavor's ``nodeLabels`` (a term left empty
   makes the whole affinity match any flavor, as the terms are ORed), then
   ``RequiredNodeAffinity.Match`` against a node carrying just those labels ("flavor %s doesn't
   match node affinity").

``spec`` is the pod template's ``spec`` as written (a mapping), or None for a pod set that sets
none of these.  The verdict is three-valued, like the pack's other placement checks: a reason
string when Kueue skips the flavor, None when it may take it -- including whenever something the
verdict depends on is unknown until apply, so no finding is guessed.
"""

from __future__ import annotations

from typing import Any

from ...primitives.values import Unknown, as_str, dig, str_map
from ..model.kueue import ResourceFlavor
from .placement import REQUIRED_NODE_TERMS, NodeTaint, affinity_matches, tolerates

BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")  # the filter ``checkFlavorForPodSets`` passes


def untolerated_taint(spec: Any, flavor: ResourceFlavor) -> str | None:
    """Kueue's reason when a blocking taint of ``flavor`` is tolerated by neither the pod nor the
    flavor; None when every such taint is tolerated or the answer is unknown."""
    if isinstance(spec, Unknown):
        return None
    pod_tolerations = dig(spec, "tolerations")
    if isinstance(pod_tolerations, Unknown):
        return None
    tolerations: list[Any] = list(pod_tolerations) if isinstance(pod_tolerations, list) else []
    tolerations.extend(flavor.tolerations)
    for raw in flavor.node_taints:
        key, value, effect = (as_str(dig(raw, k)) for k in ("key", "value", "effect"))
        if not isinstance(key, str) or not isinstance(effect, str) or isinstance(value, Unknown):
            continue
        if effect not in BLOCKING_EFFECTS:
            continue
        taint = NodeTaint(key, value or "", effect)
        if tolerates(tolerations, taint) is False:
            return f"untolerated taint {taint.describe()} in flavor {flavor.name}"
    return None


def affinity_mismatch(spec: Any, flavor: ResourceFlavor) -> str | None:
    """``flavorSelector`` then ``RequiredNodeAffinity.Match`` against the flavor's ``nodeLabels``."""
    if not flavor.node_labels_known or any(isinstance(v, Unknown) for v in flavor.node_labels.values()):
        return None
    if isinstance(spec, Unknown):
        return None
    labels = flavor.node_labels
    selector_raw = dig(spec, "nodeSelector")
    terms = dig(spec, *REQUIRED_NODE_TERMS)
    if isinstance(selector_raw, Unknown) or isinstance(terms, Unknown):
        return None
    for key, want in str_map(selector_raw).items():
        if key in labels and not isinstance(want, Unknown) and labels[key] != want:
            return f"flavor {flavor.name} doesn't match node affinity"
    if isinstance(terms, list) and terms:
        cut: list[Any] = []
        for term in terms:
            exprs = dig(term, "matchExpressions")
            kept = [e for e in (exprs if isinstance(exprs, list) else []) if dig(e, "key") in labels]
            if not kept:
                cut = []  # an emptied term matches every flavor: affinity reduces to nodeSelector
                break
            cut.append({"matchExpressions": kept})
        if cut and affinity_matches(labels.get, cut) is False:
            return f"flavor {flavor.name} doesn't match node affinity"
    return None


def flavor_rejects(spec: Any, flavor: ResourceFlavor) -> str | None:
    """``checkFlavorForPodSets`` without TAS: the first reason Kueue skips ``flavor`` for a pod
    with this ``spec`` (taints before affinity, as upstream), or None."""
    return untolerated_taint(spec, flavor) or affinity_mismatch(spec, flavor)
