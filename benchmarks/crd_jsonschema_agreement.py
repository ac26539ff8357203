"""Would ``jsonschema`` (pinned 4.26.0) with a thin adapter give the pack's CRD verdicts?

Issue 18 asks to prefer a kept library over hand-written validation where it can do the work, and
to measure that it agrees.  This script builds that adapter -- the CRD's openAPIV3Schema turned
into a Draft 7 schema: ``nullable`` as a null type, ``x-kubernetes-int-or-string`` as
integer-or-string, strict ``additionalProperties: false`` where the API server prunes
(not under ``x-kubernetes-preserve-unknown-fields``, not inside anyOf/allOf/oneOf/not),
``x-kubernetes-embedded-resource`` allowing apiVersion/kind/metadata, ``list-type: set`` as
``uniqueItems``, list-map keys and CEL rules as custom keywords running the pack's own
``NodeRules``, display markers accepted for any type -- and compares its valid/invalid verdict
with :class:`gpu_batch_policy.facts.schema.crd.CrdCatalog` on every custom resource of
``../shared/corpus/upstream`` and ``../shared/corpus2/upstream`` (the pinned charts' CRDs), as
published and with two single mutations each (an undeclared ``spec`` field; the first string
leaf of ``spec`` turned into a number).  ObjectMeta is left to the same hand-written check on both
sides, since a CRD schema leaves ``metadata`` open.

Run from the repository root:  python -m benchmarks.crd_jsonschema_agreement
"""

from __future__ import annotations

import copy
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # no stubs pinned
import yaml
from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped]

import preview  # noqa: F401  # makes the pack importable as gpu_batch_policy

# isort: split
from gpu_batch_policy.facts.schema.cel import NodeRules, Verdict
from gpu_batch_policy.facts.schema.crd import CrdCatalog, Outcome, _compile_pattern
from gpu_batch_policy.facts.schema.markers import MARKERS
from gpu_batch_policy.facts.schema.pinned import pinned_catalog

from tests.policies.corpus import CORPUS, CORPUS2

_COPIED = (
    "enum",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
)


