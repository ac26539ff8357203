"""``python -m benchmarks.differential_pack``: the policy pack against the real kube-apiserver
v1.37.2 (issue 41, part 1).

Every object of corpora 1-3 and of the six repo stacks, and one invalid and one valid seeded
mutation of each (:mod:`benchmarks.pack_cases`), is judged twice:

* by the server: a dry-run create on a live-tier cluster with every CRD the pack knows and
  Kueue v0.19.2's webhooks serving (:mod:`benchmarks.pack_server`) -- its schema, CEL rules, the
  built-in kinds' Go validation, admission and Kueue's webhooks;
* by the pack: its rules that port exactly that judgement (:data:`SERVER_RULES`), run on the
  object as the analyzer runs them (``tests.policies.pack_harness``, the rules in process), each
  object alone: a violation of any of them is the pack's refusal.

They agree when both accept or both refuse.  Not compared, with the reason counted in
``excluded``: objects whose kind the server does not serve (no CRD anywhere for it, or a version
no CRD serves) and pulumi-kubernetes patches (no create).  The pack's ``pod-template-api-validation``
on a custom resource is not a refusal here: the server stores the resource, and every pod its
controller makes from the template is refused later (counted as ``deferred``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.pack_cases import STACKS, Case, Excluded, generate, sample
from benchmarks.pack_server import Answer, dry_run_create, placed, prepare, start

if TYPE_CHECKING:
    from tests.live.cluster import Cluster

# The pack's rules that port what the API server and Kueue's webhooks decide on create.
SERVER_RULES = (
    "builtin-object-schema",
    "custom-resource-schema",
    "container-resource-quantities",
    "pod-template-api-validation",
    "priority-class-admission",
    "kueue-quota-quantities",
    "kueue-served-api-version",
    "kueue-clusterqueue-size-limits",
    "kueue-resourceflavor-webhook",
    "kueue-queue-spec-webhook",
    "kueue-job-webhook",
    "kueue-workload-webhook",
    "kueue-ray-webhook",
    # its refusals of the ClusterQueue itself (onFlavors naming a flavor of none of its resource
    # groups: Kueue's clusterqueue_webhook.go validateClusterQueue); an object judged alone names
    # nothing else the pack could find missing (open world: "cannot check", not a refusal)
    "kueue-clusterqueue-references",
)
# pod templates of these groups are the API server's to validate; of any other, a controller's
BUILT_IN_TEMPLATE_GROUPS = frozenset({"", "apps", "batch"})


@dataclass(frozen=True)
class PackVerdict:
    refusals: tuple[tuple[str, str], ...]  # (rule, message)
    deferred: tuple[tuple[str, str], ...] = ()

    @property
    def accepted(self) -> bool:
        return not self.refusals


def pack_verdict(doc: dict[str, Any]) -> PackVerdict:
    """The pack's :data:`SERVER_RULES` on ``doc`` alone (open world, default levels)."""
    from tests.policies.corpus import token
    from tests.policies.pack_harness import Res, run_all

    meta = doc.get("metadata") or {}
    name = str(meta.get("name") or meta.get("generateName") or "unnamed")
    res = Res(token(doc), name, doc, urn=f"urn:pulumi:differential::gpu-batch::{token(doc)}::{name}")
    refusals: list[tuple[str, str]] = []
    deferred: list[tuple[str, str]] = []
    group = str(doc.get("apiVersion", "")).rpartition("/")[0]
    for rule, result in sorted(run_all([res], list(SERVER_RULES)).items()):
        for message in result.messages:
            if rule == "pod-template-api-validation" and group not in BUILT_IN_TEMPLATE_GROUPS:
                deferred.append((rule, message))
            else:
                refusals.append((rule, message))
    return PackVerdict(tuple(refusals), tuple(deferred))


@dataclass
class Tally:
    total: int = 0
    agree: int = 0
    excluded: Counter[str] = field(default_factory=Counter)
    both_refuse: int = 0
    server_only: int = 0  # the server refuses, the pack accepts
    pack_only: int = 0  # the pack refuses, the server accepts

    @property
    def compared(self) -> int:
        return self.total - sum(self.excluded.values())

    def line(self, label: str) -> str:
        pct = f"{100 * self.agree / self.compared:.1f}%" if self.compared else "n/a"
        reasons = " ".join(f"{k}={v}" for k, v in sorted(self.excluded.items()))
        return (
            f"{label}: agree={self.agree}/{self.compared} ({pct}) excluded={sum(self.excluded.values())}"
            + (f" ({reasons})" if reasons else "")
            + f" both-refuse={self.both_refuse} server-only={self.server_only} pack-only={self.pack_only}"
        )


