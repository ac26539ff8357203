"""Where the Kueue objects come from: a stack's recorded plan, or a file of Kubernetes YAML.

- ``--stack <s>``: ``build/<s>/plan.json`` as the offline preview wrote it; when it is absent the
  program is run under the SDK mocks (``preview.harness``) instead, without writing anything.
- ``--manifests FILE``: plain multi-document YAML, ``kind: List`` included (``kubectl get -o
  yaml``), or ``build/<s>/manifests.yaml``.

Either way the objects become the policy pack's ``StackModel`` (so v1beta1 and v1beta2 read the
same), and for a stack the largest queued node pool behind each flavor is worked out with the
pack's own pool selection and capacity arithmetic (``gpu_batch_policy.facts.pools``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from preview.project import PROJECT_DIR
from whatif.capacity import Pool
from whatif.errors import WhatIfError
from whatif.pack import StackModel, pools

Plain = tuple[str, Any, str, str]
# (type, props, urn, name, provider reference, URNs it depends on): ``whatif.multikueue.fleet``
Record = tuple[str, Any, str, str, str, tuple[str, ...]]


def type_token(doc: Mapping[str, Any]) -> str:
    """The Pulumi type token the pack's model reads a Kubernetes object by."""
    api_version = str(doc.get("apiVersion", ""))
    group, _, version = api_version.rpartition("/")
    return f"kubernetes:{group or 'core'}/{version}:{doc.get('kind')}"


def _flatten(docs: Iterable[Any]) -> Iterator[dict[str, Any]]:
    for doc in docs:
        if not isinstance(doc, dict):
            continue
        if doc.get("kind") == "List" or (str(doc.get("kind", "")).endswith("List") and "items" in doc):
            yield from _flatten(doc.get("items") or [])
        elif doc.get("apiVersion") and doc.get("kind"):
            yield doc


def manifests_items(text: str, where: str) -> list[Plain]:
    try:
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError as error:
        raise WhatIfError(f"{where}: not valid YAML ({str(error).splitlines()[0]})") from None
    items: list[Plain] = []
    for i, doc in enumerate(_flatten(docs)):
        meta = doc.get("metadata") or {}
        name = str(meta.get("name", f"object-{i}"))
        urn = f"manifest:{doc.get('kind')}/{meta.get('namespace', '')}/{name}"
        items.append((type_token(doc), doc, urn, name))
    return items


def from_manifests(path: Path) -> StackModel:
    try:
        text = path.read_text()
    except OSError as error:
        raise WhatIfError(f"--manifests {path}: cannot read it ({error.strerror})") from None
    return StackModel.from_plain(manifests_items(text, f"--manifests {path}"))


def plan_items(plan: dict[str, Any]) -> list[Plain]:
    return [(r["type"], r.get("inputs") or {}, r["urn"], r["name"]) for r in plan.get("resources", [])]


def plan_records(plan: dict[str, Any]) -> list[Record]:
    """Registrations with their provider and dependencies: which cluster each goes to."""
    return [
        (
            r["type"],
            r.get("inputs") or {},
            r["urn"],
            r["name"],
            str(r.get("provider") or ""),
            tuple(str(d) for d in r.get("dependsOn") or ()),
        )
        for r in plan.get("resources", [])
    ]


def from_stack(
    stack: str, project_dir: Path = PROJECT_DIR, build_dir: Path | None = None, *, fresh: bool = False
) -> StackModel:
    """The recorded plan when there is one (unless ``fresh``), else the program run now."""
    return StackModel.from_plain(r[:4] for r in stack_records(stack, project_dir, build_dir, fresh=fresh))


def stack_records(
    stack: str, project_dir: Path = PROJECT_DIR, build_dir: Path | None = None, *, fresh: bool = False
) -> list[Record]:
    """The stack's registrations with providers and dependencies (see :func:`from_stack`)."""
    plan_path = (build_dir or project_dir / "build") / stack / "plan.json"
    if plan_path.exists() and not fresh:
        try:
            plan = json.loads(plan_path.read_text())
        except json.JSONDecodeError as error:
            raise WhatIfError(f"{plan_path}: not valid JSON ({error.msg}); run the preview again") from None
        return plan_records(plan)
    return _run_program(stack, project_dir)


def _run_program(stack: str, project_dir: Path) -> list[Record]:
    from preview.harness import run_program
    from preview.stack_files import StackFileError, load_stack_files
    from stacks.errors import ConfigError

    try:
        files = load_stack_files(project_dir, stack)
        result = run_program(project_dir, files)
    except StackFileError as error:
        raise WhatIfError(f"stack file error: {error}") from None
    except ConfigError as error:
        raise WhatIfError(str(error).splitlines()[0]) from None
    return [
        (r.type, r.inputs, r.urn, r.name, r.provider or "", tuple(r.dependencies)) for r in result.resources
    ]


def flavor_pools(model: StackModel) -> dict[str, tuple[Pool, ...]]:
    """Per flavor: the node pools of its cluster its node labels select (the pack's
    ``node_pools_near``, ``pools.select``, ``pool_capacity``), with GPUs per node and maximum nodes;
    flavors with any pool unknown are left out."""
    out: dict[str, tuple[Pool, ...]] = {}
    node_pools = model.node_pools()
    if not node_pools:
        return out
    for flavor in model.resource_flavors():
        selection = pools.select(model.node_pools_near(flavor), flavor.node_labels)
        found = []
        for p in selection.possible:
            cap = pools.pool_capacity(model, p)
            if cap.gpus_per_node is None or cap.max_nodes is None:
                break
            found.append(Pool(str(p.name), cap.gpus_per_node, cap.max_nodes))
        else:
            if found:
                out[flavor.name] = tuple(found)
    return out
