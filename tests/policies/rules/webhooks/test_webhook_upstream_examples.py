"""Each project's own valid examples, at the version judged, pass its webhook port (issue 42, item 1).

The examples are read at test time from the fetched mirrors (``../.mirror/<owner>+<name>/repo``,
``git show <ref>:<path>``), never copied here; each file is one stack.  A file whose objects need
a feature gate that is off at that version is an expected refusal, listed with the gate, and the
test checks the refusal names it.  Without a mirror the project is skipped with the reason.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpu_batch_policy.rules.webhooks import jobset, kai, kuberay, kuberay_features, lws, mpi, spark, trainer
from pulumi_policy import Policy

from tests.policies.corpus import token
from tests.policies.workload_stack import Registration, kuberay_release, registration, run
from tests.upstream import mirror, show


@dataclass(frozen=True)
class Examples:
    mirror: str
    ref: str
    folders: tuple[str, ...]
    policies: tuple[Policy, ...]
    groups: tuple[str, ...]
    # file -> the words its expected refusal carries (an Alpha gate off at that version)
    needs_gate: tuple[tuple[str, str], ...] = ()
    # user-facing Markdown whose ```yaml blocks are examples (design proposals are not)
    markdown: tuple[str, ...] = ()


KUBERAY_GATED = (
    ("ray-cluster.embedded-gcs-ft.yaml", "GCSFaultToleranceEmbeddedStorage"),
    ("ray-cluster.historyserver.yaml", "RayClusterHistoryServer"),
    ("ray-cluster.mtls.yaml", "RayClusterMTLS"),
    ("ray-cluster.network-policy-deny-all.yaml", "RayClusterNetworkPolicy"),
)
PROJECTS = {
    "jobset": Examples(
        "kubernetes-sigs+jobset",
        "v0.12.0",
        ("site/static/examples/",),
        tuple(jobset.POLICIES),
        ("jobset.x-k8s.io",),
        needs_gate=(
            ("site/static/examples/failure-policy/restartjob-action.yaml", "RestartJob feature gate"),
            (
                "site/static/examples/failure-policy/restartjobandignoremaxrestarts-action.yaml",
                "RestartJob feature gate",
            ),
            (
                "site/static/examples/in-place-restart/jobset-main-container-mode.yaml",
                "InPlaceRestart feature gate",
            ),
            (
                "site/static/examples/in-place-restart/jobset-sidecar-container-mode.yaml",
                "InPlaceRestart feature gate",
            ),
        ),
    ),
    "lws": Examples(
        "kubernetes-sigs+lws",
        "v0.9.0",
        ("config/samples/", "docs/examples/"),
        tuple(lws.POLICIES),
        ("leaderworkerset.x-k8s.io",),
    ),
    "trainer": Examples(
        "kubeflow+trainer",
        "v2.2.1",
        ("manifests/base/runtimes/", "examples/"),
        tuple(trainer.POLICIES),
        ("trainer.kubeflow.org",),
    ),
    "mpi": Examples(
        "kubeflow+mpi-operator", "b10758d", ("examples/v2beta1/",), tuple(mpi.POLICIES), ("kubeflow.org",)
    ),
    "spark": Examples(
        "kubeflow+spark-operator", "v2.5.1", ("examples/",), tuple(spark.POLICIES), ("sparkoperator.k8s.io",)
    ),
    "kai": Examples(
        "kai-scheduler+KAI-Scheduler",
        "v0.17.0",
        ("docs/", "examples/"),
        tuple(kai.POLICIES),
        ("scheduling.run.ai", "kai.scheduler"),
        markdown=(
            "docs/topology/",
            "docs/preemption-delay/",
            "docs/staleness-grace-period/",
            "docs/operator/",
        ),
    ),
    "kuberay": Examples(
        "ray-project+kuberay",
        "v1.7.0",
        ("ray-operator/config/samples/",),
        (*kuberay.POLICIES, *kuberay_features.POLICIES),
        ("ray.io",),
        needs_gate=tuple((f"ray-operator/config/samples/{f}", g) for f, g in KUBERAY_GATED),
    ),
}


def files(git: Path, examples: Examples) -> list[str]:
    listed = subprocess.run(
        ["git", f"--git-dir={git}", "ls-tree", "-r", "--name-only", examples.ref, *examples.folders],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    markdown = [f for f in listed if f.endswith(".md") and f.startswith(examples.markdown or ("\0",))]
    return [f for f in listed if f.endswith((".yaml", ".yml"))] + markdown


def yaml_text(path: str, text: str) -> str:
    """The file, or for Markdown its ```yaml blocks as one multi-document stream."""
    if not path.endswith(".md"):
        return text
    blocks = re.findall(r"^```ya?ml[^\n]*\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    return "\n---\n".join(blocks)


def registrations(text: str, groups: tuple[str, ...]) -> Iterator[Registration]:
    try:
        docs = [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]
    except yaml.YAMLError:
        return  # a template or a fragment, not a manifest
    for index, doc in enumerate(docs):
        api = doc.get("apiVersion")
        if (
            not isinstance(api, str)
            or api.split("/")[0] not in groups
            or not isinstance(doc.get("kind"), str)
        ):
            continue
        meta: Any = doc.get("metadata")
        name = meta.get("name") if isinstance(meta, dict) else None
        yield registration(token(doc), str(name or f"doc{index}"), doc)


@pytest.mark.parametrize("project", sorted(PROJECTS))
def test_valid_upstream_examples_pass(project: str) -> None:
    examples = PROJECTS[project]
    git = mirror(
        examples.mirror.replace("+", "/", 1),
        f"GPU_BATCH_{examples.mirror.upper().replace('+', '_').replace('-', '_')}_GIT",
    )
    if git is None:
        pytest.skip(f"no {examples.mirror} mirror: fetch it into ../.mirror/{examples.mirror}/repo")
    gated = dict(examples.needs_gate)
    judged = 0
    refusals: list[str] = []
    for path in files(git, examples):
        regs = list(registrations(yaml_text(path, show(git, examples.ref, path)), examples.groups))
        if not regs:
            continue
        judged += len(regs)
        found = [v for policy in examples.policies for v in run(policy, regs).violations]
        if path in gated:
            assert found and all(gated[path] in v for v in found), (path, found)
        else:
            refusals += [f"{path}: {v}" for v in found]
    assert refusals == []
    assert judged >= 3, f"{project}: only {judged} objects judged; the example folders moved?"


@pytest.mark.parametrize(("sample", "gate"), KUBERAY_GATED)
def test_kuberay_gated_samples_pass_with_their_gate_on(sample: str, gate: str) -> None:
    """The same samples pass once a kuberay-operator release turns their gate on."""
    examples = PROJECTS["kuberay"]
    git = mirror(examples.mirror.replace("+", "/", 1), "GPU_BATCH_RAY_PROJECT_KUBERAY_GIT")
    if git is None:
        pytest.skip(f"no {examples.mirror} mirror: fetch it into ../.mirror/{examples.mirror}/repo")
    release = kuberay_release()
    release[1]["values"]["featureGates"] = [{"name": gate, "enabled": True}]
    regs = list(
        registrations(show(git, examples.ref, f"ray-operator/config/samples/{sample}"), examples.groups)
    )
    assert regs
    assert [v for policy in examples.policies for v in run(policy, [*regs, release]).violations] == []
