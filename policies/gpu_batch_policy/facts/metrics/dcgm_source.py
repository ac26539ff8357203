"""Whether the stack's DCGM series come only from the GPU Operator's dcgm-exporter with its
default counters -- the one case the pack can judge a ``DCGM_`` name (:mod:`.dcgm`).

- The operator runs in the stack: a ``gpu-operator`` release (gpu_stack.GPU_OPERATOR_CHART).
- Its exporter is on: chart value ``dcgmExporter.enabled`` (NVIDIA/gpu-operator v26.7.0
  deployments/gpu-operator/values.yaml, default true) and every ClusterPolicy's
  ``spec.dcgmExporter.enabled`` (unset = on).
- Its counters are the default file: no ``dcgmExporter.config.name`` on the release or a
  ClusterPolicy (controllers/object_controls.go points ``DCGM_EXPORTER_COLLECTORS`` at the
  ConfigMap then; its CSV is the user's, not upstream's).
- No GKE managed DCGM on a cluster of the stack (``monitoringConfig.enableComponents`` holds
  ``DCGM``): GKE's exporter has its own metric set, which the pack cannot cite.
"""

from __future__ import annotations

from ...primitives.values import Unknown, dig
from ..gpu_stack import GPU_OPERATOR_CHART
from ..model import StackModel

# GKE's managed DCGM component name in `monitoringConfig.enableComponents` (components/gke.py writes it).
DCGM_COMPONENT = "DCGM"


def operator_default_exporter_only(model: StackModel) -> bool | None:
    """True when the operator's default dcgm-exporter is the stack's only DCGM source; False
    when it is not (or is custom); None when that is unknown until apply."""
    releases = model.helm_releases(GPU_OPERATOR_CHART)
    if not releases:
        return False
    settings = [
        (r.value("dcgmExporter", "enabled"), r.value("dcgmExporter", "config", "name")) for r in releases
    ]
    settings += [
        (
            dig(p.props, "spec", "dcgmExporter", "enabled"),
            dig(p.props, "spec", "dcgmExporter", "config", "name"),
        )
        for p in model.kube_objects("nvidia.com", "ClusterPolicy")
    ]
    components = [dig(c.res.get("monitoringConfig"), "enableComponents") for c in model.gke_clusters()]
    values = [v for pair in settings for v in pair] + components
    if any(isinstance(v, Unknown) for v in values):
        return None
    if any(enabled is False for enabled, _ in settings) or any(name for _, name in settings):
        return False
    return not any(isinstance(c, list) and DCGM_COMPONENT in c for c in components)
