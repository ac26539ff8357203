"""The GitHub Actions workflows keep the promises users rely on.

Schema validity comes from check-jsonschema's vendored copy of the published GitHub workflow
schema (no network).  The rest are the things a schema cannot see and a reviewer easily misses:
deploy order dev -> prod, one non-cancelling concurrency group and one GitHub environment per
deployed stack, the policy pack and the stack's own config on every ``pulumi`` step, no
long-lived cloud keys, and a PR matrix that lists exactly the ``Pulumi.<stack>.yaml`` files.

Each check is a function returning problems, and each is also run on a broken workflow, so a
check that silently passes everything cannot hide here.
"""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
PULL_REQUEST = WORKFLOWS / "pull-request.yml"
DEPLOY = WORKFLOWS / "deploy.yml"
# Environments, in deploy order.  Scenario stacks (kai, skypilot) are previewed, never deployed.
ENVIRONMENTS = ("dev", "prod")
PULUMI_ACTION = "pulumi/actions"
GCP_AUTH_ACTION = "google-github-actions/auth"
ALLOWED_SECRETS = {"PULUMI_ACCESS_TOKEN", "PULUMI_PREVIEW_ACCESS_TOKEN", "GITHUB_TOKEN"}
# The pull-request preview runs unreviewed code: a Stack Read token of its own (repository
# secret); the deploy token is an environment secret of dev/prod only (docs/ci.md).
TOKEN_BY_COMMAND = {"preview": "PULUMI_PREVIEW_ACCESS_TOKEN", "up": "PULUMI_ACCESS_TOKEN"}

Workflow = dict[Any, Any]  # keys are str, except `on:` (see triggers)


def workflow_files() -> list[Path]:
    return sorted([*WORKFLOWS.glob("*.yml"), *WORKFLOWS.glob("*.yaml")])


def load(path: Path) -> Workflow:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(doc, dict), f"{path.name}: not a mapping"
    return doc


def triggers(doc: Workflow) -> Any:
    """``on:``, which YAML 1.1 (PyYAML) reads as the boolean key True."""
    return doc.get("on", doc.get(True))


def repo_stacks() -> set[str]:
    return {p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in ROOT.glob("Pulumi.*.yaml")}


def steps(doc: Workflow) -> Iterator[tuple[str, dict[str, Any]]]:
    for job_id, job in doc.get("jobs", {}).items():
        for step in job.get("steps", []):
            yield job_id, step


def uses(step: dict[str, Any], action: str) -> bool:
    return str(step.get("uses", "")).split("@", 1)[0] == action


def needs(job: dict[str, Any]) -> list[str]:
    value = job.get("needs", [])
    return [value] if isinstance(value, str) else list(value)


def pulumi_steps(doc: Workflow) -> Iterator[tuple[str, dict[str, Any]]]:
    return ((job_id, step) for job_id, step in steps(doc) if uses(step, PULUMI_ACTION))


def stack_of(step: dict[str, Any]) -> str:
    """The stack part of ``stack-name: <org>/<stack>`` (a literal or a ``${{ matrix.stack }}``)."""
    return str(step.get("with", {}).get("stack-name", "")).split("/", 1)[-1]


# --- checks: each returns a list of problems -------------------------------------------------


def schema_problems(paths: list[Path]) -> list[str]:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.github-workflows",
            *map(str, paths),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    return [] if result.returncode == 0 else [result.stdout + result.stderr]


