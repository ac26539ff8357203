"""``make preview STACK=prod BASE=<ref>``: the change list a pull request shows (issue 21).

A throw-away git repository holds this checkout's tracked files as its first commit; each test
commits one real edit of ``Pulumi.prod.yaml`` on top and runs the offline preview there with
``--base HEAD~1``, exactly as the PR workflow does with the base branch.  Both sides run their own
program, so the comparison is between two real plans.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from gpu_batch_policy.facts.charts.resolver import CACHE_ENV, MIRROR_ENV, default_cache, default_mirror

from preview.plan_diff import Change, diff_plans, render_changes

ROOT = Path(__file__).resolve().parent.parent


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def _env() -> dict[str, str]:
    """This checkout's chart cache and mirror: the throw-away repository has neither beside it."""
    mirror = default_mirror()
    if mirror is None:
        pytest.skip("no chart mirror (../shared/vendor) to render the charts offline")
    return {**os.environ, MIRROR_ENV: str(mirror.resolve()), CACHE_ENV: str(default_cache().resolve())}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tracked = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    target = tmp_path_factory.mktemp("base") / "project"
    for name in tracked.decode().split("\0"):
        if name and (ROOT / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target / name)
    _git(target, "init", "-q")
    _git(target, "add", "-A")
    _git(target, "commit", "-q", "-m", "base")
    yield target


def _edit_prod(repo: Path, edit: dict[str, object], pool: int | None = None) -> None:
    path = repo / "Pulumi.prod.yaml"
    doc = yaml.safe_load(path.read_text())
    target = (
        doc["config"]["gpu-batch:gpuPools"][pool] if pool is not None else doc["config"]["gpu-batch:cluster"]
    )
    for key, value in edit.items():
        section, _, field = key.rpartition(".")
        (target[section] if section else target)[field] = value
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    _git(repo, "commit", "-q", "-am", f"edit {edit}")


def _preview(repo: Path) -> tuple[int, str]:
    run = subprocess.run(
        [sys.executable, "-m", "preview", "--stack", "prod", "--quiet", "--no-policy", "--base", "HEAD~1"],
        cwd=repo,
        env=_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    return run.returncode, run.stdout + run.stderr


def test_a_system_pool_size_edit_is_an_update_not_a_replacement(repo: Path) -> None:
    _edit_prod(repo, {"systemPool.minNodes": 2})
    code, out = _preview(repo)
    assert code == 0, out
    assert "- **update** `gcp:container/nodePool:NodePool` `gpu-batch-prod-system` (autoscaling)" in out
    assert "**replace**" not in out
    assert (repo / "build" / "prod" / "changes.md").read_text() in (repo / "build/prod/report.md").read_text()


def test_a_driver_change_replaces_a_protected_pool_and_fails(repo: Path) -> None:
    """``gpu_driver_installation_config`` is ForceNew, and prod protects its pools: the engine
    would refuse to delete the old pool, so the preview fails before anyone runs `pulumi up`."""
    _edit_prod(repo, {"driverVersion": "DEFAULT"}, pool=0)
    code, out = _preview(repo)
    assert code == 1, out
    line = next(line for line in out.splitlines() if "l4-queued-pool" in line)
    assert line.startswith("- **replace** `gcp:container/nodePool:NodePool`")
    assert "nodeConfig.guestAccelerators" in line and "every node of the pool" in line
    assert "refused: the resource is protected" in line


def test_an_unknown_base_is_one_line_and_exit_2(repo: Path) -> None:
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "preview",
            "--stack",
            "prod",
            "--quiet",
            "--no-policy",
            "--base",
            "no-such-ref",
            "--out",
            "unknown-base-out",
        ],
        cwd=repo,
        env=_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 2
    assert "--base no-such-ref: git cannot export it" in run.stderr and "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
    # said before the head's own preview ran: nothing was planned or written
    assert "resources planned" not in run.stdout and not (repo / "unknown-base-out").exists()


