"""A CRD's transition rules (CEL that reads ``oldSelf``) run on an update: which changes the API
server refuses.

Why: an update a transition rule refuses can only be made by deleting the object and creating it
again -- a replacement.  Kueue v0.19.2's CRDs make a Topology's ``spec.levels`` immutable
(``kueue.x-k8s.io_topologies.yaml``: ``self == oldSelf``, "field is immutable") and a TAS
ResourceFlavor's ``nodeLabels``, ``tolerations`` and ``topologyName`` immutable once
``topologyName`` is set (``kueue.x-k8s.io_resourceflavors.yaml``, spec-level rules on
``oldSelf.topologyName``).  Those facts are read from the CRD and run here, never written by hand.

Kubernetes runs a transition rule only where the old object has a value at the rule's node
(apiextensions ``ValidationRule``: "transition rules ... only apply when there is an old value").
Object properties are followed; list items are not correlated (Kubernetes correlates only
``x-kubernetes-list-type: map`` items), so a rule under ``items`` is not run -- not judged, never
guessed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

import celpy
from celpy import celtypes
from celpy.adapter import json_to_cel

from .cel import _ENV, with_defaults


@lru_cache(maxsize=4096)  # rule texts: the pinned CRDs' and what a stack's own CRDs bring
def _program(rule: str) -> celpy.Runner | None:
    try:
        return _ENV.program(_ENV.compile(rule))
    except Exception:  # a rule cel-python cannot parse is not judged
        return None


def _nodes(
    schema: Mapping[str, Any], old: Any, new: Any, path: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], Mapping[str, Any], Any, Any]]:
    yield path, schema, old, new
    properties = schema.get("properties")
    if isinstance(properties, Mapping) and isinstance(old, Mapping) and isinstance(new, Mapping):
        for key, child in properties.items():
            if isinstance(child, Mapping) and key in old:
                yield from _nodes(child, old[key], new.get(key), (*path, key))


def refused_updates(schema: Mapping[str, Any], old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """``path: message`` for each transition rule the update from ``old`` to ``new`` fails."""
    refused: list[str] = []
    for path, node, old_value, new_value in _nodes(schema, old, new, ()):
        rules = node.get("x-kubernetes-validations")
        if not isinstance(rules, list) or new_value is None:
            continue
        for rule in rules:
            text = rule.get("rule") if isinstance(rule, Mapping) else None
            if not isinstance(text, str) or "oldSelf" not in text or rule.get("optionalOldSelf"):
                continue
            program = _program(text)
            if program is None:
                continue
            try:
                outcome = program.evaluate(
                    {
                        "self": json_to_cel(with_defaults(new_value, node)),
                        "oldSelf": json_to_cel(with_defaults(old_value, node)),
                    }
                )
            except Exception:  # an evaluation cel-python cannot do is not judged
                continue
            if isinstance(outcome, celtypes.BoolType) and not outcome:
                refused.append(f"{'.'.join(path) or '(object)'}: {rule.get('message') or text}")
    return refused
