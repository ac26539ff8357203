"""Which input changes make the engine replace a resource: every input path of every declared
type classified as *replace*, *update* or *replace-if* (a provider condition), from the
providers' own facts in :mod:`preview.replacement_facts`.

Why: on `pulumi up` a changed input that the provider marks ForceNew deletes the resource and
creates it again.  For a cluster that is everything in it; for a node pool every node (and every
operator on the system pool); for a protected resource the engine refuses, so the update fails.
A reviewer needs to see that in the pull request, before anything runs.

* GCP types (``gcp.json``): derived from terraform-provider-google-beta's schema by
  :mod:`preview.replacement_facts.derive`, one entry per input path in wire (camelCase) form,
  each naming its Terraform attribute.  terraform-plugin-sdk decides per attribute
  (``helper/schema/schema.go`` ``schemaMap.diff``): a changed ForceNew value replaces; a block's
  own flag counts only when the block appears, disappears or changes its number of elements; a
  map or a list of values is one value.  ``replace-if`` entries are the provider's CustomizeDiff
  conditions (:data:`CONDITIONS`).
* Kubernetes objects (``kubernetes.json``): pulumi-kubernetes replaces on ``metadata.name`` /
  ``metadata.namespace`` and on its per-kind table (``provider/pkg/provider/diff.go``
  ``forceNewProperties``: a RoleBinding's ``roleRef``, a Job's ``template``, a Secret's data ...);
  every other path of an object is an update (the table is the provider's whole rule).  A Helm
  Release replaces on ``name``/``namespace`` (``helm_release.go`` ``Diff``); a Kubernetes provider
  on ``kubeconfig``/``context``/``cluster`` (``provider.go`` ``DiffConfig``).
* A custom resource whose CRD refuses an update with a transition rule (:func:`immutable_changes`,
  the pack's CEL engine) must be deleted and created again.
* A readiness gate (``pulumi-python:dynamic:Resource``) is updated in place: its provider has no
  ``diff`` of its own, and the SDK's default reports no replacement (pulumi ``dynamic.py``
  ``ResourceProvider.diff``).

A path the facts do not cover is *unclassified* (:func:`unclassified_paths`); the repo's stacks
have none (``tests/test_replacement_table.py``).  A path named in ``ignoreChanges`` never
replaces: the engine keeps the old value.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final, Literal

NODE_POOL: Final = "gcp:container/nodePool:NodePool"
CLUSTER: Final = "gcp:container/cluster:Cluster"
HELM_RELEASE: Final = "kubernetes:helm.sh/v3:Release"
CRD: Final = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
K8S_PROVIDER: Final = "pulumi:providers:kubernetes"
DYNAMIC: Final = "pulumi-python:dynamic:Resource"
FACTS: Final = Path(__file__).resolve().parent / "replacement_facts"

Action = Literal["replace", "update", "replace-if"]
_ABSENT: Final = object()


@dataclass(frozen=True)
class Fact:
    """How the provider treats a change of one input path, and where that comes from."""

    action: Action
    source: str
    kind: str = "value"  # value | block | blocks | map | list
    condition: str = ""


@cache
def gcp_facts() -> Mapping[str, Mapping[str, Fact]]:
    """{type token: {wire path: Fact}} from ``gcp.json``."""
    document = json.loads((FACTS / "gcp.json").read_text(encoding="utf-8"))
    tag = f"{document['source']['repository']}@{document['source']['tag']}"
    out: dict[str, dict[str, Fact]] = {}
    for token, facts in document["types"].items():
        files = ", ".join(facts["files"])
        out[token] = {
            path: Fact(
                entry["action"],
                f"{tag} {files}: {facts['terraform']}.{entry['tf']}",
                entry["kind"],
                entry.get("condition", ""),
            )
            for path, entry in facts["paths"].items()
        }
    return out


@cache
def kubernetes_facts() -> Mapping[str, Any]:
    loaded: Mapping[str, Any] = json.loads((FACTS / "kubernetes.json").read_text(encoding="utf-8"))
    return loaded


def kubernetes_replace_paths(type_token: str, inputs: Mapping[str, Any]) -> tuple[str, ...]:
    """The paths pulumi-kubernetes replaces on for this type (and object, for Secret/ConfigMap)."""
    facts = kubernetes_facts()
    if type_token == HELM_RELEASE:
        return tuple(facts["helmRelease"])
    if type_token == K8S_PROVIDER:
        return tuple(facts["provider"])
    _, group_version, kind = type_token.split(":", 2)
    paths = list(facts["identity"])
    if group_version == "core/v1" and kind == "Secret":
        return (*paths, *facts["secret"])
    if group_version == "core/v1" and kind == "ConfigMap" and inputs.get("immutable") is True:
        return (*paths, *facts["configMapImmutable"])
    return (*paths, *facts["kinds"].get(group_version, {}).get(kind, ()))


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(f"{prefix}.")


def classify(type_token: str, path: str, inputs: Mapping[str, Any] | None = None) -> Fact | None:
    """How a change at ``path`` (wire form, list indices left out) is applied; None: unknown."""
    if type_token.startswith("kubernetes:") or type_token == K8S_PROVIDER:
        source = kubernetes_facts()["source"]["objects"]
        replaced = kubernetes_replace_paths(type_token, inputs or {})
        if any(_under(path, p) for p in replaced):
            return Fact("replace", f"pulumi-kubernetes {source}")
        return Fact("update", f"pulumi-kubernetes {source} (not listed: updated in place)")
    if type_token == DYNAMIC:
        return Fact("update", "pulumi sdk/python/lib/pulumi/dynamic/dynamic.py ResourceProvider.diff")
    facts = gcp_facts().get(type_token)
    if facts is None:
        return None
    if path in facts:
        return facts[path]
    steps = path.split(".")
    for end in range(len(steps) - 1, 0, -1):  # a key inside a map, an element of a list
        fact = facts.get(".".join(steps[:end]))
        if fact is not None and fact.kind in ("map", "list"):
            return fact
    return None


def input_paths(inputs: Mapping[str, Any], prefix: str = "") -> Iterator[str]:
    """Every path in wire inputs: each key of each object, through lists (no index)."""
    for key, value in inputs.items():
        path = f"{prefix}.{key}" if prefix else key
        yield path
        for element in value if isinstance(value, list) else [value]:
            if isinstance(element, Mapping):
                yield from input_paths(element, path)


def unclassified_paths(type_token: str, inputs: Mapping[str, Any]) -> list[str]:
    """The input paths of a resource that the facts do not classify (must be none)."""
    return sorted({p for p in input_paths(inputs) if classify(type_token, p, inputs) is None})


def _values(inputs: Any, steps: list[str]) -> list[Any]:
    """The values at ``steps``, through lists; absent where a step is missing."""
    if not steps:
        return [inputs]
    if isinstance(inputs, list):
        return [v for element in inputs for v in _values(element, steps)]
    if not isinstance(inputs, Mapping) or steps[0] not in inputs:
        return [_ABSENT]
    return _values(inputs[steps[0]], steps[1:])


def _present(values: list[Any]) -> list[bool]:
    return [v is not _ABSENT and v is not None for v in values]


def _count(value: Any) -> int:
    return len(value) if isinstance(value, list) else int(value is not _ABSENT and value is not None)


def _condition_met(condition: str, old: Any, new: Any, new_inputs: Mapping[str, Any]) -> bool:
    """The provider's CustomizeDiff conditions (cited in replacement_facts/derive.py CONDITIONS)."""
    if condition == "disabled":
        return old is True and new is not True
    if condition == "element-removed":
        return bool(set(map(str, old if isinstance(old, list) else [])) - set(map(str, new or [])))
    if condition == "autopilot":
        return new_inputs.get("enableAutopilot") is True
    if condition == "cidr-not-expanded":
        try:
            before, after = ipaddress.ip_network(str(old)), ipaddress.ip_network(str(new))
        except ValueError:
            return True
        return not (before.version == after.version and before.subnet_of(after))  # type: ignore[arg-type]
    return True


