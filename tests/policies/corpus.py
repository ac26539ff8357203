"""The upstream corpus (``../shared/corpus/upstream``) as stacks the pack can analyse.

Each file is one stack, except where the upstream presents several files as one example (a
folder whose setup and workloads go together); each YAML document becomes one registration of
type ``kubernetes:<group>/<version>:<Kind>`` (core kinds ``kubernetes:core/v1:<Kind>``), exactly
the tokens pulumi-kubernetes registers.  Files are read in place, never copied.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from gpu_batch_policy.facts.model.base import is_namespaced

from preview.records import RecordedResource

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "upstream"
# The second corpus (issue 18): sources corpus 1 never used; ``SOURCE.tsv`` beside it says where
# each file comes from.  Each folder is one example set, as its upstream presents it.
CORPUS2 = Path(__file__).resolve().parents[3] / "shared" / "corpus2" / "upstream"
STACK_URN = "urn:pulumi:corpus::gpu-batch::pulumi:pulumi:Stack::gpu-batch-corpus"

# Folders whose files the upstream presents as one example (setup + the jobs that use it).
EXAMPLE_FOLDERS = (
    "kueue/v0.19.2/site/static/examples/admission-fs",
    "kueue/v0.14.8/site/static/examples/admission-fs",
    "kueue/v0.19.2/site/static/examples/provisioning",
    "kueue/v0.14.8/site/static/examples/provisioning",
    "kueue/v0.19.2/site/static/examples/multikueue/tas",
    "kai/v0.13.0/examples/time-based-fairshare/two-queue-oscillation",
)


def family(relative: str) -> str:
    """The report's corpus family of a stack: kueue v0.19.2, kueue v0.14.8, kuberay, kai, ..."""
    parts = relative.split("/")
    return f"{parts[0]} {parts[1]}" if parts[0] == "kueue" else parts[0]


@dataclass(frozen=True)
class CorpusStack:
    """One stack: its id (path relative to the corpus) and the files it is made of."""

    id: str
    files: tuple[Path, ...]
    # The namespace its upstream applies it in (``kubectl apply -n``), for objects that name none.
    namespace: str | None = None

    @property
    def family(self) -> str:
        return family(self.id)

    def documents(self) -> list[dict[str, Any]]:
        docs: list[dict[str, Any]] = []
        for path in self.files:
            docs.extend(d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict))
        return docs

    def records(self) -> list[RecordedResource]:
        stack = RecordedResource(STACK_URN, "pulumi:pulumi:Stack", "gpu-batch-corpus", "", "", False, {}, {})
        found = [stack]
        seen: set[str] = set()
        for doc in map(self._placed, self.documents()):
            type_token = token(doc)
            name = str(
                (doc.get("metadata") or {}).get("name") or (doc.get("metadata") or {}).get("generateName")
            )
            namespace = (doc.get("metadata") or {}).get("namespace")
            resource_name = f"{namespace}-{name}" if namespace else name
            urn = f"urn:pulumi:corpus::gpu-batch::{type_token}::{resource_name}"
            while urn in seen:  # the same name twice in one example: keep both, distinctly
                resource_name += "-dup"
                urn = f"urn:pulumi:corpus::gpu-batch::{type_token}::{resource_name}"
            seen.add(urn)
            found.append(RecordedResource(urn, type_token, resource_name, STACK_URN, "", True, doc, doc))
        return found

    def _placed(self, doc: dict[str, Any]) -> dict[str, Any]:
        """``doc`` in :attr:`namespace` when it is namespaced and names none (as ``-n`` does)."""
        found = doc.get("metadata")
        meta: dict[str, Any] = found if isinstance(found, dict) else {}
        group = str(doc.get("apiVersion", "v1")).rpartition("/")[0]
        if self.namespace is None or meta.get("namespace") or not is_namespaced(group, str(doc.get("kind"))):
            return doc
        return {**doc, "metadata": {**meta, "namespace": self.namespace}}


def token(doc: dict[str, Any]) -> str:
    """``kubernetes:<group>/<version>:<Kind>``; the core group is spelled ``core``."""
    api_version = str(doc.get("apiVersion", "v1"))
    group, _, version = api_version.rpartition("/")
    return f"kubernetes:{group or 'core'}/{version}:{doc.get('kind', '')}"


def stacks() -> Iterator[CorpusStack]:
    """Every corpus stack, folders first grouped as the upstream presents them, sorted by id."""
    grouped: dict[str, list[Path]] = {}
    for path in sorted(CORPUS.rglob("*.yaml")):
        relative = path.relative_to(CORPUS).as_posix()
        folder = next((f for f in EXAMPLE_FOLDERS if relative.startswith(f + "/")), None)
        grouped.setdefault(folder or relative, []).append(path)
    for key in sorted(grouped):
        yield CorpusStack(key, tuple(grouped[key]))


# Folders of corpus 2 whose files are alternatives, one example each (OCI's NCCL tests: one
# MPIJob + queue per bare-metal shape, all named nccl-test), not one set.
ONE_EXAMPLE_PER_FILE = ("oci-hpc-oke/61d210acc37f/manifests/nccl-tests/kueue",)
# Sets their upstream applies in a namespace the files do not name (kubectl apply -n).
APPLIED_IN_NAMESPACE = {
    # cloud.google.com/kubernetes-engine/docs/tutorials/mixed-workloads: "kubectl apply
    # --filename=- --namespace=llm" for fine-tune-l4.yaml; the serving Deployment likewise.
    "k8s-engine-samples/2b5036514162/ai-ml/mix-train-and-inference/workloads": "llm",
}


def folder_stacks(root: Path = CORPUS2) -> Iterator[CorpusStack]:
    """One stack per folder of ``root`` (its YAML files, sorted), sorted by id; a file of an
    :data:`ONE_EXAMPLE_PER_FILE` folder is a stack of its own."""
    grouped: dict[str, list[Path]] = {}
    for path in sorted(root.rglob("*.yaml")):
        folder = path.parent.relative_to(root).as_posix()
        key = path.relative_to(root).as_posix() if folder in ONE_EXAMPLE_PER_FILE else folder
        grouped.setdefault(key, []).append(path)
    for key in sorted(grouped):
        yield CorpusStack(key, tuple(grouped[key]), APPLIED_IN_NAMESPACE.get(key))


def check_published(
    diagnostics: list[Any],
    set_id: str,
    wrong: dict[str, tuple[str, str]],
    known_false_alarms: dict[str, tuple[str, str]] | None = None,
) -> None:
    """A published set's analysis: no crash or internal error; exactly the rules in ``wrong`` for a
    set wrong as published; at most the listed rules for a known false alarm; else no mandatory
    finding.  ``diagnostics`` are ``preview.analyzer.Diagnostic``s."""
    assert not [d.message for d in diagnostics if "internal error" in d.message or "Traceback" in d.message]
    mandatory = sorted({d.policy_name for d in diagnostics if d.mandatory})
    if set_id in wrong:
        rules, why = wrong[set_id]
        assert mandatory == sorted(rules.split()), f"{set_id} should be caught: {why}"
    elif known_false_alarms and set_id in known_false_alarms:
        assert set(mandatory) <= set(known_false_alarms[set_id][0].split())
    else:
        assert mandatory == [], "\n".join(d.message for d in diagnostics if d.mandatory)
