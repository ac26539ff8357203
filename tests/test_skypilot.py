"""Per-team SkyPilot API servers (seed 004): releases, their queue wiring, and the server's own
basic auth from a Pulumi secret that never reaches the plan or the outputs in plain text (the
Gateway in front of them: tests/test_skypilot_gateway.py)."""

from __future__ import annotations

import json
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import bcrypt
import pytest
import yaml

from components.htpasswd import bcrypt_salt, htpasswd_line
from components.skypilot import SKYPILOT_CHART, SKYPILOT_REPO
from preview.harness import RunResult, run_program
from preview.plan import plan_document
from preview.records import SECRET_SIG, SIG_KEY, RecordedResource, is_secret
from preview.stack_files import SECRET_PLACEHOLDER
from stacks import skypilot_secrets
from stacks.config.tenancy import SKYPILOT_CHART_VERSION
from stacks.errors import ConfigError
from tests.stack_runner import ROOT, custom_objects, named, of_type, run_stack, stack_files, unedited_run

RELEASE = "kubernetes:helm.sh/v3:Release"
PASSWORDS = "gpu-batch:skypilotPasswords"


@pytest.fixture(scope="module")
def sky() -> RunResult:
    return unedited_run("skypilot")


def servers(result: RunResult) -> dict[str, RecordedResource]:
    return {r.inputs["name"]: r for r in of_type(result, RELEASE) if r.inputs["chart"] == SKYPILOT_CHART}


def unwrap(value: Any) -> Any:
    assert is_secret(value), value
    return value["value"]


class TestReleases:
    def test_one_pinned_release_per_team_in_its_namespace(self, sky: RunResult) -> None:
        planned = servers(sky)
        assert sorted(planned) == ["skypilot-team1", "skypilot-team2"]
        for team in ("team1", "team2"):
            inputs = planned[f"skypilot-{team}"].inputs
            assert inputs["version"] == SKYPILOT_CHART_VERSION == "0.13.0"
            assert inputs["repositoryOpts"] == {"repo": SKYPILOT_REPO}
            assert inputs["namespace"] == team
            assert inputs["createNamespace"] is False
            assert inputs["values"]["apiService"]["enableUserManagement"] is True

    def test_pods_are_labelled_with_the_team_local_queue(self, sky: RunResult) -> None:
        local_queues = {
            (lq["metadata"]["namespace"], lq["metadata"]["name"]) for lq in custom_objects(sky, "LocalQueue")
        }
        for name, release in servers(sky).items():
            config = yaml.safe_load(release.inputs["values"]["apiService"]["config"])
            labels = config["kubernetes"]["pod_config"]["metadata"]["labels"]
            namespace = release.inputs["namespace"]
            assert labels == {"kueue.x-k8s.io/queue-name": f"skypilot-local-queue-{namespace}"}, name
            assert (namespace, labels["kueue.x-k8s.io/queue-name"]) in local_queues
            assert config["kubernetes"]["provision_timeout"] == -1

    def test_priority_class_label_when_asked(self) -> None:
        queues = json.loads(stack_files("skypilot").config["gpu-batch:kueueQueues"])
        queues["priorityClasses"] = [{"name": "team-default", "value": 10}]
        teams = json.loads(stack_files("skypilot").config["gpu-batch:teams"])
        teams[0]["skypilot"]["priorityClass"] = "team-default"
        result = run_stack("skypilot", {"gpu-batch:kueueQueues": queues, "gpu-batch:teams": teams})
        config = yaml.safe_load(servers(result)["skypilot-team1"].inputs["values"]["apiService"]["config"])
        assert (
            config["kubernetes"]["pod_config"]["metadata"]["labels"]["kueue.x-k8s.io/priority-class"]
            == "team-default"
        )

    def test_least_privilege(self, sky: RunResult) -> None:
        """Issue 19 #3: no ClusterRole management, tasks run as the named service account."""
        release = servers(sky)["skypilot-team1"]
        values = release.inputs["values"]
        rbac = values["rbac"]
        assert (rbac["manageRbacPolicies"], rbac["manageSystemComponents"]) == (False, False)
        # No Deployments: their ReplicaSet-made pods would escape the queue label.
        assert not [r for r in rbac["namespaceRules"] if "deployments" in r["resources"]]
        config = yaml.safe_load(values["apiService"]["config"])
        assert (
            config["kubernetes"]["remote_identity"] == "skypilot-team1-tasks"
        )  # tests/test_skypilot_tasks.py

    def test_servers_wait_for_namespace_queue_and_kueue(self, sky: RunResult) -> None:
        release = servers(sky)["skypilot-team1"]
        for dependency in ("team1-namespace", "localqueue-team1-skypilot-local-queue-team1", "kueue-release"):
            assert named(sky, dependency).urn in release.dependencies, dependency

    def test_kueue_runs_the_pod_integration_for_them(self, sky: RunResult) -> None:
        kueue = next(r for r in of_type(sky, RELEASE) if r.inputs["name"] == "kueue")
        document = yaml.safe_load(kueue.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])
        assert "pod" in document["integrations"]["frameworks"]
        assert "pod" not in (
            json.loads(stack_files("skypilot").config["gpu-batch:kueue"]).get("extraFrameworks") or []
        )

    def test_endpoints_exported_without_credentials(self, sky: RunResult) -> None:
        assert sky.outputs["skypilotServers"] == {
            "team1": {
                "namespace": "team1",
                "url": "https://team1.skypilot.example.com",
                "user": "team1-user",
            },
            "team2": {
                "namespace": "team2",
                "url": "https://team2.skypilot.example.com",
                "user": "team2-user",
            },
        }


