"""The whole pack, as its own process over the analyzer gRPC protocol, on every upstream manifest
set in ``../shared/corpus/upstream`` (issue 11: a pack that judges any program fairly).

Each corpus file (or example folder, ``corpus.EXAMPLE_FOLDERS``) is one stack, analysed with the
pack's defaults (open world: no ``closedWorld``, no ``externalObjects``), one pack process for the
module.  What must hold:

* no crash, ever: every stack gets an answer and the process stays up;
* no mandatory finding on a working example -- references that leave the file are only the
  advisory "cannot check: not in this stack";
* the files that are wrong as published are caught, by the rule(s) (space-separated) and for
  the reason in ``WRONG_AS_PUBLISHED``.

``test_family_summary`` prints, per corpus family, how many stacks are clean, caught or
"cannot check" (run with ``-s`` to see it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from preview.analyzer import Diagnostic, PolicyPackProcess
from tests.policies.corpus import CORPUS, CorpusStack, stacks

POLICIES_DIR = Path(__file__).resolve().parents[2] / "policies"
ALL_STACKS = list(stacks())

_V1BETA2_LIST = (
    "kueue-api-version-fields custom-resource-schema",
    "a v1beta2 ClusterQueue with the v1beta1 `spec.admissionChecks` list: v1beta2 has only "
    "admissionChecksStrategy (kueue v0.19.2 CRD kueue.x-k8s.io_clusterqueues.yaml, v1beta2 schema), "
    "so the API server prunes the list and the DWS/provisioning check never gates admission",
)
_PARTIAL_FLAVOR = (
    "kueue-flavor-resources-match-covered custom-resource-schema",
    "a doc snippet whose flavor lists fewer resources than coveredResources; the CRD's CEL rule "
    "'flavors must have the same number of resources as the coveredResources' rejects it",
)
_ON_FLAVORS = (
    "kueue-clusterqueue-references",
    "admissionChecksStrategy onFlavors names 'default-flavor' but the queue has no resourceGroups; "
    "Kueue 0.19.2's webhook rejects it (pkg/webhooks/clusterqueue_webhook.go L159-185, "
    "field.NotSupported)",
)
_SKYPILOT_INDENT = (
    "kueue-flavor-resources-match-covered custom-resource-schema",
    "`resources:` is indented as a sibling of `flavors`, so the flavor has no resources (and the "
    "resourceGroup an unknown field); the CRD's CEL rule rejects the ClusterQueue",
)
_SKYPILOT_INDENT_AND_ALPHA = (
    "kueue-flavor-resources-match-covered custom-resource-schema kueue-served-api-version",
    _SKYPILOT_INDENT[1] + "; and its Cohort is kueue.x-k8s.io/v1alpha1, which Kueue 0.19.2 does not serve "
    "(its chart's CRDs list only v1beta1 and v1beta2)",
)
_KAI_LIMIT_UNSET = (
    "kai-quota-within-limit",
    "queue 'ml-team' has cpu/gpu quota but no limit; KAI v0.17.0 reads an unset limit as MaxAllowed 0 "
    "(proportion.go L334-346, max_allowed_check.go L51-64), so every job of the queue is OverLimit",
)

WRONG_AS_PUBLISHED: dict[str, tuple[str, str]] = {
    "cluster-toolkit/1047080375af/examples/gke-consumption-options/dws-flex-start-queued-provisioning/"
    "dws-queues.yaml.rendered.yaml": _V1BETA2_LIST,
    "cluster-toolkit/1047080375af/examples/gke-consumption-options/dws-flex-start-queued-provisioning/"
    "tpu-dws-queues.yaml.rendered.yaml": _V1BETA2_LIST,
    "cluster-toolkit/1047080375af/modules/management/kubectl-apply/kueue/"
    "kueue-configuration-dynamic-slicing.yaml.rendered.yaml": _V1BETA2_LIST,
    "kai/v0.13.0/docs/queues/README.md.block04.yaml": _KAI_LIMIT_UNSET,
    "kueue/v0.14.8/site/content/en/docs/concepts/cluster_queue.md.block09.yaml": _PARTIAL_FLAVOR,
    "kueue/v0.14.8/site/content/en/docs/concepts/cluster_queue.md.block10.yaml": _PARTIAL_FLAVOR,
    "kueue/v0.19.2/site/content/en/docs/concepts/cluster_queue.md.block09.yaml": _PARTIAL_FLAVOR,
    "kueue/v0.19.2/site/content/en/docs/concepts/cluster_queue.md.block10.yaml": _PARTIAL_FLAVOR,
    "kueue/v0.14.8/site/static/examples/admin/minimal-cq.yaml": _ON_FLAVORS,
    "kueue/v0.19.2/site/static/examples/admin/minimal-cq.yaml": _ON_FLAVORS,
    "skypilot/docs/source/reference/kubernetes/examples/kueue-example.rst@00126416aa5a.block03.yaml": _SKYPILOT_INDENT,
    "skypilot/docs/source/reference/kubernetes/examples/kueue-example.rst@00126416aa5a.block04.yaml": (
        _SKYPILOT_INDENT_AND_ALPHA
    ),
}

# Stacks whose references leave the file: each must say so with an advisory, never a mandatory.
SPLIT_STACKS = (
    "kueue/v0.19.2/site/static/examples/jobs/ray-job-sample.yaml",  # LocalQueue user-queue elsewhere
    "kueue/v0.19.2/site/content/en/docs/concepts/cluster_queue.md.block02.yaml",  # flavors elsewhere
    "kai/v0.13.0/docs/quickstart/pods/gpu-pod.yaml",  # KAI queue default-queue elsewhere
    "kueue/v0.19.2/site/content/en/docs/tasks/manage/run_job_with_workload_priority.md.block02.yaml",
)


@pytest.fixture(scope="module")
def pack() -> Iterator[PolicyPackProcess]:
    with PolicyPackProcess(POLICIES_DIR, stack="corpus") as process:
        process.configure()
        yield process


@pytest.fixture(scope="module")
def results(pack: PolicyPackProcess) -> dict[str, list[Diagnostic]]:
    return {stack.id: pack.analyze(stack.records()) for stack in ALL_STACKS}


def verdict(diagnostics: list[Diagnostic]) -> str:
    if any(d.mandatory for d in diagnostics):
        return "caught"
    if any(d.cannot_check for d in diagnostics):
        return "cannot check"
    return "clean"


def test_the_corpus_is_there_and_every_stack_is_read() -> None:
    assert CORPUS.is_dir(), f"missing corpus {CORPUS}"
    files = sum(len(s.files) for s in ALL_STACKS)
    assert files == len(list(CORPUS.rglob("*.yaml"))) and len(ALL_STACKS) > 100
    assert {s.family for s in ALL_STACKS} == {
        "kueue v0.19.2",
        "kueue v0.14.8",
        "kuberay",
        "kai",
        "cluster-toolkit",
        "xpk",
        "skypilot",
    }


@pytest.mark.parametrize("stack", ALL_STACKS, ids=lambda s: s.id)
def test_no_crash_and_no_false_alarm(results: dict[str, list[Diagnostic]], stack: CorpusStack) -> None:
    diagnostics = results[stack.id]
    crashes = [
        d
        for d in diagnostics
        if "Traceback" in d.message
        or "unexpected error" in d.message.lower()
        or "internal error" in d.message
    ]
    assert not crashes
    mandatory = sorted({d.policy_name for d in diagnostics if d.mandatory})
    expected = WRONG_AS_PUBLISHED.get(stack.id)
    if expected is None:
        assert mandatory == [], "\n".join(d.message for d in diagnostics if d.mandatory)
    else:
        assert mandatory == sorted(expected[0].split()), f"{stack.id} should be caught: {expected[1]}"


def test_every_wrong_file_is_in_the_corpus() -> None:
    ids = {s.id for s in ALL_STACKS}
    assert set(WRONG_AS_PUBLISHED) <= ids


@pytest.mark.parametrize("stack_id", SPLIT_STACKS)
def test_split_stacks_get_only_not_in_this_stack(results: dict[str, list[Diagnostic]], stack_id: str) -> None:
    diagnostics = results[stack_id]
    assert not any(d.mandatory for d in diagnostics)
    assert any(
        d.cannot_check and "not in this stack" in d.message and "externalObjects" in d.message
        for d in diagnostics
    )


def test_pack_process_survives_the_whole_corpus(
    pack: PolicyPackProcess, results: dict[str, list[Diagnostic]]
) -> None:
    assert len(results) == len(ALL_STACKS)
    assert {p.name for p in pack.policies()}  # still answering after every stack


def test_family_summary(results: dict[str, list[Diagnostic]]) -> None:
    counts: dict[str, Counter[str]] = {}
    for stack in ALL_STACKS:
        counts.setdefault(stack.family, Counter())[verdict(results[stack.id])] += 1
    print("\nfamily            stacks  clean  caught  cannot-check")
    for family in sorted(counts):
        c = counts[family]
        print(f"{family:17} {sum(c.values()):6} {c['clean']:6} {c['caught']:7} {c['cannot check']:13}")
    assert sum(c["caught"] for c in counts.values()) == len(WRONG_AS_PUBLISHED)
