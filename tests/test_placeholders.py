"""The deploy workflow refuses the sample's placeholder values before any cloud call (issue 27 #5)."""

from __future__ import annotations

from typing import Any

import yaml

from stacks.placeholders import main, placeholders
from tests.stack_runner import ROOT


def test_the_shipped_prod_stack_is_refused_with_one_line_per_placeholder(capsys: Any) -> None:
    assert main(["prod"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert "config error: gcp:project: got 'gpu-batch-prod', expected your own project id" in lines[0]
    assert any(
        line.startswith(
            "config error: gpu-batch:cluster.securityGroup: got 'gke-security-groups@example.com'"
        )
        for line in lines
    )
    assert any("gpu-batch:teams[0].members.groups[0]" in line for line in lines)


def test_real_values_pass() -> None:
    config = {
        "gcp:project": "acme-ml-prod",
        "gpu-batch:cluster": {"securityGroup": "gke-security-groups@acme.com"},
        "gpu-batch:teams": [{"members": {"groups": ["research@acme.com"], "users": ["alice@acme.com"]}}],
        "gpu-batch:skypilotPasswords": {"team1": {"secure": "AAABAexample.com"}},
    }
    assert placeholders(config) == []


def test_every_deploy_job_checks_before_it_authenticates() -> None:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "deploy.yml").read_text())
    checked = 0
    for job in workflow["jobs"].values():
        steps = job.get("steps", [])
        uses = [str(s.get("uses", "")) for s in steps]
        if not any(u.startswith("google-github-actions/auth@") for u in uses):
            continue
        auth = next(i for i, u in enumerate(uses) if u.startswith("google-github-actions/auth@"))
        check = next(i for i, s in enumerate(steps) if "stacks.placeholders" in str(s.get("run", "")))
        assert check < auth and steps[check]["run"].endswith(job["environment"])
        checked += 1
    assert checked == 2
