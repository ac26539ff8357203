"""On GKE, KAI must not inject an `nvidia` RuntimeClass the managed drivers lack (issue 10 #3)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.policies.pack_harness import UNKNOWN, Res, run
from tests.policies.pack_harness import policy as get_policy
from tests.policies.pack_objects import gke_cluster, helm_release, k8s, patch

RULE = get_policy("kai-runtime-class-on-gke")
OLD_CHART = "oci://ghcr.io/nvidia/kai-scheduler/kai-scheduler"
NEW_CHART = "oci://ghcr.io/kai-scheduler/kai-scheduler/kai-scheduler"


def kai(chart: str, version: str, **values: Any) -> Res:
    release = helm_release("kai-scheduler", chart, values, "kai-scheduler")
    return patch(release, "version", version)


SHARING = {"global": {"gpuSharing": True}}


@pytest.mark.parametrize(("chart", "version"), [(OLD_CHART, "v0.13.0"), (NEW_CHART, "v0.17.0")])
def test_both_chart_locations_are_judged(chart: str, version: str) -> None:
    result = run(RULE, [gke_cluster(), kai(chart, version, **SHARING)])
    assert len(result.violations) == 1 and "runtimeClassName 'nvidia'" in result.messages[0]


def test_turning_the_injection_off_passes() -> None:
    off = kai(NEW_CHART, "v0.17.0", admission={"gpuFractionRuntimeClassName": ""}, **SHARING)
    assert run(RULE, [gke_cluster(), off]).clean


def test_the_deprecated_key_is_read_when_the_new_one_is_absent() -> None:
    deprecated_off = kai(NEW_CHART, "v0.17.0", admission={"gpuPodRuntimeClassName": ""}, **SHARING)
    assert run(RULE, [gke_cluster(), deprecated_off]).clean


def test_new_releases_inject_only_with_gpu_sharing() -> None:
    assert run(RULE, [gke_cluster(), kai(NEW_CHART, "v0.17.0")]).clean
    # v0.13.0 injects into every GPU pod, sharing or not.
    assert len(run(RULE, [gke_cluster(), kai(OLD_CHART, "v0.13.0")]).violations) == 1


def test_a_declared_runtime_class_satisfies_it() -> None:
    runtime = k8s("node.k8s.io/v1", "RuntimeClass", "nvidia", handler="nvidia")
    assert run(RULE, [gke_cluster(), runtime, kai(NEW_CHART, "v0.17.0", **SHARING)]).clean


def test_only_gke_stacks_are_judged_and_unknowns_wait() -> None:
    assert run(RULE, [kai(NEW_CHART, "v0.17.0", **SHARING)]).clean
    unknown = run(RULE, [gke_cluster(), kai(NEW_CHART, UNKNOWN, **SHARING)])
    assert unknown.clean and unknown.cannot_check


# --- issue 20: the NVIDIA GPU Operator provides `nvidia`; `""` is never the fix for fractions ----
def gpu_operator(**values: Any) -> Res:
    """The pinned GPU Operator release; the pack renders it and adds the classes its controller creates."""
    release = helm_release("gpu-operator", "gpu-operator", values, "gpu-operator")
    release = patch(release, "version", "v26.7.0")
    return patch(release, "repositoryOpts", {"repo": "https://helm.ngc.nvidia.com/nvidia"})


def test_the_gpu_operator_release_provides_the_nvidia_class() -> None:
    assert run(RULE, [gke_cluster(), gpu_operator(), kai(NEW_CHART, "v0.17.0", **SHARING)]).clean


def test_the_fix_for_fractions_is_the_operator_not_an_empty_class() -> None:
    (message,) = run(RULE, [gke_cluster(), kai(NEW_CHART, "v0.17.0", **SHARING)]).messages
    assert "install the NVIDIA GPU Operator" in message
    assert '""' not in message


def test_an_empty_class_under_a_cdi_gpu_operator_is_caught() -> None:
    off = kai(NEW_CHART, "v0.17.0", admission={"gpuFractionRuntimeClassName": ""}, **SHARING)
    (message,) = run(RULE, [gke_cluster(), gpu_operator(), off]).messages
    assert "nothing reads the NVIDIA_VISIBLE_DEVICES" in message
    # With the operator's CDI off, `nvidia` is containerd's default runtime: "" then works.
    assert run(RULE, [gke_cluster(), gpu_operator(cdi={"enabled": False}), off]).clean


def test_nri_removes_the_operator_class() -> None:
    nri = gpu_operator(cdi={"enabled": True, "nriPluginEnabled": True})
    result = run(RULE, [gke_cluster(), nri, kai(NEW_CHART, "v0.17.0", **SHARING)])
    assert len(result.violations) == 1, result.messages
