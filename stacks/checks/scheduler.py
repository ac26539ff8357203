"""Checks across the scheduler keys (``gpu-batch:kueue``, ``gpu-batch:kai``, ``gpu-batch:kuberay``).

Each rule is something the operator itself would refuse only at runtime -- a manager that exits
on an unknown feature gate, a chart version that does not exist, a KubeRay too old for the KAI
plugin -- found here before any resource is planned.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from pydantic import BaseModel

from components.kai import KAI_VERSION
from components.kuberay import KUBERAY_MIN_FOR_KAI, KUBERAY_VERSION
from components.kueue import KUEUE_VERSION
from components.kueue_config import (
    FAIR_SHARING_STRATEGY_SETS,
    NEEDS_POD_INTEGRATION,
    feature_gate_problem,
)
from stacks.config.schedulers import KaiConfig, KubeRayConfig, KueueConfig
from stacks.errors import ConfigIssue

KUEUE_KEY = "gpu-batch:kueue"
KAI_KEY = "gpu-batch:kai"
KUBERAY_KEY = "gpu-batch:kuberay"

# Kueue 0.15 introduced the v1beta2 API (and the v1beta2 Configuration) the stack emits.
KUEUE_MIN_VERSION = "0.15.0"
# From v0.16.0 only GPU-fraction pods get a runtimeClassName, and the chart value
# admission.gpuFractionRuntimeClassName controls it (the stack keeps `nvidia`, which the NVIDIA GPU
# Operator creates: components/kai.py); v0.13.0 injects `nvidia` into every GPU pod and its
# reservation pods, a RuntimeClass GKE's managed drivers do not provide
# (reference/kai-kuberay-skypilot.md §1.2; values.yaml @v0.13.0 admission.gpuPodRuntimeClassName).
# The chart values this stack sets were read at v0.17.0.
KAI_MIN_VERSION = "v0.16.0"
# Tags that exist in the KAI repository but are retracted in its go.mod: not releases.
KAI_RETRACTED = frozenset({"v0.20.0", "v0.20.1"})
# ray.io/v1, the API the stack and the policy pack use, is served from KubeRay 1.0.0.
KUBERAY_MIN_VERSION = "1.0.0"

_SEMVER = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")


def semver(text: str) -> tuple[int, int, int]:
    """``v0.13.0`` / ``0.13.0`` -> (0, 13, 0); callers check the format first."""
    match = _SEMVER.fullmatch(text)
    assert match is not None
    return int(match[1]), int(match[2]), int(match[3])


def check_schedulers(kueue: KueueConfig, kai: KaiConfig, kuberay: KubeRayConfig) -> Iterator[ConfigIssue]:
    if not kueue.enabled and not kai.enabled:
        yield ConfigIssue(
            f"{KUEUE_KEY}.enabled",
            f"true, or {KAI_KEY}.enabled: true (the platform needs a gang scheduler)",
            kueue.enabled,
        )
    yield from _unused_keys(KUEUE_KEY, kueue)
    yield from _unused_keys(KAI_KEY, kai)
    yield from _unused_keys(KUBERAY_KEY, kuberay)
    if kueue.enabled:
        yield from _check_kueue(kueue)
    if kai.enabled:
        yield from _check_version(
            f"{KAI_KEY}.version",
            kai.version,
            KAI_VERSION,
            KAI_MIN_VERSION,
            with_v=True,
            why=" (older releases inject runtimeClassName nvidia into GPU pods, which GKE's managed drivers lack)",
        )
        if kai.version in KAI_RETRACTED:
            yield ConfigIssue(
                f"{KAI_KEY}.version", "a KAI release (v0.20.0 and v0.20.1 are retracted tags)", kai.version
            )
    if kuberay.enabled:
        minimum = KUBERAY_MIN_FOR_KAI if kai.enabled else KUBERAY_MIN_VERSION
        why = " (the kai-scheduler batch scheduler first shipped in KubeRay 1.5.0)" if kai.enabled else ""
        yield from _check_version(
            f"{KUBERAY_KEY}.version", kuberay.version, KUBERAY_VERSION, minimum, with_v=False, why=why
        )


def _unused_keys(key: str, model: KueueConfig | KaiConfig | KubeRayConfig) -> Iterator[ConfigIssue]:
    """Settings of a component that is switched off would be silently ignored: refuse them."""
    if getattr(model, "enabled", True):
        return
    for name in sorted(model.model_fields_set - {"enabled"}):
        alias = type(model).model_fields[name].alias or name
        yield ConfigIssue(
            f"{key}.{alias}",
            f"no value while {key}.enabled is false (it would be ignored)",
            _plain(model, name),
        )


def _plain(model: BaseModel, name: str) -> object:
    value = getattr(model, name)
    return value.model_dump(by_alias=True) if isinstance(value, BaseModel) else value


def _check_version(
    path: str, version: str, pinned: str, minimum: str, *, with_v: bool, why: str = ""
) -> Iterator[ConfigIssue]:
    form = "vMAJOR.MINOR.PATCH" if with_v else "MAJOR.MINOR.PATCH without a leading v"
    if not _SEMVER.fullmatch(version) or version.startswith("v") != with_v:
        yield ConfigIssue(path, f"a chart version {form}, e.g. {pinned}", version)
        return
    if semver(version) < semver(minimum):
        yield ConfigIssue(path, f"{minimum} or newer{why}", version)


def _check_kueue(kueue: KueueConfig) -> Iterator[ConfigIssue]:
    version_ok = True
    for issue in _check_version(
        f"{KUEUE_KEY}.version",
        kueue.version,
        KUEUE_VERSION,
        KUEUE_MIN_VERSION,
        with_v=False,
        why=" (the stack writes v1beta2 Kueue objects and Configuration, served from 0.15)",
    ):
        version_ok = False
        yield issue
    if kueue.feature_gates and version_ok and semver(kueue.version)[:2] != semver(KUEUE_VERSION)[:2]:
        yield ConfigIssue(
            f"{KUEUE_KEY}.featureGates",
            f"no feature gates unless version is 0.19.x: gates are checked against Kueue {KUEUE_VERSION}'s list",
            kueue.feature_gates,
        )
    for name, enabled in kueue.feature_gates.items():
        problem = feature_gate_problem(name, enabled)
        if problem is not None:
            yield ConfigIssue(f"{KUEUE_KEY}.featureGates.{name}", problem, enabled)
    yield from _check_frameworks(kueue.extra_frameworks)
    ready = kueue.wait_for_pods_ready
    strategy = ready.requeuing_strategy
    if strategy.backoff_max_seconds < strategy.backoff_base_seconds:
        yield ConfigIssue(
            f"{KUEUE_KEY}.waitForPodsReady.requeuingStrategy.backoffMaxSeconds",
            f"at least backoffBaseSeconds ({strategy.backoff_base_seconds})",
            strategy.backoff_max_seconds,
        )
    if kueue.fair_sharing is not None:
        strategies = tuple(kueue.fair_sharing.preemption_strategies)
        if strategies not in FAIR_SHARING_STRATEGY_SETS:
            yield ConfigIssue(
                f"{KUEUE_KEY}.fairSharing.preemptionStrategies",
                "one of " + " | ".join(str(list(s)) for s in FAIR_SHARING_STRATEGY_SETS) + " (order matters)",
                list(strategies),
            )


def _check_frameworks(extra: list[str]) -> Iterator[ConfigIssue]:
    seen: set[str] = set()
    for index, name in enumerate(extra):
        if name in seen:
            yield ConfigIssue(f"{KUEUE_KEY}.extraFrameworks[{index}]", "each integration once", name)
        seen.add(name)
    needing_pod = [name for name in extra if name in NEEDS_POD_INTEGRATION]
    if needing_pod and "pod" not in extra:
        index = extra.index(needing_pod[0])
        yield ConfigIssue(
            f"{KUEUE_KEY}.extraFrameworks[{index}]",
            f"pod in extraFrameworks as well: Kueue runs {needing_pod[0]} through the pod integration",
            needing_pod[0],
        )
