"""Kubernetes LabelSelector evaluation (matchLabels + matchExpressions), preview-aware.

Semantics from apimachinery ``metav1.LabelSelectorAsSelector``: ``{}`` matches everything;
``In``/``NotIn``/``Exists``/``DoesNotExist`` on each expression; all terms are ANDed.
Returns ``None`` when a label the selector needs is not known (a namespace the stack does not
declare carries labels the pack cannot see, except ``kubernetes.io/metadata.name``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..primitives.values import Unknown

if TYPE_CHECKING:
    from .model import StackModel

NAME_LABEL = "kubernetes.io/metadata.name"
CORE_GROUP = ""
NAMESPACE_PATCH = "NamespacePatch"  # pulumi-kubernetes token kubernetes:core/v1:NamespacePatch


def selector_matches(
    selector: Mapping[str, Any], labels: Mapping[str, str | Unknown], *, complete: bool
) -> bool | None:
    """Evaluate ``selector`` on ``labels``; ``complete`` says whether ``labels`` is the whole set.

    With an incomplete label set an absent label is "unknown", so the answer may be ``None``.
    """

    def get(key: str) -> str | Unknown | None:
        if key in labels:
            return labels[key]
        return None if complete else Unknown(f"labels.{key}")

    undecided = False
    match_labels = selector.get("matchLabels")
    for key, want in match_labels.items() if isinstance(match_labels, Mapping) else []:
        have = get(str(key))
        if isinstance(have, Unknown) or isinstance(want, Unknown):
            undecided = True
        elif have != want:
            return False
    expressions = selector.get("matchExpressions")
    for expr in expressions if isinstance(expressions, list) else []:
        if not isinstance(expr, Mapping):
            continue
        key = expr.get("key")
        op = expr.get("operator")
        values = expr.get("values")
        values_list = [v for v in values if isinstance(v, str)] if isinstance(values, list) else []
        if not isinstance(key, str) or not isinstance(op, str):
            undecided = True
            continue
        have = get(key)
        if isinstance(have, Unknown):
            undecided = True
            continue
        result: bool
        if op == "In":
            result = have is not None and have in values_list
        elif op == "NotIn":
            result = have is None or have not in values_list
        elif op == "Exists":
            result = have is not None
        elif op == "DoesNotExist":
            result = have is None
        else:
            undecided = True
            continue
        if not result:
            return False
    return None if undecided else True


def namespace_labels(model: StackModel, name: str) -> tuple[dict[str, Any], bool]:
    """The labels of namespace ``name`` and whether they are all known: a declared Namespace's
    labels, else only ``kubernetes.io/metadata.name``, which the API server sets on every one.

    Indexed once per model: rules ask this for every workload and every Role, so a scan per call
    would make the pack quadratic in teams (``tests/policies/test_pack_scaling.py``)."""

    def build() -> dict[str, tuple[dict[str, Any], bool]]:
        # A NamespacePatch (pulumi-kubernetes, server-side apply onto a namespace that exists)
        # declares some labels of a namespace the stack does not own: known, but not all of them.
        found: dict[str, tuple[dict[str, Any], bool]] = {
            patch.name: ({**patch.labels, NAME_LABEL: patch.name}, False)
            for patch in model.kube_objects(CORE_GROUP, NAMESPACE_PATCH)
        }
        found.update(
            (ns.obj.name, ({**ns.labels, NAME_LABEL: ns.obj.name}, ns.obj.labels_known))
            for ns in model.namespaces()
        )
        return found

    found = model.memo("namespace_labels_by_name", build).get(name)
    return found if found is not None else ({NAME_LABEL: name}, False)
