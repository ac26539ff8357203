"""KAI v0.17.0, rendered with the real Helm engine from ../shared/vendor: what the component's values do.

With the chart's defaults KAI injects `nvidia` into GPU-fraction pods, and the component keeps it
(issue 20: the NVIDIA GPU Operator creates that RuntimeClass; issue 10's `""` admitted fraction pods
without any GPU).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.stack_runner import named, unedited_run

VENDOR = Path(__file__).resolve().parents[2] / "shared" / "vendor"
CONFIG_MAP = "kai-scheduler/templates/hooks/post/kai-config-deployer/configmap.yaml"

helm_python = pytest.importorskip("helm_python")


def kai_config(version: str, values: dict[str, Any]) -> dict[str, Any]:
    """The kai-config Config the chart deploys (from its post-install hook's ConfigMap)."""
    chart = VENDOR / f"kai-scheduler-{version}"
    if not chart.is_dir():
        pytest.skip(f"chart mirror {chart} not present")
    rendered = helm_python.Chart.load(str(chart)).render(
        values, name="kai-scheduler", namespace="kai-scheduler"
    )
    # v0.17.0 ships it inside a hook's ConfigMap; v0.13.0 as a plain template.
    texts = (
        [yaml.safe_load(rendered[CONFIG_MAP])["data"]["kai-config.yaml"]] if CONFIG_MAP in rendered else []
    )
    texts += list(rendered.values())
    configs = [
        d for t in texts for d in yaml.safe_load_all(t) if isinstance(d, dict) and d.get("kind") == "Config"
    ]
    assert len(configs) == 1
    return dict(configs[0])


def component_values() -> dict[str, Any]:
    release = named(unedited_run("kai"), "kai-scheduler-release").inputs
    assert release["chart"] == "oci://ghcr.io/kai-scheduler/kai-scheduler/kai-scheduler"
    assert release["version"] == "v0.17.0"
    return dict(release["values"])


def test_chart_default_injects_nvidia() -> None:
    admission = kai_config("v0.17.0", {})["spec"]["admission"]
    assert admission["gpuFractionRuntimeClassName"] == "nvidia"


def test_component_values_keep_the_nvidia_runtime_class_and_cdi() -> None:
    values = component_values()
    assert values["admission"] == {"gpuFractionRuntimeClassName": "nvidia"}
    assert values["binder"] == {"cdiEnabled": True}, "the kai stack runs the GPU Operator (CDI on)"
    spec = kai_config("v0.17.0", values)["spec"]
    assert spec["admission"]["gpuFractionRuntimeClassName"] == "nvidia"
    assert spec["binder"]["cdiEnabled"] is True
    assert spec["admission"]["gpuSharing"] is True
    # The webhook port the firewall rule opens on private clusters.
    assert spec["admission"]["webhook"]["targetPort"] == 9443


def test_old_chart_injects_into_every_gpu_pod() -> None:
    admission = kai_config("v0.13.0", {})["spec"]["admission"]
    assert admission["gpuPodRuntimeClassName"] == "nvidia"
