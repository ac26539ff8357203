"""The whole pack, over the analyzer gRPC protocol, on the third upstream corpus
(``../shared/corpus3/upstream``, sources in its ``SOURCE.tsv``), and on one-mutation variants of
it (issue 31's "Done when").

* Every set as published: no crash, no internal error, no mandatory finding, except the sets that
  are wrong as published (:data:`WRONG_AS_PUBLISHED`), caught by the named rules.
* :data:`MUTATIONS`: one mistake put into a published set per rule family of issue 31; each must
  be caught by its rule (a mandatory finding), and the unmutated set stays clean of that rule.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from preview.analyzer import Diagnostic, PolicyPackProcess
from preview.records import RecordedResource
from tests.policies.corpus import CorpusStack, check_published, folder_stacks
from tests.policies.test_corpus_e2e import POLICIES_DIR

CORPUS3 = Path(__file__).resolve().parents[3] / "shared" / "corpus3" / "upstream"
ALL_SETS = list(folder_stacks(CORPUS3))

WRONG_AS_PUBLISHED: dict[str, tuple[str, str]] = {
    "llm-on-gke-kueue-ray/f7fcf64e21c8/raytrain-example": (
        "custom-resource-schema kueue-flavor-resources-match-covered",
        "dws-queues.yaml lists nvidia.com/gpu twice in the flavor's resources (5 entries for 4 covered "
        "resources): the CRD's list-map keys and its CEL rule refuse the ClusterQueue",
    ),
}


def _docs(stack: CorpusStack) -> list[dict[str, Any]]:
    return [copy.deepcopy(d) for d in stack.documents()]


def _named(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    return next(d for d in docs if d.get("kind") == kind and (d.get("metadata") or {}).get("name") == name)


def _wrapped_job(docs: list[dict[str, Any]]) -> dict[str, Any]:
    template: dict[str, Any] = _named(docs, "AppWrapper", "sample-job")["spec"]["components"][0]["template"]
    return template


def _appwrapper_too_big(docs: list[dict[str, Any]]) -> None:
    _wrapped_job(docs)["spec"]["parallelism"] = 8  # 8 pods x 1 cpu; the ClusterQueue has 4


def _appwrapper_other_namespace(docs: list[dict[str, Any]]) -> None:
    _wrapped_job(docs)["metadata"]["namespace"] = "kube-system"


def _appwrapper_uncovered(docs: list[dict[str, Any]]) -> None:
    container = _wrapped_job(docs)["spec"]["template"]["spec"]["containers"][0]
    container["resources"]["requests"]["memory"] = "1Gi"  # the ClusterQueue covers cpu only


def _pods_quota(docs: list[dict[str, Any]]) -> None:
    cq = _named(docs, "ClusterQueue", "cluster-queue")
    cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = 0  # pods


def _plain_job_uncovered(docs: list[dict[str, Any]]) -> None:
    job = next(d for d in docs if d.get("kind") == "Job")
    job["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"nvidia.com/gpu": 1}}


def _admission_check_typo(docs: list[dict[str, Any]]) -> None:
    _named(docs, "AdmissionCheck", "multikueue-demo1")["spec"]["controllerName"] = (
        "kueue.x-k8s.io/multi-kueue"
    )


def _tainted_flavor(docs: list[dict[str, Any]]) -> None:
    taint = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    _named(docs, "ResourceFlavor", "default-flavor").setdefault("spec", {})["nodeTaints"] = [taint]


def _preemption_policy(docs: list[dict[str, Any]]) -> None:
    _named(docs, "PriorityClass", "low-priority")["preemptionPolicy"] = "PreemptLower"


@dataclass(frozen=True)
class Mutation:
    name: str
    set_id: str
    mutate: Callable[[list[dict[str, Any]]], None]
    rule: str


MUTATIONS = (
    Mutation(
        "appwrapper-sized", "appwrapper/v1.2.1/site/_pages", _appwrapper_too_big, "workload-gang-fits-queue"
    ),
    Mutation(
        "appwrapper-webhook",
        "appwrapper/v1.2.1/site/_pages",
        _appwrapper_other_namespace,
        "appwrapper-webhook",
    ),
    Mutation(
        "appwrapper-covered",
        "appwrapper/v1.2.1/site/_pages",
        _appwrapper_uncovered,
        "workload-resources-covered",
    ),
    Mutation(
        "pods-quota", "slurm-kueue-ocp/64a080c34dea/examples/kueue", _pods_quota, "workload-gang-fits-queue"
    ),
    Mutation(
        "job-uncovered",
        "slurm-kueue-ocp/64a080c34dea/examples/kueue",
        _plain_job_uncovered,
        "workload-resources-covered",
    ),
    Mutation("appwrapper-taint", "appwrapper/v1.2.1/site/_pages", _tainted_flavor, "kueue-flavor-eligible"),
    Mutation(
        "preemption-policy", "mlbatch/7ca98253d83f/setup.k8s", _preemption_policy, "priority-class-admission"
    ),
    Mutation(
        "admission-check-controller",
        "ocm/v1.3.1/solutions/kueue-admission-check",
        _admission_check_typo,
        "kueue-admissioncheck-controller",
    ),
)


def _records(stack: CorpusStack, docs: list[dict[str, Any]]) -> list[RecordedResource]:
    """The records of ``stack`` with its documents replaced by ``docs`` (same order, same URNs)."""
    records = stack.records()
    return [records[0], *(replace(r, inputs=d, outputs=d) for r, d in zip(records[1:], docs, strict=True))]


@pytest.fixture(scope="module")
def results() -> Iterator[dict[str, list[Diagnostic]]]:
    by_id = {s.id: s for s in ALL_SETS}
    with PolicyPackProcess(POLICIES_DIR, stack="corpus3") as process:
        process.configure()
        out = {stack.id: process.analyze(stack.records()) for stack in ALL_SETS}
        for mutation in MUTATIONS:
            stack = by_id[mutation.set_id]
            docs = _docs(stack)
            mutation.mutate(docs)
            out[mutation.name] = process.analyze(_records(stack, docs))
        yield out


def test_the_corpus_is_there_and_every_file_is_read() -> None:
    assert sum(len(s.files) for s in ALL_SETS) == len(list(CORPUS3.rglob("*.yaml"))) > 40
    assert set(WRONG_AS_PUBLISHED) | {m.set_id for m in MUTATIONS} <= {s.id for s in ALL_SETS}


@pytest.mark.parametrize("stack", ALL_SETS, ids=lambda s: s.id)
def test_published_sets(results: dict[str, list[Diagnostic]], stack: CorpusStack) -> None:
    check_published(results[stack.id], stack.id, WRONG_AS_PUBLISHED)


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_one_mutation_variants_are_caught(results: dict[str, list[Diagnostic]], mutation: Mutation) -> None:
    caught = {d.policy_name for d in results[mutation.name] if d.mandatory}
    assert mutation.rule in caught, [d.message for d in results[mutation.name]]
    assert mutation.rule not in {d.policy_name for d in results[mutation.set_id] if d.mandatory}
