"""The pull-request preview identity is read-only, and docs/ci.md, the runbook and the workflow agree.

Issue 27 #5: a PR's ``pulumi preview`` runs unreviewed code with the preview account, which must
have no write access to any cluster and no Secret read on prod.  The allowed roles, with their IAM
descriptions and the pulumi-kubernetes code that makes a viewer enough, are in
``stacks/preview_roles.py``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from stacks.preview_roles import READ_ONLY_ROLES, REFUSED_ROLES, problems

ROOT = Path(__file__).resolve().parent.parent
ROLE = re.compile(r"`(roles/[A-Za-z.]+)`")


def ci_preview_roles(text: str) -> set[str]:
    """The roles of the ``gpu-batch-preview@`` row of docs/ci.md's service-account table."""
    rows = [line for line in text.splitlines() if line.startswith("| `gpu-batch-preview@")]
    assert len(rows) == 1, rows
    return set(ROLE.findall(rows[0].split("|")[3]))


def runbook_preview_roles(text: str) -> set[str]:
    """The roles the runbook's pull-request preview paragraph (step 3) gives."""
    start = text.index("The pull-request preview identity (`GCP_PREVIEW_SERVICE_ACCOUNT`)")
    paragraph = text[start : text.index("\n\n", start)]
    # Only what it grants: the roles named after "never" are what it must not get.
    granted = paragraph.split("never", 1)[0]
    return set(ROLE.findall(granted))


def ci_text() -> str:
    return (ROOT / "docs" / "ci.md").read_text()


def runbook_text() -> str:
    return (ROOT / "docs" / "runbook.md").read_text()


def test_the_preview_identity_holds_only_read_only_roles_and_the_docs_agree() -> None:
    in_ci = ci_preview_roles(ci_text())
    assert in_ci, "docs/ci.md gives the preview identity no role"
    assert problems(in_ci) == []
    assert runbook_preview_roles(runbook_text()) == in_ci


def test_a_write_or_secret_role_in_the_docs_is_caught() -> None:
    row = "`roles/container.clusterViewer` on every stack's"
    text = ci_text()
    assert row in text
    broken = text.replace(row, "`roles/viewer` and `roles/container.developer` on every stack's")
    found = problems(ci_preview_roles(broken))
    assert [p.split(" ", 1)[0] for p in found] == ["roles/container.developer", "roles/viewer"]
    assert "container.secrets.list" in found[0]
    unknown = problems({"roles/container.clusterViewer", "roles/owner"})
    assert unknown == [
        "roles/owner: not in the read-only list; the preview may hold only ['roles/container.clusterViewer']"
    ]


def test_docs_that_disagree_are_caught() -> None:
    runbook = runbook_text().replace(
        "give it only `roles/container.clusterViewer`",
        "give it only `roles/container.clusterViewer` and `roles/container.developer`",
    )
    assert runbook_preview_roles(runbook) != ci_preview_roles(ci_text())


def test_every_read_only_role_is_cited_and_no_refused_role_is_allowed() -> None:
    assert READ_ONLY_ROLES["roles/container.clusterViewer"] == (
        "Provides access to get and list GKE clusters."
    )
    assert not READ_ONLY_ROLES.keys() & REFUSED_ROLES.keys()
    for description, why in REFUSED_ROLES.values():
        assert description.startswith(("Provides", "Permissions")) and why


def preview_job() -> dict[str, Any]:
    doc = yaml.safe_load((ROOT / ".github" / "workflows" / "pull-request.yml").read_text())
    job: dict[str, Any] = doc["jobs"]["preview"]
    return job


def test_the_workflow_previews_as_the_preview_identity_without_refresh() -> None:
    job = preview_job()
    assert "environment" not in job  # no environment: the deploy secrets stay out of reach
    auth = [s for s in job["steps"] if str(s.get("uses", "")).startswith("google-github-actions/auth")]
    assert [s["with"]["service_account"] for s in auth] == ["${{ vars.GCP_PREVIEW_SERVICE_ACCOUNT }}"]
    pulumi = [s for s in job["steps"] if str(s.get("uses", "")).startswith("pulumi/actions")]
    assert len(pulumi) == 1
    assert pulumi[0]["with"]["command"] == "preview"
    assert pulumi[0]["with"]["refresh"] is False
    assert pulumi[0]["env"]["PULUMI_ACCESS_TOKEN"] == "${{ secrets.PULUMI_PREVIEW_ACCESS_TOKEN }}"
    # docs/ci.md names the same token and says the deploy token is an environment secret.
    text = ci_text()
    assert "| secret | `PULUMI_PREVIEW_ACCESS_TOKEN` | repository |" in text
    assert "| secret | `PULUMI_ACCESS_TOKEN` | environments `dev`, `prod` |" in text
