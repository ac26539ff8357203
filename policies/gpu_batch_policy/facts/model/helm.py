"""Helm v3 releases of the charts the platform wires together, and their values.

A ``kubernetes:helm.sh/v3:Release`` is one opaque resource whose ``values`` are the chart values
(pulumi.md §1.4), so the rules read the chart's own keys (DESIGN.md "Wire facts"):
Kueue ``managerConfig.controllerManagerConfigYaml`` (a YAML *string* holding the controller
Configuration) and ``controllerManager.featureGates`` (list of ``{name, enabled}``); KubeRay
``batchScheduler.name``; KAI ``global.gpuSharing``; SkyPilot ``apiService.config`` (a YAML string).
The chart is recognised by the last path segment of ``chart`` (``kueue``,
``oci://registry.k8s.io/kueue/charts/kueue``, ``kuberay/kuberay-operator`` ...), so KAI is
recognised at both of its locations: ``oci://ghcr.io/nvidia/kai-scheduler/kai-scheduler``
(v0.13.0 and older) and ``oci://ghcr.io/kai-scheduler/kai-scheduler/kai-scheduler`` (v0.13.1 on,
KAI #1153).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import yaml

from ...primitives.values import Unknown, as_bool, as_str, dig, plain
from ...primitives.values_yaml import YamlLimitError, load_limited
from ...primitives.words import type_word
from .base import Resource

KUEUE = "kueue"
KUBERAY = "kuberay-operator"
KAI = "kai-scheduler"
SKYPILOT = "skypilot"
GPU_OPERATOR = "gpu-operator"
_CHART_IDS = {
    "gpu-operator": GPU_OPERATOR,
    "kueue": KUEUE,
    "kuberay-operator": KUBERAY,
    "kai-scheduler": KAI,
    "skypilot": SKYPILOT,
    "skypilot-nightly": SKYPILOT,
}

# integrations.frameworks of the Kueue chart's default controllerManagerConfigYaml
# (K:charts/kueue/values.yaml, kueue.md §5 "Chart default content").  Used when a release does not
# override managerConfig.controllerManagerConfigYaml.
KUEUE_CHART_DEFAULT_FRAMEWORKS: tuple[str, ...] = (
    "batch/job",
    "kubeflow.org/mpijob",
    "ray.io/rayjob",
    "ray.io/rayservice",
    "ray.io/raycluster",
    "jobset.x-k8s.io/jobset",
    "workload.codeflare.dev/appwrapper",
    "trainer.kubeflow.org/trainjob",
    "pod",
    "deployment",
    "statefulset",
    "leaderworkerset.x-k8s.io/leaderworkerset",
)
# Kueue's own default when a Configuration has no (or an empty) frameworks list (kueue.md §5).
KUEUE_DEFAULT_FRAMEWORKS: tuple[str, ...] = ("batch/job",)


@dataclass(frozen=True)
class ParsedYaml:
    """A YAML string value: parsed ``data``, or ``unknown``, or a parse ``error``; ``present``
    is False when the key is absent."""

    present: bool
    data: Any = None
    unknown: Unknown | None = None
    error: str | None = None


def parse_yaml_value(raw: Any) -> ParsedYaml:
    if raw is None:
        return ParsedYaml(present=False)
    if isinstance(raw, Unknown):
        return ParsedYaml(present=True, unknown=raw)
    if isinstance(raw, dict):  # a program may pass the structure instead of a string
        return ParsedYaml(present=True, data=raw)
    if not isinstance(raw, str):
        return ParsedYaml(present=True, error=f"expected a YAML string, got a {type_word(raw)}")
    try:
        return ParsedYaml(present=True, data=plain(load_limited(raw)))
    except YamlLimitError as exc:
        return ParsedYaml(present=True, error=f"refused: {exc}")
    except yaml.YAMLError as exc:
        return ParsedYaml(present=True, error=f"invalid YAML: {_first_line(exc)}")


def _first_line(exc: yaml.YAMLError) -> str:
    """The parser's problem and where, without the quoted snippet of the input."""
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if problem and mark is not None:
        return f"{problem} (line {mark.line + 1}, column {mark.column + 1})"
    return str(exc).splitlines()[0] if str(exc) else "the YAML parser refused it"


@dataclass(frozen=True)
class FeatureGate:
    name: str | Unknown
    enabled: bool | Unknown | None