def adapt(node: Mapping[str, Any], strict: bool = True) -> dict[str, Any]:
    """The Draft 7 form of one structural-schema node (see the module docstring)."""
    out: dict[str, Any] = {k: node[k] for k in _COPIED if k in node}
    for bound, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        # OpenAPI v3.0 spells an exclusive bound as a boolean beside it; Draft 7 as the bound.
        if isinstance(node.get(exclusive), bool):
            out.pop(exclusive)
            if node[exclusive] and bound in node:
                out[exclusive] = out.pop(bound)
    if isinstance(node.get("pattern"), str) and (pattern := _compile_pattern(node["pattern"])) is not None:
        out["pattern"] = pattern.pattern  # Go RE2 made Python's, as the hand-written walk does
    if node.get("x-kubernetes-int-or-string"):
        out["type"] = ["integer", "string"]
    elif isinstance(node.get("type"), str):
        out["type"] = [node["type"], "null"] if node.get("nullable") else node["type"]
    props = node.get("properties") or {}
    if props:
        out["properties"] = {key: adapt(sub, strict) for key, sub in props.items()}
    if node.get("required"):
        out["required"] = [r for r in node["required"] if "default" not in props.get(r, {})]
    additional = node.get("additionalProperties")
    if isinstance(additional, Mapping):
        out["additionalProperties"] = adapt(additional, strict)
    elif isinstance(additional, bool):
        out["additionalProperties"] = additional
    elif strict and not node.get("x-kubernetes-preserve-unknown-fields") and node.get("type") == "object":
        allowed = dict(out.get("properties", {}))
        if node.get("x-kubernetes-embedded-resource"):
            allowed.update({"apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {}})
        out["properties"] = allowed
        out["additionalProperties"] = False
    if isinstance(node.get("items"), Mapping):
        out["items"] = adapt(node["items"], strict)
    for keyword in ("allOf", "anyOf", "oneOf"):
        if isinstance(node.get(keyword), list) and not (
            keyword == "anyOf" and node.get("x-kubernetes-int-or-string")
        ):
            out[keyword] = [adapt(sub, False) for sub in node[keyword]]
    if isinstance(node.get("not"), Mapping):
        out["not"] = adapt(node["not"], False)
    if node.get("x-kubernetes-list-type") == "set":
        out["uniqueItems"] = True
    if node.get("x-kubernetes-list-type") == "map" and node.get("x-kubernetes-list-map-keys"):
        out["x-list-map-keys"] = list(node["x-kubernetes-list-map-keys"])
    rules = [r for r in node.get("x-kubernetes-validations") or () if isinstance(r, Mapping)]
    if rules:
        out["x-cel"] = NodeRules(rules, node)
    return out


def _marker(value: Any) -> bool:
    return isinstance(value, str) and value in MARKERS


def _skip_markers(check: Any) -> Any:
    def keyword(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
        if not _marker(instance):
            yield from check(validator, value, instance, schema)

    return keyword


def _cel(_validator: Any, rules: NodeRules, instance: Any, _schema: Any) -> Iterator[ValidationError]:
    for result in rules.run(instance):
        if result.verdict is Verdict.FAILED:
            yield ValidationError(result.message)


def _map_keys(_validator: Any, keys: list[str], instance: Any, _schema: Any) -> Iterator[ValidationError]:
    if not isinstance(instance, list):
        return
    seen: set[str] = set()
    for item in instance:
        if isinstance(item, Mapping) and all(item.get(k) is not None for k in keys):
            key = repr([item.get(k) for k in keys])
            if key in seen:
                yield ValidationError(f"duplicate entry with keys {key}")
            seen.add(key)


def _types() -> Any:
    base = jsonschema.Draft7Validator.TYPE_CHECKER

    def accepting_markers(name: str) -> Any:
        inner = base._type_checkers[name]

        def check(checker: Any, instance: Any) -> bool:
            if name == "integer" and isinstance(instance, float) and instance.is_integer():
                return True
            return _marker(instance) or bool(inner(checker, instance))

        return check

    return base.redefine_many({name: accepting_markers(name) for name in base._type_checkers})


def _validator_class() -> Any:
    draft = jsonschema.Draft7Validator
    keywords = dict(draft.VALIDATORS)
    for name in ("enum", "pattern", "minLength", "maxLength", "minimum", "maximum", "multipleOf"):
        keywords[name] = _skip_markers(keywords[name])
    keywords["x-cel"] = _cel
    keywords["x-list-map-keys"] = _map_keys
    return jsonschema.validators.create(
        meta_schema=draft.META_SCHEMA, validators=keywords, type_checker=_types(), version="crd-adapter"
    )


_CLASS = _validator_class()
_COMPILED: dict[tuple[str, str, str], Any] = {}


def jsonschema_invalid(catalog: CrdCatalog, obj: Mapping[str, Any], metadata_invalid: bool) -> bool | None:
    """Whether the adapted schema rejects ``obj`` (or its ObjectMeta is invalid, which both sides
    judge with the same hand-written check); None when no served CRD version applies."""
    group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
    crd = catalog.crd(group, str(obj.get("kind", "")))
    if crd is None or version not in crd.versions or not crd.versions[version].served:
        return None
    key = (group, version, crd.kind)
    if key not in _COMPILED:
        root = adapt(crd.versions[version].schema)
        root.setdefault("properties", {}).update({"apiVersion": {}, "kind": {}, "metadata": {}})
        _COMPILED[key] = _CLASS(root)
    return metadata_invalid or any(True for _ in _COMPILED[key].iter_errors(dict(obj)))


def custom_resources(catalog: CrdCatalog) -> Iterator[tuple[str, dict[str, Any]]]:
    for root in (CORPUS, CORPUS2):
        for path in sorted(root.rglob("*.yaml")):
            for doc in yaml.safe_load_all(path.read_text()):
                if not isinstance(doc, dict) or "/" not in str(doc.get("apiVersion", "")):
                    continue
                group = str(doc["apiVersion"]).rpartition("/")[0]
                if catalog.crd(group, str(doc.get("kind", ""))) is not None:
                    yield f"{root.parent.name}/{path.relative_to(root)}", doc


def _first_string_leaf(value: Any, path: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
    if isinstance(value, str):
        return path
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = _first_string_leaf(item, (*path, key))
        if found is not None:
            return found
    return None


def variants(doc: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    yield "as published", doc
    if isinstance(doc.get("spec"), dict):
        extra = copy.deepcopy(doc)
        extra["spec"]["notAField"] = 1
        yield "undeclared field", extra
        leaf = _first_string_leaf(doc["spec"])
        if leaf:
            changed = copy.deepcopy(doc)
            node: Any = changed["spec"]
            for key in leaf[:-1]:
                node = node[key]
            node[leaf[-1]] = 12345
            yield "string leaf as number", changed


def main() -> None:
    catalog = pinned_catalog()
    counts: Counter[tuple[str, str]] = Counter()
    disagreements: list[str] = []
    timings = {"hand-written": 0.0, "jsonschema": 0.0}
    for where, doc in custom_resources(catalog):
        for label, obj in variants(doc):
            started = time.perf_counter()
            result = catalog.validate(obj)
            timings["hand-written"] += time.perf_counter() - started
            if result.unserved_version:
                continue
            ours = result.outcome is Outcome.INVALID
            started = time.perf_counter()
            metadata = any(v.path.startswith("metadata") for v in result.violations)
            theirs = jsonschema_invalid(catalog, obj, metadata)
            timings["jsonschema"] += time.perf_counter() - started
            if theirs is None:
                continue
            counts[(label, "agree" if ours == theirs else "disagree")] += 1
            counts[(label, "invalid")] += ours
            if ours != theirs:
                disagreements.append(
                    f"{where} [{label}] {obj.get('kind')}: hand-written {'invalid' if ours else 'valid'}, "
                    f"jsonschema {'invalid' if theirs else 'valid'}"
                    + (f" ({result.violations[0]})" if result.violations else "")
                )
    total = sum(n for (_, verdict), n in counts.items() if verdict != "invalid")
    agree = sum(n for (_, verdict), n in counts.items() if verdict == "agree")
    print(f"custom resources x variants compared: {total}; same verdict: {agree}; different: {total - agree}")
    for label in ("as published", "undeclared field", "string leaf as number"):
        print(
            f"  {label:22} agree {counts[(label, 'agree')]:4}  disagree {counts[(label, 'disagree')]:4}  "
            f"(invalid by the pack: {counts[(label, 'invalid')]})"
        )
    print(
        f"time: hand-written {timings['hand-written']:.2f} s, jsonschema adapter {timings['jsonschema']:.2f} s"
    )
    for line in disagreements[:40]:
        print("  " + line)


if __name__ == "__main__":
    main()
