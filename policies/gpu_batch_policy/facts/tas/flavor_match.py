"""Whether a flavor's Topology-Aware Scheduling setting lets Kueue give it to a pod set: one
decision for the pack's ``kueue-flavor-eligible``, the what-if's flavor assigner and the live tier.

Ported from kubernetes-sigs/kueue v0.19.2 ``pkg/scheduler/flavorassigner/tas_flavorassigner.go``
``checkPodSetAndFlavorMatchForTAS`` (run by ``checkFlavorForPodSets`` for every flavor of the
resource group, with the ``TopologyAwareScheduling`` gate, beta and on by default):

- a pod set requests TAS explicitly when its template carries ``podset-required-topology``,
  ``-preferred-topology``, ``-unconstrained-topology`` or a slice request
  (``apis/kueue/v1beta2/topology_types.go``; ``workload.IsExplicitlyRequestingTAS``), implicitly
  when it requests none and every flavor of its ClusterQueue has a ``topologyName``
  (``isTASImplied``: ``ClusterQueueSnapshot.IsTASOnly``), where every flavor matches;
- requested explicitly, a flavor without ``topologyName`` is refused ("Flavor %q does not support
  TopologyAwareScheduling") unless the pod set requests none of the group's covered resources
  (``hasOverlapWithPodRequestedResources``), and a TAS flavor whose Topology lacks the requested
  level is refused ("Flavor %q does not contain the requested level", ``TASFlavorSnapshot.HasLevel``);
- not requested on a ClusterQueue that is not TAS-only, a TAS flavor is refused ("Flavor %q
  supports only TopologyAwareScheduling"): such a pod set takes only the queue's plain flavors.

Kueue's own words are returned, so a caller can find them in a Workload's ``QuotaReserved``
message.  What is not known before apply (a ``topologyName``, an annotation value, a Topology the
stack does not declare) is never a refusal: ``None``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from ...primitives.values import Unknown
from .annotations import GROUP_NAME, PREFERRED, REQUIRED, SLICE_REQUIRED, TOPOLOGY_ANNOTATIONS

# kueue v0.19.2 pkg/controller/jobframework/tas.go podSetTopologyRequestBuilder.Build reads each of
# these into the pod set's TopologyRequest, and workload.IsExplicitlyRequestingTAS counts each
# field it fills (the multi-layer constraints too, gate TASMultiLayerTopology on by default)
TAS_REQUEST_ANNOTATIONS: Final = tuple(a for a in TOPOLOGY_ANNOTATIONS if a != GROUP_NAME)
"""The annotations that make a pod set request TAS explicitly."""


def requests_tas(annotations: Mapping[str, object]) -> bool:
    """``workload.IsExplicitlyRequestingTAS``: the pod template asks for a topology."""
    return any(key in annotations for key in TAS_REQUEST_ANNOTATIONS)


def tas_only(topology_names: Iterable[str | Unknown | None]) -> bool | None:
    """``ClusterQueueSnapshot.IsTASOnly``: every flavor of the queue has a ``topologyName``
    (``topology_names``: each flavor's); None when one is unknown or there is none."""
    names = list(topology_names)
    if not names or any(isinstance(n, Unknown) for n in names):
        return None
    return all(n is not None for n in names)


def tas_mismatch(
    flavor: str,
    topology_name: str | Unknown | None,
    annotations: Mapping[str, object],
    *,
    queue_tas_only: bool,
    overlaps: bool,
    levels: Sequence[str] | None,
) -> str | None:
    """Kueue's reason the flavor cannot take the pod set, or None (a match, or cannot tell).

    ``overlaps``: the pod set requests a resource the flavor's resource group covers; ``levels``:
    the ``nodeLabel`` of each level of the flavor's Topology (None: not known)."""
    if isinstance(topology_name, Unknown) or any(
        isinstance(annotations.get(k), Unknown) for k in TAS_REQUEST_ANNOTATIONS
    ):
        return None
    if not requests_tas(annotations):
        if queue_tas_only or topology_name is None:
            return None  # TAS implied on a TAS-only queue; a plain flavor for a plain pod set
        return f'Flavor "{flavor}" supports only TopologyAwareScheduling'
    if topology_name is None:
        return f'Flavor "{flavor}" does not support TopologyAwareScheduling' if overlaps else None
    if levels is None:
        return None
    wanted = [annotations.get(k) for k in (REQUIRED, PREFERRED, SLICE_REQUIRED)]
    if any(isinstance(level, str) and level not in levels for level in wanted):
        return f'Flavor "{flavor}" does not contain the requested level'
    return None
