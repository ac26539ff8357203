"""Completeness of every project webhook port (issue 42, item 1).

Each port module lists in ``COVERAGE`` every function of its upstream webhook/validation file(s)
at the version it judges, mapped to the Python function that ports it or to a written reason
(``cannot check: ...`` / ``not a check: ...``).  This test fails on an entry with neither, and,
from the fetched mirror (``../.mirror/<owner>+<name>/repo``), parses the Go files' function list
at that ref and fails when the two lists differ: a function added upstream, or one listed here
that upstream does not have.  Without the mirror the comparison is skipped with the reason.
"""

from __future__ import annotations

import importlib
import re
import subprocess
from types import ModuleType

import pytest
from gpu_batch_policy.rules.webhooks import jobset, kai, kuberay_features, lws, mpi, spark, trainer
from gpu_batch_policy.rules.webhooks.port import CANNOT, NOT_A_CHECK

from tests.upstream import mirror, show

PORTS: list[ModuleType] = [jobset, kai, kuberay_features, lws, mpi, spark, trainer]
GO_FUNC = re.compile(r"^func (?:\([^)]*\) )?([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?\(", re.MULTILINE)
MIN_REASON = 12


def go_functions(source: str) -> set[str]:
    return set(GO_FUNC.findall(source))


def test_go_function_parser() -> None:
    source = "func A() {}\nfunc (r *T) B(x int) error {}\nfunc c[T any](x T) {}\n// func D() {}\n"
    assert go_functions(source) == {"A", "B", "c"}


@pytest.mark.parametrize("port", PORTS, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_every_entry_is_ported_or_has_a_reason(port: ModuleType) -> None:
    for function, entry in port.COVERAGE.items():
        if entry.startswith((CANNOT, NOT_A_CHECK)):
            reason = entry.split(": ", 1)[1]
            assert len(reason) >= MIN_REASON, f"{function}: reason too short: {entry!r}"
        else:
            package = port.__name__.rsplit(".", 1)[0]
            homes = [port, *(importlib.import_module(f"{package}.{m}") for m in getattr(port, "ALSO_IN", ()))]
            assert any(callable(getattr(home, entry, None)) for home in homes), (
                f"{function} -> {entry!r}: no such function"
            )


@pytest.mark.parametrize("port", PORTS, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_coverage_lists_every_upstream_function(port: ModuleType) -> None:
    upstream = port.UPSTREAM
    folder = upstream.repo.replace("/", "+")
    git = mirror(upstream.repo, f"GPU_BATCH_{folder.upper().replace('+', '_').replace('-', '_')}_GIT")
    if git is None:
        pytest.skip(
            f"no {upstream.repo} mirror: fetch it into ../.mirror/{folder}/repo to compare the function list"
        )
    found: set[str] = set()
    for path in upstream.files:
        found |= go_functions(show(git, upstream.ref, path))
    listed = set(port.COVERAGE)
    assert found - listed == set(), f"{upstream.repo}@{upstream.ref} functions with no port and no reason"
    assert listed - found == set(), f"listed but not in {upstream.repo}@{upstream.ref} {upstream.files}"


def test_trainer_plugin_validators_are_all_listed() -> None:
    """Every plugin file of Trainer v2.2.1 defining a ``Validate`` method is in ``PLUGIN_COVERAGE``."""
    for entry in trainer.PLUGIN_COVERAGE.values():
        assert entry.startswith((CANNOT, NOT_A_CHECK)) or callable(getattr(trainer, entry, None)), entry
    git = mirror("kubeflow/trainer", "GPU_BATCH_KUBEFLOW_TRAINER_GIT")
    if git is None:
        pytest.skip("no kubeflow/trainer mirror: fetch it into ../.mirror/kubeflow+trainer/repo")
    ref = trainer.UPSTREAM.ref
    listed = subprocess.run(
        [
            "git",
            f"--git-dir={git}",
            "grep",
            "-l",
            "-E",
            r"^func \([a-z]+ \*[A-Za-z]+\) Validate\(",
            ref,
            "--",
            "pkg/runtime/framework/plugins",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    found = {path.split(":", 1)[1] for path in listed if not path.endswith("_test.go")}
    assert found == set(trainer.PLUGIN_COVERAGE)