def _ignored(path: str, ignore_changes: Iterable[str]) -> bool:
    return any(_under(path, ignored) for ignored in ignore_changes)


def replacing_paths(
    type_token: str, old: Mapping[str, Any], new: Mapping[str, Any], ignore_changes: Iterable[str] = ()
) -> list[str]:
    """The input paths whose change makes the provider replace the resource (``old`` -> ``new``
    wire inputs), leaving out those ``ignoreChanges`` keeps; empty: updated in place."""
    ignored = tuple(ignore_changes)
    if type_token.startswith("kubernetes:") or type_token == K8S_PROVIDER:
        candidates = {p: Fact("replace", "") for p in kubernetes_replace_paths(type_token, new)}
    else:
        candidates = dict(gcp_facts().get(type_token, {}))
    out: list[str] = []
    for path, fact in sorted(candidates.items()):
        if fact.action == "update" or _ignored(path, ignored):
            continue
        steps = path.split(".")
        before, after = _values(old, steps), _values(new, steps)
        if fact.kind in ("block", "blocks"):
            changed = [_count(v) for v in before] != [_count(v) for v in after]
        elif fact.action == "replace-if":
            changed = any(
                a != b and _condition_met(fact.condition, None if a is _ABSENT else a, b, new)
                for a, b in zip(before, after, strict=False)
            ) or len(before) != len(after)
        else:
            changed = before != after
        if changed:
            out.append(path)
    return out


def facts_for(type_token: str, paths: Iterable[str]) -> dict[str, Fact]:
    """The fact behind each path (for the report's citations)."""
    return {p: f for p in paths if (f := classify(type_token, p)) is not None}


def immutable_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The fields of a custom resource whose change its CRD's transition rules refuse (Kueue 0.19's
    Topology levels, a TAS flavor's node labels, a LocalQueue's ``spec.clusterQueue``), as
    ``path: message``; empty for built-in kinds, objects of a kind no pinned CRD defines, or
    updates the rules allow.  pulumi-kubernetes does not replace on these (they are not in its
    table): it updates, and the API server refuses; the object must be deleted and created again."""
    from gpu_batch_policy.facts.schema.transition import refused_updates  # the pack's CEL engine

    from preview.crd_validation import get_catalog

    api_version, kind = new.get("apiVersion"), new.get("kind")
    if not isinstance(api_version, str) or "/" not in api_version or not isinstance(kind, str):
        return []
    if old.get("apiVersion") != api_version:
        return []
    group, version = api_version.split("/", 1)
    crd = get_catalog().crd(group, kind)
    entry = crd.versions.get(version) if crd is not None else None
    if entry is None:
        return []
    return refused_updates(entry.schema, old, new)
