"""The analysis host's gRPC client setting (``preview/engine_grpc.py``): the host gets it, the pack
never does, a user's own experiments are theirs, and the pinned grpcio knows the name."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from preview.analysis_host import HostRequest
from preview.engine_grpc import (
    ADDED_MARK,
    HOST_EXPERIMENTS,
    MEASURED_GRPCIO,
    VARIABLE,
    grpcio_version,
    host_environment,
    pack_environment,
)
from preview.hosted_session import HostedSession
from tests.test_analyzer_hang_guard import records

# A pack that reports, as a finding, the experiments its own process was started with.
ENV_PACK = """
import os

from pulumi_policy import EnforcementLevel, PolicyPack, StackValidationPolicy


def report(args, report_violation):
    report_violation("GRPC_EXPERIMENTS=" + os.environ.get("GRPC_EXPERIMENTS", "(unset)"))


PolicyPack(
    name="env",
    enforcement_level=EnforcementLevel.ADVISORY,
    policies=[StackValidationPolicy(name="env", description="reports its environment", validate=report)],
)
"""


def test_the_setting_is_measured_on_the_pinned_grpcio() -> None:
    # When the pin moves, re-measure (preview/engine_grpc.py says how) before moving this.
    assert grpcio_version() == MEASURED_GRPCIO
    pins = [
        (Path(__file__).parents[1] / f).read_text() for f in ("requirements.txt", "policies/requirements.txt")
    ]
    assert all(f"grpcio=={MEASURED_GRPCIO}\n" in pin for pin in pins)


def _grpc_start_errors(experiments: str) -> str:
    code = "import grpc; grpc.insecure_channel('127.0.0.1:1').close()"
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, VARIABLE: experiments},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stderr


def test_the_installed_grpcio_knows_the_experiment() -> None:
    assert "Unknown experiment" in _grpc_start_errors("-no_such_experiment")  # the check can see it
    assert "Unknown experiment" not in _grpc_start_errors(HOST_EXPERIMENTS)


def test_the_host_gets_the_setting_and_the_pack_the_users_environment() -> None:
    user = {"HOME": "/home/u", "PATH": "/bin"}
    host = host_environment(user)
    assert host[VARIABLE] == HOST_EXPERIMENTS and host["PATH"] == "/bin"
    assert pack_environment(host) == user


def test_a_users_own_experiments_are_left_to_both() -> None:
    user = {"PATH": "/bin", VARIABLE: "-event_engine_listener"}
    assert host_environment(user) == user
    assert pack_environment(host_environment(user)) == user
    # a value the user set after the host's (the mark no longer matches) is the user's
    assert pack_environment({VARIABLE: "other", ADDED_MARK: HOST_EXPERIMENTS}) == {VARIABLE: "other"}


def test_a_hosted_session_gives_the_host_the_setting_and_the_pack_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(VARIABLE, raising=False)
    pack = tmp_path / "env-pack"
    pack.mkdir()
    (pack / "PulumiPolicy.yaml").write_text("runtime: python\n")
    (pack / "__main__.py").write_text(ENV_PACK)
    (record,) = records(1)
    with closing(HostedSession(HostRequest(pack_dir=pack, stack="dev", project="p")).start()) as session:
        assert session._proc is not None
        host_env = Path(f"/proc/{session._proc.pid}/environ").read_bytes().split(b"\0")
        session.analyze(record)
        session.analyze_stack([record])
        messages = [d.message for d in session.result().diagnostics]
    assert f"{VARIABLE}={HOST_EXPERIMENTS}".encode() in host_env
    assert any(m.endswith(f"{VARIABLE}=(unset)") for m in messages), messages
