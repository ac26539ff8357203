"""The deploy identity's roles come from the plan's resource types, and the docs agree (issue 27 #5).

``stacks/deploy_roles.py`` records, per resource type, the predefined roles that manage it.  The
plans of every stack are walked: each type must have an entry, and the roles they need must be
exactly those the deploy row of ``docs/ci.md`` and step 3 of ``docs/runbook.md`` list (the first
prod ``pulumi up`` failed with 403s when ci.md listed fewer).
"""

from __future__ import annotations

import re

import pytest

from stacks.deploy_roles import UnknownResourceTypeError, deploy_roles, every_role, role_keys, roles_for
from tests.stack_runner import ROOT, config_value, run_stack, unedited_run

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
ROLE = re.compile(r"`(roles/[A-Za-z.]+)`")


def documented_in_ci() -> set[str]:
    rows = [
        line
        for line in (ROOT / "docs" / "ci.md").read_text().splitlines()
        if line.startswith("| `gpu-batch-deploy@gpu-batch-dev")
    ]
    assert len(rows) == 1
    return set(ROLE.findall(rows[0].split("|")[3]))


def documented_in_runbook() -> set[str]:
    text = (ROOT / "docs" / "runbook.md").read_text()
    step = text[text.index("**3. Grant the identity that runs `pulumi up`**") :]
    step = step[: step.index("**4.")]
    # The nodes' own roles are named there too, after "The nodes themselves get only".
    return set(ROLE.findall(step[: step.index("The nodes themselves")]))


STACKS = sorted(p.name.split(".")[1] for p in ROOT.glob("Pulumi.*.yaml"))


def plan_types() -> set[str]:
    """Every resource type of every repo stack's plan (each Pulumi.<stack>.yaml)."""
    return {
        k
        for stack in STACKS
        for r in unedited_run(stack).resources
        if r.custom
        for k in role_keys(r.type, r.inputs)
    }


def test_every_planned_resource_type_has_its_roles_and_the_docs_list_exactly_those() -> None:
    # Every stack's plan, plus one with per-team Workload Identity (types no shipped stack uses).
    teams = config_value("prod", "gpu-batch:teams")
    teams[0]["workloadIdentity"] = {"buckets": [{"bucket": "research-datasets"}]}
    # And the multi-region stack reaching its workers through GKE Fleet ClusterProfiles.
    mk = config_value("multiregion", "gpu-batch:multiKueue")
    mk.update(credentials="clusterProfile", authPluginImage="registry.example/gcp-auth-plugin:v0.0.1")
    edited = [*run_stack("prod", {"gpu-batch:teams": teams}).resources]
    edited += run_stack("multiregion", {"gpu-batch:multiKueue": mk}).resources
    types = plan_types() | {k for r in edited if r.custom for k in role_keys(r.type, r.inputs)}
    needed = deploy_roles(types)
    assert needed == every_role()  # nothing recorded that the program never creates
    assert documented_in_ci() == needed
    assert documented_in_runbook() == needed


def test_a_new_resource_type_fails_until_its_roles_are_recorded() -> None:
    with pytest.raises(UnknownResourceTypeError, match="gcp:storage/bucket:Bucket"):
        roles_for("gcp:storage/bucket:Bucket")
    assert roles_for("pulumi:providers:kubernetes") == ()


def test_the_preview_identity_is_not_the_deploy_identity() -> None:
    rows = [
        line
        for line in (ROOT / "docs" / "ci.md").read_text().splitlines()
        if line.startswith("| `gpu-batch-preview@")
    ]
    (row,) = rows
    assert "container.admin" not in row