@dataclass
class Report:
    overall: Tally = field(default_factory=Tally)
    sources: dict[str, Tally] = field(default_factory=dict)
    intents: dict[str, Tally] = field(default_factory=dict)
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    deferred: int = 0

    def tallies(self, case_source: str, intent: str) -> tuple[Tally, ...]:
        return (
            self.overall,
            self.sources.setdefault(case_source, Tally()),
            self.intents.setdefault(intent, Tally()),
        )

    def lines(self) -> list[str]:
        out = [self.overall.line("pack-vs-server")]
        out += [self.sources[s].line(f"  {s}") for s in sorted(self.sources)]
        out += [self.intents[i].line(f"  {i}") for i in sorted(self.intents)]
        if self.deferred:
            out.append(
                f"  deferred={self.deferred}: custom resources the server stores whose pod templates "
                "the pack refuses (pod-template-api-validation: their pods are refused later)"
            )
        causes = Counter(d["cause"] for d in self.disagreements)
        if causes:
            out.append("  disagreements by cause: " + " ".join(f"{k}={v}" for k, v in causes.most_common()))
            out += [f"    {name}: {why}" for name, _, _, why in KNOWN_CAUSES if causes[name]]
        firsts = Counter(d["first_difference"] for d in self.disagreements)
        if firsts:
            out.append(
                "  disagreements by first difference: "
                + " ".join(f"{k}={v}" for k, v in firsts.most_common())
            )
        return out


# custom resources of Kueue's integrations its mutating webhooks answer with a re-encoded object
KUEUE_MUTATED = frozenset(
    {"RayCluster", "RayJob", "JobSet", "MPIJob", "PyTorchJob", "TrainJob", "AppWrapper", "LeaderWorkerSet"}
)
# Disagreements whose cause is known and out of the pack's reach (or not ported yet), by name:
# (the side that refuses, a test on the disagreement, why).
KNOWN_CAUSES: tuple[tuple[str, str, Callable[[dict[str, Any]], bool], str], ...] = (
    (
        "template-placeholder",
        "server-only",
        lambda d: "${" in d["server"]["message"],
        "a published template: the pack reads a ${VAR} placeholder as a value substituted before "
        "apply (primitives.k8s_names.has_placeholder); the server judges the literal text",
    ),
    (
        "kueue-webhook-zero-values",
        "pack-only",
        lambda d: (
            d["ref"].split("/", 1)[0] in KUEUE_MUTATED
            and all("required field missing" in p["message"] for p in d["pack"])
        ),
        "Kueue's mutating webhook decodes the object into its Go type and answers with a patch to "
        "the re-encoded object (controller-runtime v0.22 pkg/webhook/admission/defaulter_custom.go, "
        "PatchResponseFromRaw), so a required scalar the object lacks reaches validation as its zero "
        'value (containerPort: 0, name: ""); without Kueue the server refuses it, as the pack does',
    ),
    (
        "crd-default-invalid",
        "server-only",
        lambda d: (
            "CustomResourceDefinition" in d["ref"] and ".default: Invalid value" in d["server"]["message"]
        ),
        "not ported: a CRD's schema defaults must be valid against the schema they default "
        "(apiextensions-apiserver v0.37.2 pkg/apiserver/schema/defaulting/validation.go "
        "ValidateDefaults); the pack types a default as JSON of any kind",
    ),
    (
        "pvc-storage-request",
        "server-only",
        lambda d: (
            "PersistentVolumeClaim" in d["ref"] and "must be greater than zero" in d["server"]["message"]
        ),
        "not ported: a PersistentVolumeClaim's storage request must be above zero "
        "(kubernetes v1.37.2 pkg/apis/core/validation ValidatePersistentVolumeClaimSpec); the pack "
        "checks only that it is a quantity",
    ),
)


def cause(disagreement: dict[str, Any]) -> str:
    """The known cause of a disagreement (:data:`KNOWN_CAUSES`), or ``unexplained``."""
    side = disagreement["first_difference"].split(":", 1)[0]
    for name, refusing, test, _ in KNOWN_CAUSES:
        if refusing == side and test(disagreement):
            return name
    return "unexplained"