@dataclass(frozen=True)
class HelmRelease:
    res: Resource
    release_name: str
    chart: str | Unknown | None
    # "kueue" | "kuberay-operator" | "kai-scheduler" | "skypilot" | None
    chart_id: str | None
    version: str | Unknown | None
    repo: str | Unknown | None
    namespace: str | Unknown | None
    values: dict[str, Any] | Unknown
    # ``skipCrds``: Helm ``--skip-crds`` (the chart's ``crds/`` are not installed).
    skip_crds: bool | Unknown | None = None

    @property
    def urn(self) -> str:
        return self.res.urn

    def describe(self) -> str:
        chart = self.chart if isinstance(self.chart, str) else "?"
        return f"Helm Release '{self.release_name}' (chart {chart})"

    def value(self, *keys: str | int) -> Any:
        return dig(self.values, *keys)

    # --- Kueue -------------------------------------------------------------------------------
    def kueue_config(self) -> ParsedYaml:
        """``managerConfig.controllerManagerConfigYaml`` parsed (absent = chart default)."""
        return self._kueue_config

    @cached_property
    def _kueue_config(self) -> ParsedYaml:
        # Parsed once per release: several rules read it, some per workload.
        return parse_yaml_value(self.value("managerConfig", "controllerManagerConfigYaml"))

    def kueue_frameworks(self) -> tuple[str, ...] | Unknown | None:
        """Effective ``integrations.frameworks``; None when the config YAML cannot be parsed."""
        config = self.kueue_config()
        if not config.present:
            return KUEUE_CHART_DEFAULT_FRAMEWORKS
        if config.unknown is not None:
            return config.unknown
        if config.error is not None or not isinstance(config.data, dict):
            return None
        frameworks = dig(config.data, "integrations", "frameworks")
        if isinstance(frameworks, Unknown):
            return frameworks
        if not isinstance(frameworks, list) or not frameworks:
            return KUEUE_DEFAULT_FRAMEWORKS
        return tuple(f for f in frameworks if isinstance(f, str))

    def kueue_cli_feature_gates(self) -> tuple[FeatureGate, ...] | Unknown:
        """``controllerManager.featureGates`` (rendered as ``--feature-gates``)."""
        raw = self.value("controllerManager", "featureGates")
        if isinstance(raw, Unknown):
            return raw
        gates: list[FeatureGate] = []
        if isinstance(raw, list):
            for item in raw:
                name = as_str(dig(item, "name"))
                if name is not None:
                    gates.append(FeatureGate(name, as_bool(dig(item, "enabled"))))
        elif isinstance(raw, dict):  # tolerate a map form {Gate: bool}
            gates.extend(FeatureGate(k, as_bool(v)) for k, v in raw.items())
        return tuple(gates)

    def kueue_config_feature_gates(self) -> tuple[FeatureGate, ...] | Unknown:
        """``featureGates`` inside the controller Configuration YAML (map of name → bool)."""
        config = self.kueue_config()
        if config.unknown is not None:
            return config.unknown
        raw = dig(config.data, "featureGates")
        if isinstance(raw, Unknown):
            return raw
        if not isinstance(raw, dict):
            return ()
        return tuple(FeatureGate(k, as_bool(v)) for k, v in raw.items())

    # --- KubeRay / KAI -----------------------------------------------------------------------
    def kuberay_batch_scheduler(self) -> str | Unknown | None:
        return as_str(self.value("batchScheduler", "name"))

    def kai_gpu_sharing(self) -> bool | Unknown | None:
        """``global.gpuSharing`` (chart default false, kai-kuberay-skypilot.md §1.2)."""
        return as_bool(self.value("global", "gpuSharing"))

    # --- SkyPilot ----------------------------------------------------------------------------
    def skypilot_config(self) -> ParsedYaml:
        return self._skypilot_config

    @cached_property
    def _skypilot_config(self) -> ParsedYaml:
        return parse_yaml_value(self.value("apiService", "config"))

    def skypilot_queue_names(self) -> list[str | Unknown]:
        """LocalQueue names the server's config points pods at (all known spellings).

        ``kubernetes.quota.queue`` (newest; takes precedence), ``kubernetes.kueue.local_queue_name``
        and the older ``kubernetes.pod_config.metadata.labels[kueue.x-k8s.io/queue-name]``
        (kai-kuberay-skypilot.md §3.3).
        """
        config = self.skypilot_config()
        if config.unknown is not None:
            return [config.unknown]
        data = config.data
        found: list[str | Unknown] = []
        for keys in (
            ("kubernetes", "quota", "queue"),
            ("kubernetes", "kueue", "local_queue_name"),
            ("kubernetes", "pod_config", "metadata", "labels", "kueue.x-k8s.io/queue-name"),
        ):
            value = as_str(dig(data, *keys))
            if value is not None:
                found.append(value)
        return found


def chart_id(chart: str | Unknown | None) -> str | None:
    if not isinstance(chart, str):
        return None
    last = chart.rstrip("/").rsplit("/", 1)[-1]
    return _CHART_IDS.get(last)


def helm_release(res: Resource) -> HelmRelease:
    chart = as_str(res.get("chart"))
    name = as_str(res.get("name"))
    values = res.get("values")
    return HelmRelease(
        res=res,
        release_name=name if isinstance(name, str) else res.pulumi_name,
        chart=chart,
        chart_id=chart_id(chart),
        version=as_str(res.get("version")),
        repo=as_str(res.get("repositoryOpts", "repo")),
        namespace=as_str(res.get("namespace")),
        values=values if isinstance(values, (dict, Unknown)) else {},
        skip_crds=as_bool(res.get("skipCrds")),
    )
