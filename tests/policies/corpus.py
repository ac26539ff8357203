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

from preview.records import RecordedResource

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "upstream"
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
        for doc in self.documents():
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