def deploy_problems(doc: Workflow) -> list[str]:
    """Each environment is deployed by one job, behind its GitHub environment and concurrency group,
    and each after the previous one (``needs``), the first after a job that runs ``make test``."""
    problems: list[str] = []
    jobs: dict[str, dict[str, Any]] = doc.get("jobs", {})
    deploying: dict[str, str] = {}
    for job_id, step in pulumi_steps(doc):
        if step.get("with", {}).get("command") == "up":
            deploying[stack_of(step)] = job_id
    if set(deploying) != set(ENVIRONMENTS):
        problems.append(f"`pulumi up` stacks {sorted(deploying)} != environments {list(ENVIRONMENTS)}")
    gates = {jid for jid, step in steps(doc) if "make test" in str(step.get("run", ""))}
    if not gates:
        problems.append("no job runs `make test` before deploying")
    previous: str | None = None
    for stack in ENVIRONMENTS:
        if stack not in deploying:
            continue
        job_id = deploying[stack]
        job = jobs[job_id]
        environment = job.get("environment")
        env_name = environment.get("name") if isinstance(environment, dict) else environment
        if env_name != stack:
            problems.append(f"{job_id}: environment {env_name!r}, expected {stack!r}")
        concurrency = job.get("concurrency")
        if not isinstance(concurrency, dict) or concurrency.get("group") != f"pulumi-{stack}":
            problems.append(f"{job_id}: concurrency group must be pulumi-{stack}, got {concurrency!r}")
        elif concurrency.get("cancel-in-progress") is not False:
            problems.append(f"{job_id}: cancel-in-progress must be false (never cancel a running up)")
        if "strategy" in job:
            problems.append(f"{job_id}: deploys with a matrix; environments must be promoted in order")
        required = {previous} if previous else gates
        if not required & set(needs(job)):
            wanted = previous or " or ".join(sorted(gates))
            problems.append(f"{job_id}: needs {needs(job)}, must need {wanted}")
        previous = job_id
    return problems


def policy_problems(doc: Workflow) -> list[str]:
    """Every pulumi/actions step runs the pack with the config file of the stack it targets."""
    problems: list[str] = []
    for job_id, step in pulumi_steps(doc):
        args = step.get("with", {})
        stack = stack_of(step)
        if not str(args.get("stack-name", "")).startswith("${{ vars.PULUMI_ORG }}/"):
            problems.append(
                f"{job_id}: stack-name {args.get('stack-name')!r} is not <vars.PULUMI_ORG>/<stack>"
            )
        if args.get("policyPacks") != "policies":
            problems.append(f"{job_id}: policyPacks {args.get('policyPacks')!r}, expected 'policies'")
        expected = f"policies/config.{stack}.json"
        if args.get("policyPackConfigs") != expected:
            problems.append(
                f"{job_id}: policyPackConfigs {args.get('policyPackConfigs')!r}, expected {expected!r}"
            )
        token = str(step.get("env", {}).get("PULUMI_ACCESS_TOKEN", ""))
        secret = TOKEN_BY_COMMAND.get(str(args.get("command", "")), "PULUMI_ACCESS_TOKEN")
        if token != f"${{{{ secrets.{secret} }}}}":
            problems.append(f"{job_id}: PULUMI_ACCESS_TOKEN must come from secrets.{secret}, got {token!r}")
    return problems


def credential_problems(doc: Workflow, text: str) -> list[str]:
    """Cloud auth is Workload Identity Federation only: no key file, no key secret."""
    problems: list[str] = []
    for banned in ("credentials_json", "service_account_key", "GOOGLE_APPLICATION_CREDENTIALS"):
        if banned in text:
            problems.append(f"references {banned}")
    for name in sorted(set(re.findall(r"secrets\.([A-Za-z0-9_]+)", text)) - ALLOWED_SECRETS):
        problems.append(f"uses secret {name}; only {sorted(ALLOWED_SECRETS)} are expected")
    jobs: dict[str, dict[str, Any]] = doc.get("jobs", {})
    for job_id, step in steps(doc):
        if not uses(step, GCP_AUTH_ACTION):
            continue
        args = step.get("with", {})
        for key in ("workload_identity_provider", "service_account"):
            if not str(args.get(key, "")).startswith("${{ vars."):
                problems.append(f"{job_id}: {key} must come from a repository/environment variable")
        permissions = jobs[job_id].get("permissions", doc.get("permissions", {}))
        if not isinstance(permissions, dict) or permissions.get("id-token") != "write":
            problems.append(f"{job_id}: WIF needs `permissions: id-token: write`")
    return problems


