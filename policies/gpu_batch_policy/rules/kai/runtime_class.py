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

GKE's managed GPU drivers create no ``nvidia`` RuntimeClass; the NVIDIA GPU Operator does, at run
time, from its ClusterPolicy (``charts/operator_runtime.py`` adds it to the model with its citation).
A KAI fraction pod gets its GPU only through ``NVIDIA_VISIBLE_DEVICES`` under NVIDIA's runtime
(reference/gpu-sharing-on-gke.md §2, §4), so the fix for a missing class is the operator, never
``""``: with ``""`` the pod is admitted and runs without a GPU.  Under a GPU Operator with CDI on
(the v26.7.0 default) ``""`` is itself a violation: the ``nvidia`` handler is not containerd's
default runtime there (gpu-operator ``controllers/object_controls.go``
``transformToolkitCtrForCDI`` @ v26.7.0), so nothing reads the variable.  The rule runs only for
stacks with a GKE cluster.  Both chart locations are recognised: ``oci://ghcr.io/nvidia/
kai-scheduler/kai-scheduler`` (v0.13.0 and older) and ``oci://ghcr.io/kai-scheduler/kai-scheduler/
kai-scheduler`` (v0.13.1 on), by the chart name (``model.helm.chart_id``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.model import StackModel
from ...facts.model.helm import HelmRelease
from ...primitives.values import Unknown, as_str, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter

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


def cdi_operator_policies(model: StackModel) -> list[Any]:
    """GPU Operator ClusterPolicies (rendered from a release) with CDI on: their ``nvidia`` handler
    runs in ``cdi`` mode and is not containerd's default runtime (NVIDIA/gpu-operator
    ``controllers/object_controls.go`` ``transformToolkitCtrForCDI`` @ v26.7.0)."""
    return [
        o
        for o in model.kube_objects("nvidia.com", "ClusterPolicy")
        if dig(o.props, "spec", "cdi", "enabled") is not False
    ]


def check_kai_runtime_class(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    if not model.gke_clusters():
        return
    for release in model.kai_releases():
        klass = injected_class(release)
        if isinstance(klass, Unknown):
            reporter.cannot_check(release, "the chart version or admission values are unknown until apply")
            continue
        fraction_only = _fraction_only(release)
        if not klass:
            if klass == "" and fraction_only and cdi_operator_policies(model):
                reporter.violation(
                    release,
                    'KAI\'s fraction pods get no runtimeClassName (admission.gpuFractionRuntimeClassName is ""), '
                    "but under the GPU Operator with CDI the nvidia runtime is not containerd's default, so "
                    "nothing reads the NVIDIA_VISIBLE_DEVICES KAI gives them and they run without a GPU",
                    "leave admission.gpuFractionRuntimeClassName at the chart default `nvidia` (the class the "
                    "GPU Operator creates)",
                )
            continue
        found = model.lookup("node.k8s.io", "RuntimeClass", klass, near=release)
        if found.status == "unknown":
            reporter.cannot_check(
                release, f"RuntimeClass '{klass}' (a RuntimeClass's name is unknown until apply)"
            )
            continue
        if found.ok:
            continue
        fix = (
            "install the NVIDIA GPU Operator (chart gpu-operator; its ClusterPolicy controller creates "
            f"RuntimeClass '{klass}') on GPU pools with gpuDriverVersion INSTALLATION_DISABLED and the label "
            "gke-no-default-nvidia-gpu-device-plugin=true; GPU fractions need NVIDIA's runtime"
        )
        if not fraction_only:
            fix += (
                ' (KAI before v0.16.0 injects it into every GPU pod: `admission.gpuPodRuntimeClassName: ""` '
                "suits whole-GPU pods on GKE-managed pools)"
            )
        reporter.violation(
            release,
            f"KAI injects runtimeClassName '{klass}' into "
            + ("GPU-fraction pods" if fraction_only else "GPU pods")
            + ", but GKE's managed GPU drivers provide no such RuntimeClass and nothing in the stack creates it, "
            "so those pods are refused",
            fix,
        )


def _fraction_only(release: HelmRelease) -> bool:
    version = release.version
    parsed = _version(version) if isinstance(version, str) else None
    return parsed is None or parsed >= FRACTION_ONLY_FROM


POLICIES: list[Policy] = [
    stack_policy(
        "kai-runtime-class-on-gke",
        "On GKE, the RuntimeClass KAI injects into GPU-fraction pods (default `nvidia`) exists -- the NVIDIA "
        "GPU Operator creates it -- and is not switched off under a CDI GPU Operator.",
        check_kai_runtime_class,
    ),
]