def _first_difference(case: Case, answer: Answer, verdict: PackVerdict) -> str:
    if not answer.accepted:
        return f"server-only: {case.doc.get('kind')} ({answer.reason or answer.status})"
    return f"pack-only: {case.doc.get('kind')} ({', '.join(sorted({r for r, _ in verdict.refusals}))})"


def judge(
    cases: list[Case], answers: dict[str, Answer], verdicts: dict[str, PackVerdict], excluded: list[Excluded]
) -> Report:
    report = Report()
    for ex in excluded:
        for t in report.tallies(ex.source, "as-published"):
            t.total += 1
            t.excluded[ex.reason.split(":")[0]] += 1
    for case in cases:
        tallies = report.tallies(case.source, case.intent)
        answer = answers[case.id]
        for t in tallies:
            t.total += 1
        if not answer.served:
            for t in tallies:
                t.excluded["no-kind"] += 1
            continue
        verdict = verdicts[case.id]
        report.deferred += bool(verdict.deferred) and answer.accepted
        agree = answer.accepted == verdict.accepted
        for t in tallies:
            t.agree += agree
            t.both_refuse += agree and not answer.accepted
            t.server_only += not answer.accepted and verdict.accepted
            t.pack_only += answer.accepted and not verdict.accepted
        if not agree:
            found: dict[str, Any] = {
                "id": case.id,
                "source": case.source,
                "ref": case.ref,
                "mutation": case.mutation,
                "first_difference": _first_difference(case, answer, verdict),
                "server": {"status": answer.status, "reason": answer.reason, "message": answer.message},
                "pack": [{"rule": r, "message": m} for r, m in verdict.refusals],
            }
            found["cause"] = cause(found)
            report.disagreements.append(found)
    return report


def ask(cluster: Cluster, cases: list[Case]) -> tuple[list[Case], dict[str, Answer]]:
    """The cases as sent (placed in their namespaces) and the server's answer to each."""
    judged: list[Case] = []
    answers: dict[str, Answer] = {}
    for case in cases:
        doc, served = placed(cluster, case.doc)
        judged.append(Case(case.id, case.source, case.set, case.mutation, case.intent, doc))
        if not served:
            answers[case.id] = Answer(False, 0, "NoKind", "the server serves no such kind")
    prepare(cluster, [c.doc for c in judged if c.id not in answers])
    for case in judged:
        if case.id not in answers:
            answers[case.id] = dry_run_create(cluster, case.doc)
    return judged, answers


def pack_verdicts(cases: list[Case], answers: dict[str, Answer]) -> dict[str, PackVerdict]:
    """The pack's verdict on every case whose kind the server serves."""
    return {c.id: pack_verdict(c.doc) for c in cases if answers[c.id].served}


def run(
    seed: int, count: int | None = None, stack_names: tuple[str, ...] = STACKS
) -> tuple[list[Case], Report]:
    """Generate the cases (a seeded ``count`` of them, or all), ask the server and the pack, judge."""
    from tests.live.cluster import control_plane

    cases, excluded = generate(seed, stack_names)
    if count is not None:
        cases = sample(cases, count, seed)
        excluded = []
    with control_plane() as plane:
        deployment = start(plane, stack_names)
        try:
            judged, answers = ask(deployment.cluster, cases)
        finally:
            deployment.cluster.stop()
    return judged, judge(judged, answers, pack_verdicts(judged, answers), excluded)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.differential_pack", description=__doc__)
    p.add_argument("--seed", type=int, default=41)
    p.add_argument("--count", type=int, help="a seeded sample of this many objects (default: all)")
    p.add_argument("--stacks", default=",".join(STACKS), help="the repo stacks, comma-separated")
    p.add_argument("--disagreements", type=Path, help="write every disagreement (JSON) here")
    args = p.parse_args(argv)
    started = time.monotonic()
    cases, report = run(args.seed, args.count, tuple(s for s in args.stacks.split(",") if s))
    for line in report.lines():
        print(line)
    print(f"  seed={args.seed} objects={len(cases)} wall_s={time.monotonic() - started:.1f}")
    if args.disagreements:
        args.disagreements.write_text(json.dumps(report.disagreements, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