def matrix_problems(doc: Workflow, stacks: set[str]) -> list[str]:
    """Every PR job with a stack matrix lists exactly the repository's stacks."""
    problems: list[str] = []
    matrices = 0
    for job_id, job in doc.get("jobs", {}).items():
        matrix = job.get("strategy", {}).get("matrix", {})
        if "stack" not in matrix:
            continue
        matrices += 1
        listed = matrix["stack"]
        if sorted(listed) != sorted(stacks):
            problems.append(
                f"{job_id}: matrix stacks {sorted(listed)} != Pulumi.*.yaml stacks {sorted(stacks)}"
            )
    if matrices < 2:
        problems.append(
            f"expected the offline and the cloud preview jobs to have a stack matrix, found {matrices}"
        )
    return problems


# --- the workflows in the repository ---------------------------------------------------------


def test_workflows_exist() -> None:
    assert {p.name for p in workflow_files()} >= {PULL_REQUEST.name, DEPLOY.name}


def test_every_workflow_validates_against_the_github_schema() -> None:
    problems = schema_problems(workflow_files())
    assert not problems, problems[0] if problems else ""


def test_deploy_runs_on_main_and_by_hand() -> None:
    on = triggers(load(DEPLOY))
    assert on["push"]["branches"] == ["main"]
    assert "workflow_dispatch" in on


def test_deploy_goes_dev_then_prod_each_in_its_environment_and_concurrency_group() -> None:
    assert deploy_problems(load(DEPLOY)) == []


@pytest.mark.parametrize("path", workflow_files(), ids=lambda p: p.name)
def test_every_pulumi_step_runs_the_policy_pack_with_its_stack_config(path: Path) -> None:
    assert policy_problems(load(path)) == []


def test_every_policy_config_the_workflows_name_exists() -> None:
    """A missing config file fails `pulumi preview`/`up` only in CI, after review."""
    named = {f"policies/config.{stack}.json" for stack in repo_stacks()}
    missing = sorted(name for name in named if not (ROOT / name).is_file())
    assert not missing, f"policy pack config files missing: {missing}"


@pytest.mark.parametrize("path", workflow_files(), ids=lambda p: p.name)
def test_no_long_lived_cloud_keys(path: Path) -> None:
    assert credential_problems(load(path), path.read_text(encoding="utf-8")) == []


def test_pull_request_matrix_lists_every_stack() -> None:
    assert repo_stacks(), "no Pulumi.<stack>.yaml files found"
    assert matrix_problems(load(PULL_REQUEST), repo_stacks()) == []


def test_pull_request_previews_in_the_cloud_with_a_comment_and_skips_forks() -> None:
    doc = load(PULL_REQUEST)
    assert "pull_request" in triggers(doc)
    previews = [(jid, s) for jid, s in pulumi_steps(doc) if s.get("with", {}).get("command") == "preview"]
    assert previews, "no pulumi preview step"
    for job_id, step in previews:
        assert step["with"].get("comment-on-pr") is True
        condition = str(doc["jobs"][job_id].get("if", ""))
        assert "github.event.pull_request.head.repo.full_name == github.repository" in condition, (
            f"{job_id} must be skipped on fork PRs (no secrets or OIDC there)"
        )


def test_offline_preview_uploads_and_comments_its_report() -> None:
    job = load(PULL_REQUEST)["jobs"]["offline"]
    assert any("make preview STACK=" in str(s.get("run", "")) for s in job["steps"])
    # The change list against the base branch goes into the report the comment carries.
    assert any(
        "BASE=FETCH_HEAD" in str(s.get("run", "")) and "make preview" in str(s.get("run", ""))
        for s in job["steps"]
    )
    assert not any(uses(s, GCP_AUTH_ACTION) for s in job["steps"]), "the offline job needs no cloud"
    upload = next(s for s in job["steps"] if uses(s, "actions/upload-artifact"))
    assert upload["with"]["path"] == "build/${{ matrix.stack }}/"
    comment = next(s for s in job["steps"] if uses(s, "marocchino/sticky-pull-request-comment"))
    assert comment["with"]["path"] == "build/${{ matrix.stack }}/report.md"
    assert "${{ matrix.stack }}" in comment["with"]["header"], "one comment per stack, updated in place"


