"""KAI Scheduler must not give GPU pods a RuntimeClass that GKE's managed drivers do not provide.

KAI's admission webhook writes ``runtimeClassName`` into GPU pods (reference/kai-kuberay-skypilot.md
§1.2, read against the charts in ``../shared/vendor``):

- v0.16.0 and later: only GPU-*fraction* pods (``gpu-fraction`` / ``gpu-memory`` annotations, so
  only with ``global.gpuSharing``), with the class in ``admission.gpuFractionRuntimeClassName``
  (chart default ``nvidia``; ``""`` disables it: ``crds/kai.scheduler_configs.yaml`` @v0.17.0);
  the deprecated ``admission.gpuPodRuntimeClassName`` is used when the new key is absent
  (``templates/_helpers.tpl`` @v0.17.0).
- v0.13.0 and older: every GPU pod and KAI's reservation pods, with the class in
  ``admission.gpuPodRuntimeClassName`` (default ``nvidia``, ``values.yaml`` @v0.13.0).

GKE's managed GPU drivers (``gpuDriverInstallationConfig``) expose GPUs through the device plugin
and create no ``nvidia`` RuntimeClass, so unless the stack declares a RuntimeClass of that name
(for example a GPU operator it installs), every such pod is refused at admission.  The rule runs
only for stacks with a GKE cluster.  Both chart locations are recognised: ``oci://ghcr.io/nvidia/
kai-scheduler/kai-scheduler`` (v0.13.0 and older) and ``oci://ghcr.io/kai-scheduler/kai-scheduler/
kai-scheduler`` (v0.13.1 on), by the chart name (``model.helm.chart_id``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ..builders import stack_policy
from ..model import StackModel
from ..model.helm import HelmRelease
from ..report import Reporter
from ..values import Unknown, as_str

CHART_DEFAULT_CLASS = "nvidia"
FRACTION_ONLY_FROM = (0, 16, 0)


def _version(text: str) -> tuple[int, int, int] | None:
    match = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)(?:[-+].*)?", text)
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


def injected_class(release: HelmRelease) -> str | Unknown | None:
    """The RuntimeClass KAI's webhook injects for this release's values; "" or None = none."""
    version = release.version
    if isinstance(version, Unknown):
        return version
    parsed = _version(version) if isinstance(version, str) else None
    fraction_only = parsed is None or parsed >= FRACTION_ONLY_FROM  # unpinned: the newest chart
    if fraction_only:
        sharing = release.kai_gpu_sharing()
        if isinstance(sharing, Unknown):
            return sharing
        if sharing is not True:
            return None  # no fraction pods without GPU sharing
        keys: tuple[str, ...] = ("gpuFractionRuntimeClassName", "gpuPodRuntimeClassName")
    else:
        keys = ("gpuPodRuntimeClassName",)
    admission = release.value("admission")
    if isinstance(admission, Unknown):
        return admission
    for key in keys:
        if isinstance(admission, dict) and key in admission:
            value = admission[key]
            return value if isinstance(value, Unknown) else (as_str(value) or "")
    return CHART_DEFAULT_CLASS


def check_kai_runtime_class(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    if not model.gke_clusters():
        return
    declared = {o.name for o in model.kube_objects("node.k8s.io", "RuntimeClass")}
    for release in model.kai_releases():
        klass = injected_class(release)
        if isinstance(klass, Unknown):
            reporter.cannot_check(release, "the chart version or admission values are unknown until apply")
            continue
        if not klass or klass in declared:
            continue
        reporter.violation(
            release,
            f"KAI injects runtimeClassName '{klass}' into GPU pods, but GKE's managed GPU drivers provide no "
            "such RuntimeClass and the stack declares none, so those pods are refused",
            'set the chart value `admission.gpuFractionRuntimeClassName: ""` (KAI v0.16.0 or newer), or '
            f"declare a RuntimeClass '{klass}' whose handler the nodes really have",
        )


POLICIES: list[Policy] = [
    stack_policy(
        "kai-runtime-class-on-gke",
        "On GKE, KAI must not inject a RuntimeClass (default `nvidia`) that the managed GPU drivers do not provide.",
        check_kai_runtime_class,
    ),
]