class TestSecretBasicAuth:
    def test_credentials_are_a_secret_htpasswd_line_of_the_password(self, sky: RunResult) -> None:
        for team in ("team1", "team2"):
            line = unwrap(
                servers(sky)[f"skypilot-{team}"].inputs["values"]["apiService"]["initialBasicAuthCredentials"]
            )
            user, hashed = line.split(":", 1)
            assert user == f"{team}-user"
            assert hashed.startswith("$2y$10$")
            assert bcrypt.checkpw(SECRET_PLACEHOLDER.encode(), hashed.encode())
            assert line == htpasswd_line(user, SECRET_PLACEHOLDER, f"gpu-batch/skypilot/{team}")

    def test_hash_verifies_with_the_system_crypt(self, sky: RunResult) -> None:
        """An independent bcrypt implementation (libxcrypt) accepts the hash, as the server's passlib
        bcrypt does (skypilot 0.13.0 sky/server/common.py crypt_ctx)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            crypt = pytest.importorskip("crypt")
        line = unwrap(
            servers(sky)["skypilot-team1"].inputs["values"]["apiService"]["initialBasicAuthCredentials"]
        )
        hashed = line.split(":", 1)[1]
        if crypt.crypt("probe", "$2y$05$" + "a" * 21 + "e") is None:
            pytest.skip("this libc crypt has no bcrypt")
        assert crypt.crypt(SECRET_PLACEHOLDER, hashed) == hashed
        assert crypt.crypt("wrong", hashed) != hashed

    def test_no_plain_secret_in_plan_or_outputs(self, sky: RunResult) -> None:
        text = json.dumps(plan_document("gpu-batch", "skypilot", sky.resources, sky.outputs))
        assert SECRET_PLACEHOLDER not in text
        hashes = [
            unwrap(r.inputs["values"]["apiService"]["initialBasicAuthCredentials"]).split(":", 1)[1]
            for r in servers(sky).values()
        ]
        assert len(hashes) == 2
        for hashed in hashes:
            assert hashed not in text
            assert hashed[7:29] not in text  # not even the salt
        assert "[secret]" in text
        # The wire form still carries them, wrapped: the engine (and a real state file) encrypts them.
        assert all(
            r.inputs["values"]["apiService"]["initialBasicAuthCredentials"][SIG_KEY] == SECRET_SIG
            for r in servers(sky).values()
        )
        assert SECRET_PLACEHOLDER not in json.dumps(sky.outputs)

    def test_hash_is_stable_and_salted_per_user_not_per_password(self) -> None:
        scope = "gpu-batch/skypilot/team1"
        assert htpasswd_line("u", "p", scope) == htpasswd_line("u", "p", scope)  # no diff on every `up`
        assert bcrypt_salt(scope, "u") != bcrypt_salt(scope, "v")
        first = htpasswd_line("u", "p1", scope).split(":", 1)[1]
        second = htpasswd_line("u", "p2", scope).split(":", 1)[1]
        assert first[:29] == second[:29] and first != second
        with pytest.raises(ValueError, match="cannot contain ':'"):
            htpasswd_line("a:b", "p", scope)


def password_errors(passwords: Any, secret: bool = True) -> list[str]:
    files = stack_files(
        "skypilot",
        {PASSWORDS: passwords} if passwords is not None else None,
        drop=() if passwords is not None else (PASSWORDS,),
    )
    keys = [k for k in files.secret_keys if k != PASSWORDS] + (
        [PASSWORDS] if secret and passwords is not None else []
    )
    with pytest.raises(ConfigError) as caught:
        run_program(ROOT, replace(files, secret_keys=keys))
    return str(caught.value).splitlines()


class TestPasswordErrors:
    def test_missing_key_names_the_exact_command_per_team(self) -> None:
        assert password_errors(None) == [
            f"config error: {PASSWORDS}.{team}: missing, expected a secret password for team {team}'s "
            f"SkyPilot server: run pulumi config set --secret --path 'skypilotPasswords.{team}' <password>"
            for team in ("team1", "team2")
        ]

    def test_no_stack_file_commits_ciphertext(self) -> None:
        """A committed `secure:` value only decrypts with the backend that wrote it (issue 10 #5)."""
        for path in ROOT.glob("Pulumi.*.yaml"):
            assert "secure:" not in path.read_text(), path.name

    def test_offline_preview_supplies_marked_secrets(self) -> None:
        files = stack_files("skypilot")
        assert PASSWORDS in files.secret_keys
        assert json.loads(files.config[PASSWORDS]) == {
            "team1": SECRET_PLACEHOLDER,
            "team2": SECRET_PLACEHOLDER,
        }
        assert PASSWORDS not in stack_files("dev").config

    def test_plain_text_is_refused_without_echoing_it(self) -> None:
        lines = password_errors({"team1": "hunter2", "team2": "hunter3"}, secret=False)
        assert lines == [
            f"config error: {PASSWORDS}: got 'plain text', expected a secret value (pulumi config set --secret "
            "--path 'skypilotPasswords.<team>' <password>); plain text would sit in the stack file"
        ]
        assert "hunter" not in "".join(lines)

    def test_every_server_needs_a_password_and_only_servers_have_one(self) -> None:
        lines = password_errors({"team1": "", "team3": "x"})
        assert lines == [
            f"config error: {PASSWORDS}.team1: missing, expected a secret password for team team1's SkyPilot "
            "server: run pulumi config set --secret --path 'skypilotPasswords.team1' <password>",
            f"config error: {PASSWORDS}.team2: missing, expected a secret password for team team2's SkyPilot "
            "server: run pulumi config set --secret --path 'skypilotPasswords.team2' <password>",
            f"config error: {PASSWORDS}.team3: got 'team3', expected only teams with a skypilot server "
            "(gpu-batch:teams[].skypilot)",
        ]


def test_one_plain_text_password_next_to_a_secure_one_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine marks the whole key secret when one entry is secure:, so the stack file decides."""
    document = yaml.safe_load((ROOT / "Pulumi.skypilot.yaml").read_text())
    # What `pulumi config set --secret --path skypilotPasswords.team1` then a plain
    # `pulumi config set --path skypilotPasswords.team2 hunter2` would leave in the stack file
    # (written to a temporary copy; no ciphertext is committed).
    document["config"][PASSWORDS] = {"team1": {"secure": "v1:AAAA"}, "team2": "hunter2"}
    (tmp_path / "Pulumi.skypilot.yaml").write_text(yaml.safe_dump(document))
    monkeypatch.setattr(skypilot_secrets, "STACK_FILE_DIR", tmp_path)
    with pytest.raises(ConfigError) as caught:
        run_stack("skypilot")
    assert str(caught.value).splitlines() == [
        f"config error: {PASSWORDS}.team2: got 'plain text', expected a secret value (pulumi config set --secret "
        "--path 'skypilotPasswords.<team>' <password>); plain text would sit in the stack file"
    ]
    assert "hunter2" not in str(caught.value)