def pin_problems(text: str) -> list[str]:
    """Every ``uses:`` names a full commit SHA (a tag can be moved; a SHA cannot) and says which
    release it is in a ``# vX.Y.Z`` comment, the form Dependabot and Renovate keep up to date."""
    problems = []
    for line in text.splitlines():
        match = re.match(r"\s*(?:-\s*)?uses:\s*(\S+)(.*)$", line)
        if match is None or match[1].startswith("./"):
            continue
        ref, rest = match[1], match[2]
        if not re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", ref):
            problems.append(f"{ref}: not pinned to a commit SHA")
        elif not re.fullmatch(r"\s*#\s*v\d+(\.\d+)*\s*", rest):
            problems.append(f"{ref}: no '# vX.Y.Z' comment naming the release")
    return problems


@pytest.mark.parametrize("path", workflow_files(), ids=lambda p: p.name)
def test_actions_are_pinned_to_a_commit_sha_with_the_tag_in_a_comment(path: Path) -> None:
    assert pin_problems(path.read_text(encoding="utf-8")) == []


def test_pin_check_catches_a_tag_or_a_missing_comment() -> None:
    sha = "11d5960a326750d5838078e36cf38b85af677262"
    assert pin_problems("      - uses: actions/checkout@v4\n") == [
        "actions/checkout@v4: not pinned to a commit SHA"
    ]
    assert pin_problems(f"        uses: actions/checkout@{sha}\n") == [
        f"actions/checkout@{sha}: no '# vX.Y.Z' comment naming the release"
    ]
    assert pin_problems(f"      - uses: actions/checkout@{sha} # v4.4.0\n      - uses: ./local\n") == []


# --- the checks catch what they claim to catch -----------------------------------------------


def test_schema_check_rejects_an_invalid_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  build:\n    steps:\n      - run: echo hi\n", encoding="utf-8")
    assert schema_problems([broken])  # a job without runs-on


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda jobs: jobs["prod"].update(needs="offline"), "must need dev"),
        (lambda jobs: jobs["dev"].update(needs="prod"), "must need"),
        (lambda jobs: jobs["prod"]["concurrency"].update({"cancel-in-progress": True}), "cancel-in-progress"),
        (lambda jobs: jobs["dev"]["concurrency"].update(group="pulumi"), "pulumi-dev"),
        (lambda jobs: jobs["prod"].pop("environment"), "environment None"),
        (lambda jobs: jobs.pop("prod"), "!= environments"),
    ],
)
def test_deploy_check_catches_broken_promotion(mutate: Any, expected: str) -> None:
    doc = copy.deepcopy(load(DEPLOY))
    mutate(doc["jobs"])
    assert any(expected in problem for problem in deploy_problems(doc)), deploy_problems(doc)


def test_policy_check_catches_a_missing_pack_or_wrong_config() -> None:
    doc = copy.deepcopy(load(DEPLOY))
    doc["jobs"]["prod"]["steps"][-1]["with"]["policyPackConfigs"] = "policies/config.dev.json"
    doc["jobs"]["dev"]["steps"][-1]["with"].pop("policyPacks")
    problems = policy_problems(doc)
    assert any("config.prod.json" in p for p in problems) and any("policyPacks" in p for p in problems)


def test_policy_check_catches_the_deploy_token_in_a_pull_request_preview() -> None:
    doc = copy.deepcopy(load(PULL_REQUEST))
    assert not policy_problems(doc)
    for _, step in pulumi_steps(doc):
        step["env"]["PULUMI_ACCESS_TOKEN"] = "${{ secrets.PULUMI_ACCESS_TOKEN }}"
    assert any("secrets.PULUMI_PREVIEW_ACCESS_TOKEN" in p for p in policy_problems(doc))