def _plan(*resources: dict[str, object]) -> dict[str, object]:
    return {"resources": list(resources)}


def test_diff_classifies_create_update_replace_delete() -> None:
    pool = {"urn": "u:pool", "type": "gcp:container/nodePool:NodePool", "name": "p", "protect": False}
    base = _plan(
        {**pool, "inputs": {"initialNodeCount": 1, "autoscaling": {"totalMaxNodeCount": 3}}},
        {"urn": "u:gone", "type": "kubernetes:core/v1:Namespace", "name": "old", "inputs": {}},
        {
            "urn": "u:lq",
            "type": "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue",
            "name": "lq",
            "inputs": {"metadata": {"name": "a", "namespace": "t"}},
        },
    )
    head = _plan(
        {
            **pool,
            "ignoreChanges": ["initialNodeCount"],
            "inputs": {"initialNodeCount": 2, "autoscaling": {"totalMaxNodeCount": 5}},
        },
        {"urn": "u:new", "type": "kubernetes:core/v1:Namespace", "name": "new", "inputs": {}},
        {
            "urn": "u:lq",
            "type": "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue",
            "name": "lq",
            "inputs": {"metadata": {"name": "b", "namespace": "t"}},
        },
    )
    changes = {c.urn: c for c in diff_plans(base, head)}
    assert changes["u:pool"] == Change("update", "u:pool", pool["type"], "p", ("autoscaling",))  # type: ignore[arg-type]
    assert changes["u:gone"].action == "delete" and changes["u:new"].action == "create"
    renamed = changes["u:lq"]
    assert renamed.action == "replace" and renamed.paths == ("metadata.name",)
    assert renamed.takes_down is not None and "LocalQueue" in renamed.takes_down
    assert "1 to create, 1 to update, 1 to replace, 1 to delete." in render_changes(
        list(changes.values()), "main"
    )


def test_deleting_a_crd_says_what_it_takes_unless_it_is_retained() -> None:
    """A CRD's deletion deletes every custom resource of its kind; with ``retainOnDelete`` (how
    the stack declares Kueue's and KubeRay's CRDs, components/chart_crds.py) the engine only
    forgets it and the change says so instead."""
    crd = {
        "type": "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition",
        "inputs": {"metadata": {"name": "rayjobs.ray.io"}},
    }
    base = _plan(
        {**crd, "urn": "u:plain", "name": "plain"},
        {**crd, "urn": "u:kept", "name": "kept", "retainOnDelete": True},
    )
    changes = {c.urn: c for c in diff_plans(base, _plan())}
    plain, kept = changes["u:plain"], changes["u:kept"]
    assert plain.action == kept.action == "delete"
    assert plain.takes_down is not None and "every custom resource of its kind" in plain.takes_down
    assert kept.retained and kept.takes_down is None
    (line,) = [x for x in render_changes([kept], "main") if x.startswith("- ")]
    assert "takes down" not in line and "the old object stays in the cluster" in line


def test_a_pool_network_change_replaces_a_protected_pool_and_fails(repo: Path) -> None:
    """GPUDirect on prod's A3 High pool: additional node networks are ForceNew and prod protects its
    pools, so the preview fails before anyone runs `pulumi up` (issue 29 #5)."""
    _edit_prod(repo, {"network": "gpudirect"}, pool=1)
    code, out = _preview(repo)
    assert code == 1, out
    line = next(line for line in out.splitlines() if "h100-queued-pool" in line and "**replace**" in line)
    assert (
        "networkConfig.additionalNodeNetworkConfigs" in line and "refused: the resource is protected" in line
    )
    # Prod runs Dataplane V2 already: multi-networking is an in-place update of the cluster.
    cluster = next(line for line in out.splitlines() if "gpu-batch-prod-cluster`" in line)
    assert cluster.startswith("- **update**") and "enableMultiNetworking" in cluster
