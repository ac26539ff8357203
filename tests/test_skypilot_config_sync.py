"""A SkyPilot server follows the stack's config on upgrades, not only on its first start.

The chart's start script (skypilot 0.13.0 ``templates/api-deployment.yaml``) copies the
ConfigMap's ``config.yaml`` onto the server's volume only when the volume has none, so on an
upgrade a renamed LocalQueue would never reach the server.  These tests render the skypilot
stack's releases with the real Helm engine, take the server container's start script as the
chart wrote it, and run its config steps with ``sh`` in a scratch directory standing in for the
volume and the ConfigMap mount: first start, a restart after a dashboard edit, and an upgrade that
renames the team's LocalQueue.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.skypilot import CONFIG_DIGEST_ANNOTATION, CONFIGMAP_CONFIG, SERVER_CONFIG
from preview.charts import render_recorded_releases
from tests.stack_runner import shared_unless_edited, stack_files

TEAM = "team1"
RELEASE = f"skypilot-{TEAM}"
CONFIG_STEP = "# Initialize the SkyPilot config."
HOOK_MARKER = "# gpu-batch: the stack owns ~/.sky/config.yaml"


def rendered_server(edits: dict[str, Any] | None = None) -> tuple[str, str, str]:
    """(start script, ConfigMap config.yaml, pod annotation digest) of team1's rendered server."""
    releases = render_recorded_releases(shared_unless_edited("skypilot", edits).resources)
    (release,) = [r for r in releases if r.render.release_name == RELEASE]
    assert release.render.status == "rendered", release.render.message
    deployment = next(
        o
        for o in release.objects
        if o["kind"] == "Deployment" and o["metadata"]["name"].endswith("-api-server")
    )
    template = deployment["spec"]["template"]
    (server,) = [c for c in template["spec"]["containers"] if c.get("args", [None])[0] == "/bin/sh"]
    config_map = next(
        o for o in release.objects if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("-config")
    )
    return (
        server["args"][2],
        config_map["data"]["config.yaml"],
        template["metadata"]["annotations"][CONFIG_DIGEST_ANNOTATION],
    )


def config_steps(script: str, volume: Path, mount: Path) -> str:
    """The script from its start through the chart's config step, with the volume and the
    ConfigMap mount moved into scratch directories, and SkyPilot's own ConfigMap sync (a Python
    call into the server's package) replaced by a marker."""
    lines = script.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == CONFIG_STEP)
    end = next(i for i in range(start, len(lines)) if lines[i].strip() == "fi")
    steps = "\n".join(
        "echo synced-volume-config-to-configmap" if "config_map_utils" in line else line
        for line in lines[: end + 1]
    )
    return steps.replace("/root/.sky", str(volume)).replace(str(Path(CONFIGMAP_CONFIG).parent), str(mount))


def start(script: str, config_map: str, tmp_path: Path) -> str:
    volume, mount = tmp_path / "volume", tmp_path / "configmap"
    mount.mkdir(exist_ok=True)
    (mount / "config.yaml").write_text(config_map)
    done = subprocess.run(
        ["sh", "-c", config_steps(script, volume, mount)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def volume_config(tmp_path: Path) -> str:
    return (tmp_path / "volume" / Path(SERVER_CONFIG).name).read_text()


@pytest.fixture(scope="module")
def renamed_queue() -> dict[str, Any]:
    teams = json.loads(stack_files("skypilot").config["gpu-batch:teams"])
    teams[0]["localQueue"] = "team1-gpus"
    return {"gpu-batch:teams": teams}


def test_the_hook_runs_before_the_charts_config_step() -> None:
    script, _, _ = rendered_server()
    assert script.index(HOOK_MARKER) < script.index(CONFIG_STEP)


def test_first_start_restart_and_upgrade(tmp_path: Path, renamed_queue: dict[str, Any]) -> None:
    script, config, digest = rendered_server()
    start(script, config, tmp_path)
    assert volume_config(tmp_path) == config

    # A restart with the same stack config keeps an edit made through SkyPilot's dashboard.
    (tmp_path / "volume" / "config.yaml").write_text("edited: through the dashboard\n")
    out = start(script, config, tmp_path)
    assert volume_config(tmp_path) == "edited: through the dashboard\n"
    assert "synced-volume-config-to-configmap" in out

    # The upgrade renames the LocalQueue: the pod template changes (the pod rolls) and the server
    # now labels its pods into the new queue.
    new_script, new_config, new_digest = rendered_server(renamed_queue)
    assert new_digest != digest
    start(new_script, new_config, tmp_path)
    labels = yaml.safe_load(volume_config(tmp_path))["kubernetes"]["pod_config"]["metadata"]["labels"]
    assert labels["kueue.x-k8s.io/queue-name"] == "team1-gpus"


def test_without_the_hook_the_chart_keeps_the_old_queue(
    tmp_path: Path, renamed_queue: dict[str, Any]
) -> None:
    """The upstream behaviour the hook corrects: the chart's script alone ignores the new config."""
    script, config, _ = rendered_server()
    start(script, config, tmp_path)
    new_script, new_config, _ = rendered_server(renamed_queue)
    lines = new_script.splitlines()
    first = next(i for i, line in enumerate(lines) if HOOK_MARKER in line)
    last = next(i for i in range(first, len(lines)) if lines[i].strip() == "fi")
    start("\n".join(lines[:first] + lines[last + 1 :]), new_config, tmp_path)
    labels = yaml.safe_load(volume_config(tmp_path))["kubernetes"]["pod_config"]["metadata"]["labels"]
    assert labels["kueue.x-k8s.io/queue-name"] == "skypilot-local-queue-team1"