def test_credential_check_catches_a_key_file() -> None:
    doc = copy.deepcopy(load(DEPLOY))
    auth = next(s for _, s in steps(doc) if uses(s, GCP_AUTH_ACTION))
    auth["with"] = {"credentials_json": "${{ secrets.GCP_SA_KEY }}"}
    text = yaml.safe_dump(doc)
    problems = credential_problems(doc, text)
    assert any("credentials_json" in p for p in problems) and any("GCP_SA_KEY" in p for p in problems)


def test_matrix_check_catches_a_forgotten_stack() -> None:
    doc = load(PULL_REQUEST)
    assert matrix_problems(doc, repo_stacks() | {"staging"})


def code_scanning_problems(doc: Workflow) -> list[str]:
    """Each stack's SARIF reaches code scanning from one job that alone may write security
    events, skipped on fork PRs; the offline job annotates the changed lines (issue 32)."""
    problems = []
    jobs = doc["jobs"]
    uploaders = [
        jid
        for jid, job in jobs.items()
        if any(uses(s, "github/codeql-action/upload-sarif") for s in job.get("steps", []))
    ]
    if not uploaders:
        return ["no job uploads SARIF"]
    for job_id, job in jobs.items():
        writes = (job.get("permissions") or {}).get("security-events") == "write"
        if writes != (job_id in uploaders):
            problems.append(f"{job_id}: security-events: write only on the SARIF upload job")
    if (doc.get("permissions") or {}).get("security-events"):
        problems.append("security-events granted workflow-wide")
    for job_id in uploaders:
        job = jobs[job_id]
        if "github.event.pull_request.head.repo.full_name == github.repository" not in str(job.get("if", "")):
            problems.append(f"{job_id}: not skipped on fork PRs")
        if "!cancelled()" not in str(job.get("if", "")):
            problems.append(f"{job_id}: must also upload when the preview failed on a finding")
        upload = next(s for s in job["steps"] if uses(s, "github/codeql-action/upload-sarif"))
        if upload["with"].get("sarif_file") != "build/${{ matrix.stack }}/findings.sarif":
            problems.append(f"{job_id}: uploads {upload['with'].get('sarif_file')}")
        if upload["with"].get("category") != "gpu-batch/${{ matrix.stack }}":
            problems.append(f"{job_id}: one category per stack (gpu-batch/<stack>), as the SARIF's own")
    offline = jobs.get("offline", {})
    if not any(
        "preview.findings.annotations --base FETCH_HEAD" in str(s.get("run", ""))
        for s in offline.get("steps", [])
    ):
        problems.append("offline: no annotations of the changed lines")
    return problems


def test_pull_request_uploads_sarif_per_stack_with_the_permission_on_that_job_only() -> None:
    doc = load(PULL_REQUEST)
    assert code_scanning_problems(doc) == []
    assert (
        "code-scanning" in doc["jobs"]
        and set(doc["jobs"]["code-scanning"]["strategy"]["matrix"]["stack"]) == repo_stacks()
    )


def test_code_scanning_check_catches_a_wide_permission_or_a_fork_upload() -> None:
    doc = load(PULL_REQUEST)
    wide = copy.deepcopy(doc)
    wide["jobs"]["offline"]["permissions"]["security-events"] = "write"
    assert "offline: security-events: write only on the SARIF upload job" in code_scanning_problems(wide)
    forks = copy.deepcopy(doc)
    forks["jobs"]["code-scanning"]["if"] = "${{ !cancelled() }}"
    assert "code-scanning: not skipped on fork PRs" in code_scanning_problems(forks)
    no_category = copy.deepcopy(doc)
    step = next(
        s
        for s in no_category["jobs"]["code-scanning"]["steps"]
        if uses(s, "github/codeql-action/upload-sarif")
    )
    del step["with"]["category"]
    assert any("one category per stack" in p for p in code_scanning_problems(no_category))
