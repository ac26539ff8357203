"""The objects the pack and the API server both judge (issue 41, part 1): every object of the
three upstream corpora and of the six repo stacks, and seeded one-field mutations of them.

Sources, read in place (never copied):

* corpora 1-3 (``../shared/corpus``, ``corpus2``, ``corpus3``), one set per file or folder as
  ``tests/policies/corpus.py`` groups them, each namespaced object placed in its set's
  namespace (``kubectl apply -n``) or ``default``;
* the six stacks' objects per cluster as ``tests/live/stacks.py`` renders them (the program under
  the preview's mocks plus its Helm releases), with the stand-ins of values unknown until deploy
  (``stacks.stand_ins``) so that both judges see the same concrete object.  A pulumi-kubernetes
  ``<Kind>Patch`` merges into an object the cluster holds: it is no create, so it is excluded.

Mutations (:data:`MUTATIONS`) change one field.  The ones meant to break an object break what the
schema, CEL or the API server's Go validation decides (a wrong type, a missing required field, a
value outside an enum, a Kueue CEL rule, a name that is too long or not a DNS name, a negative
request); the others stay valid (a label, an annotation, another name, another quantity).  What
a mutation was meant to do is only its label: the server's answer is the judgement.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import preview  # noqa: F401  (puts policies/ on the path, as the analyzer host has it)
from tests.policies.corpus import CORPUS2, CorpusStack, folder_stacks, stacks

STACKS = ("dev", "prod", "kai", "skypilot", "gpudirect", "multiregion")
CORPUS3 = CORPUS2.parents[1] / "corpus3" / "upstream"
LABEL = "differential.gpu-batch.dev/mutation"
# Enumerated fields of built-in kinds (the API server's Go validation refuses another value;
# kubernetes v1.37.2 pkg/apis/core/validation/validation.go validateRestartPolicy,
# validatePullPolicy, validateDNSPolicy, validateContainerPorts, ValidateService ...).
BUILTIN_ENUMS = frozenset(
    {
        "restartPolicy",
        "imagePullPolicy",
        "dnsPolicy",
        "protocol",
        "terminationMessagePolicy",
        "preemptionPolicy",
        "completionMode",
        "podManagementPolicy",
        "concurrencyPolicy",
        "externalTrafficPolicy",
        "sessionAffinity",
        "failurePolicy",
        "sideEffects",
        "matchPolicy",
    }
)
# Required fields of built-in kinds the schema or the Go validation insists on, by the key that
# holds them (a list item's or an object's).
BUILTIN_REQUIRED = {
    "containers": ("name", "image"),
    "initContainers": ("name", "image"),
    "ports": ("port", "containerPort"),
    "rules": ("verbs",),
    "subjects": ("kind", "name"),
    "roleRef": ("kind", "name", "apiGroup"),
    "webhooks": ("name", "sideEffects", "admissionReviewVersions"),
}


@dataclass(frozen=True)
class Case:
    """One object to judge: where it comes from, which mutation (``none``: as published)."""

    id: str
    source: str  # corpus1, corpus2, corpus3, stack:<name>
    set: str
    mutation: str
    intent: str  # as-published, valid, invalid
    doc: dict[str, Any]

    @property
    def ref(self) -> str:
        meta = self.doc.get("metadata") or {}
        ns = meta.get("namespace")
        return (
            f"{self.doc.get('kind')}/{ns + '/' if ns else ''}{meta.get('name') or meta.get('generateName')}"
        )


@dataclass(frozen=True)
class Excluded:
    source: str
    ref: str
    reason: str


def _corpus_sets() -> Iterator[tuple[str, CorpusStack]]:
    for stack in stacks():
        yield "corpus1", stack
    for stack in folder_stacks(CORPUS2):
        yield "corpus2", stack
    for stack in folder_stacks(CORPUS3):
        yield "corpus3", stack


def published(stack_names: tuple[str, ...] = STACKS) -> tuple[list[Case], list[Excluded]]:
    """Every object of the corpora and of ``stack_names``, unmutated; patches excluded."""
    from tests.live.stacks import stack_clusters, stand_ins

    cases: list[Case] = []
    excluded: list[Excluded] = []
    for source, stack in _corpus_sets():
        for i, doc in enumerate(stack.documents()):
            placed = stack._placed(doc)  # the set's namespace, as its upstream applies it
            cases.append(Case(f"{source}/{stack.id}#{i}", source, stack.id, "none", "as-published", placed))
    for name in stack_names:
        for group in stack_clusters(name):
            objects = [(o, i in group.patches) for i, o in enumerate(group.declared)]
            for release in group.releases:
                objects += [(_in_namespace(o, release.namespace), False) for o in release.objects]
            for i, (obj, patch) in enumerate(objects):
                doc, _ = stand_ins(obj)
                source = f"stack:{name}"
                if patch:
                    excluded.append(
                        Excluded(
                            source, Case("", source, "", "", "", doc).ref, "patch: merges into an object"
                        )
                    )
                    continue
                cases.append(
                    Case(f"{source}/{group.title}#{i}", source, group.title, "none", "as-published", doc)
                )
    return cases, excluded


def _in_namespace(obj: dict[str, Any], namespace: str) -> dict[str, Any]:
    """A release's object as Helm sends it: namespaced kinds without one land in the release's
    namespace (the server says which kinds are namespaced; here every kind that names none gets
    it, and the judge drops it again for cluster-scoped kinds)."""
    meta = obj.get("metadata") or {}
    if meta.get("namespace") or not namespace:
        return obj
    return {**obj, "metadata": {**meta, "namespace": namespace}}


# -- mutations --------------------------------------------------------------------------------

Mutator = Callable[[dict[str, Any], random.Random], str | None]  # changes doc in place; what, or None


def _spec_leaves(doc: dict[str, Any]) -> list[tuple[list[Any], Any]]:
    """(path, value) of every scalar below the object's body (not apiVersion, kind, metadata)."""
    out: list[tuple[list[Any], Any]] = []
    stack: list[tuple[list[Any], Any]] = [
        ([k], v) for k, v in doc.items() if k not in ("apiVersion", "kind", "metadata", "status")
    ]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            stack.extend(([*path, k], v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend(([*path, i], v) for i, v in enumerate(value))
        elif value is not None:
            out.append((path, value))
    out.sort(key=lambda pv: [str(p) for p in pv[0]])
    return out


def _set(doc: dict[str, Any], path: list[Any], value: Any) -> None:
    cur: Any = doc
    for key in path[:-1]:
        cur = cur[key]
    cur[path[-1]] = value


def _shown(path: list[Any]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def _replace_leaf(
    doc: dict[str, Any], rng: random.Random, leaves: list[tuple[list[Any], Any]], new: Callable[[Any], Any]
) -> str | None:
    """One of ``leaves`` (seeded) set to ``new(its value)``; what changed, or None without leaves."""
    if not leaves:
        return None
    path, value = rng.choice(leaves)
    replacement = new(value)
    _set(doc, path, replacement)
    return f"{_shown(path)}: {value!r} -> {replacement!r}"


def _wrong_type(doc: dict[str, Any], rng: random.Random) -> str | None:
    leaves = [(p, v) for p, v in _spec_leaves(doc) if isinstance(v, (str, bool, int, float))]
    return _replace_leaf(doc, rng, leaves, _wrong_value)


def _wrong_value(value: Any) -> Any:
    if isinstance(value, str):
        return {"wrong": "type"}
    return "yes" if isinstance(value, bool) else "not-a-number"


def _name_too_long(doc: dict[str, Any], rng: random.Random) -> str | None:
    meta = doc.setdefault("metadata", {})
    base = str(meta.get("name") or meta.get("generateName") or "x")
    meta.pop("generateName", None)
    meta["name"] = (base + "-" + "x" * 260)[:254]  # over a DNS subdomain's 253 characters
    return "metadata.name: 254 characters"


def _name_not_dns(doc: dict[str, Any], rng: random.Random) -> str | None:
    meta = doc.setdefault("metadata", {})
    meta.pop("generateName", None)
    meta["name"] = f"Not_A_DNS_Name-{rng.randrange(1000)}"
    return f"metadata.name: {meta['name']!r}"


def _negative_request(doc: dict[str, Any], rng: random.Random) -> str | None:
    found = [
        (p, v)
        for p, v in _spec_leaves(doc)
        if len(p) >= 3 and p[-3] == "resources" and p[-2] in ("requests", "limits")
    ]
    return _replace_leaf(doc, rng, found, lambda _: "-1")


def _builtin_enum(doc: dict[str, Any], rng: random.Random) -> str | None:
    found = [(p, v) for p, v in _spec_leaves(doc) if isinstance(p[-1], str) and p[-1] in BUILTIN_ENUMS]
    return _replace_leaf(doc, rng, found, lambda _: "NotAnEnumValue")


def _builtin_required(doc: dict[str, Any], rng: random.Random) -> str | None:
    found: list[tuple[list[Any], str]] = []
    stack: list[tuple[list[Any], Any]] = [([], doc)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                required = BUILTIN_REQUIRED.get(str(key), ())
                items = (
                    [([*path, key, i], x) for i, x in enumerate(item)]
                    if isinstance(item, list)
                    else [([*path, key], item)]
                )
                for item_path, x in items:
                    if isinstance(x, dict):
                        found += [(item_path, r) for r in required if r in x]
                stack.append(([*path, key], item))
        elif isinstance(value, list):
            stack.extend(([*path, i], x) for i, x in enumerate(value))
    found.sort(key=lambda f: ([str(p) for p in f[0]], f[1]))
    return _remove_field(doc, rng, found)


def _remove_field(doc: dict[str, Any], rng: random.Random, found: list[tuple[list[Any], str]]) -> str | None:
    """One of ``found`` (the object at a path, a field of it; seeded) removed; None without any."""
    if not found:
        return None
    path, field = rng.choice(found)
    cur: Any = doc
    for key in path:
        cur = cur[key]
    del cur[field]
    return f"{_shown(path)}.{field}: removed"


def _crd_schema(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The openAPIV3Schema of the object's version in the pinned charts' CRDs (first wins)."""
    group, _, version = str(doc.get("apiVersion", "")).rpartition("/")
    for crd in _crds_by_kind().get((group, str(doc.get("kind"))), []):
        for v in (crd.get("spec") or {}).get("versions") or []:
            if v.get("name") == version:
                schema = (v.get("schema") or {}).get("openAPIV3Schema")
                return schema if isinstance(schema, dict) else None
    return None


_CRDS: dict[tuple[str, str], list[dict[str, Any]]] = {}


def _crds_by_kind() -> dict[tuple[str, str], list[dict[str, Any]]]:
    from gpu_batch_policy.facts.schema.pinned import pinned_crd_documents

    if not _CRDS:
        for _, crd in pinned_crd_documents():
            spec = crd.get("spec") or {}
            _CRDS.setdefault((str(spec.get("group")), str((spec.get("names") or {}).get("kind"))), []).append(
                crd
            )
    return _CRDS


def _schema_walk(doc: dict[str, Any]) -> Iterator[tuple[list[Any], Any, dict[str, Any]]]:
    """(path, value, schema) of every value of ``doc`` its CRD schema describes."""
    schema = _crd_schema(doc)
    if schema is None:
        return
    stack: list[tuple[list[Any], Any, dict[str, Any]]] = [([], doc, schema)]
    while stack:
        path, value, node = stack.pop()
        yield path, value, node
        if isinstance(value, dict):
            props = node.get("properties") or {}
            for key, item in value.items():
                if key in props and (path or key not in ("apiVersion", "kind", "metadata")):
                    stack.append(([*path, key], item, props[key]))
        elif isinstance(value, list) and isinstance(node.get("items"), dict):
            stack.extend(([*path, i], item, node["items"]) for i, item in enumerate(value))


def _crd_enum(doc: dict[str, Any], rng: random.Random) -> str | None:
    found = sorted(
        ((p, v) for p, v, s in _schema_walk(doc) if p and s.get("enum") and isinstance(v, str)),
        key=lambda pv: [str(x) for x in pv[0]],
    )
    return _replace_leaf(doc, rng, found, lambda _: "NotAnEnumValue")


def _crd_required(doc: dict[str, Any], rng: random.Random) -> str | None:
    found = sorted(
        (
            (p, r)
            for p, v, s in _schema_walk(doc)
            if isinstance(v, dict)
            for r in s.get("required") or []
            if r in v and (p or r not in ("apiVersion", "kind", "metadata"))
        ),
        key=lambda pr: ([str(x) for x in pr[0]], pr[1]),
    )
    return _remove_field(doc, rng, found)


def _kueue_cel(doc: dict[str, Any], rng: random.Random) -> str | None:
    """A resource group covering a resource its flavors do not list: Kueue v0.19.2's CRD CEL rule
    "flavors must have the same number of resources as the coveredResources"
    (apis/kueue/v1beta2/clusterqueue_types.go ResourceGroup)."""
    if doc.get("kind") not in ("ClusterQueue", "Cohort") or "kueue.x-k8s.io" not in str(
        doc.get("apiVersion")
    ):
        return None
    groups = (doc.get("spec") or {}).get("resourceGroups")
    if not isinstance(groups, list) or not groups or not isinstance(groups[0], dict):
        return None
    i = rng.randrange(len(groups))
    covered = groups[i].get("coveredResources")
    if not isinstance(covered, list):
        return None
    covered.append("example.com/uncovered")
    return f".spec.resourceGroups[{i}].coveredResources: + 'example.com/uncovered'"


def _label(doc: dict[str, Any], rng: random.Random) -> str | None:
    meta = doc.setdefault("metadata", {})
    labels = meta.get("labels")
    meta["labels"] = {**(labels if isinstance(labels, dict) else {}), LABEL: f"v{rng.randrange(100)}"}
    return f"metadata.labels[{LABEL}]"


def _annotation(doc: dict[str, Any], rng: random.Random) -> str | None:
    meta = doc.setdefault("metadata", {})
    found = meta.get("annotations")
    meta["annotations"] = {**(found if isinstance(found, dict) else {}), LABEL: f"any text {rng.random()}"}
    return f"metadata.annotations[{LABEL}]"


def _renamed(doc: dict[str, Any], rng: random.Random) -> str | None:
    meta = doc.setdefault("metadata", {})
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        return None
    meta["name"] = f"{name[:40].rstrip('-.')}-m{rng.randrange(1000)}"
    return f"metadata.name: {name!r} -> {meta['name']!r}"


def _quantity(doc: dict[str, Any], rng: random.Random) -> str | None:
    found = [
        (p, v) for p, v in _spec_leaves(doc) if len(p) >= 3 and p[-3] == "resources" and p[-2] == "requests"
    ]
    return _replace_leaf(doc, rng, found, lambda _: rng.choice(["1", "250m", "2Gi", "3"]))


INVALID: dict[str, Mutator] = {
    "wrong-type": _wrong_type,
    "name-too-long": _name_too_long,
    "name-not-dns": _name_not_dns,
    "negative-request": _negative_request,
    "builtin-enum": _builtin_enum,
    "builtin-required": _builtin_required,
    "crd-enum": _crd_enum,
    "crd-required": _crd_required,
    "kueue-cel": _kueue_cel,
}
VALID: dict[str, Mutator] = {
    "label": _label,
    "annotation": _annotation,
    "renamed": _renamed,
    "quantity": _quantity,
}
MUTATIONS = {**{k: ("invalid", m) for k, m in INVALID.items()}, **{k: ("valid", m) for k, m in VALID.items()}}


def mutate(case: Case, intent: str, rng: random.Random) -> Case | None:
    """One mutation of ``case`` meant to be ``intent`` (valid or invalid): the first, in a seeded
    order, that applies to it; None when none does."""
    pool = INVALID if intent == "invalid" else VALID
    names = sorted(pool)
    rng.shuffle(names)
    # the schema-driven and CEL mutations are rarer (few objects have enums, one kind the CEL rule):
    # tried first when they apply, so that every family is well represented
    names.sort(key=lambda n: n not in ("kueue-cel", "crd-enum", "builtin-enum") or rng.random() < 0.5)
    for name in names:
        doc = copy.deepcopy(case.doc)
        what = pool[name](doc, rng)
        if what is not None:
            return Case(f"{case.id}~{name}", case.source, case.set, f"{name}: {what}", intent, doc)
    return None


def generate(seed: int, stack_names: tuple[str, ...] = STACKS) -> tuple[list[Case], list[Excluded]]:
    """Every published object, then one invalid and one valid mutation of each (seeded)."""
    cases, excluded = published(stack_names)
    rng = random.Random(seed)
    mutated = [m for c in cases for intent in ("invalid", "valid") if (m := mutate(c, intent, rng))]
    return cases + mutated, excluded


def sample(cases: list[Case], count: int, seed: int) -> list[Case]:
    """``count`` cases drawn with ``seed``, every source and intent represented in turn."""
    rng = random.Random(seed)
    by_key: dict[tuple[str, str], list[Case]] = {}
    for c in cases:
        by_key.setdefault((c.source, c.intent), []).append(c)
    pools = [rng.sample(v, len(v)) for _, v in sorted(by_key.items())]
    out: list[Case] = []
    while len(out) < count and any(pools):
        for pool in pools:
            if pool and len(out) < count:
                out.append(pool.pop())
    return out
