"""policies/PulumiPolicy.yaml is what the Pulumi CLI reads to give the pack its own venv (issue 10)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
POLICIES = ROOT / "policies"


def test_runtime_declares_the_venv_the_cli_installs_into() -> None:
    project = yaml.safe_load((POLICIES / "PulumiPolicy.yaml").read_text())
    runtime = project["runtime"]
    assert runtime["name"] == "python"
    # The Python language host reads these options (the same schema as Pulumi.yaml's runtime).
    assert runtime["options"] == {"toolchain": "pip", "virtualenv": "venv"}
    assert (POLICIES / "requirements.txt").is_file()


def test_the_pack_venv_is_not_committed() -> None:
    ignored = subprocess.run(["git", "check-ignore", "-q", "policies/venv/bin/python"], cwd=ROOT, check=False)
    assert ignored.returncode == 0


def test_readme_says_how_the_pack_venv_is_made() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "virtualenv: venv" in readme and "pulumi install" in readme
    assert (
        "The CLI creates `policies/venv` for the pack from `policies/requirements.txt` on first use."
        not in readme
    )
