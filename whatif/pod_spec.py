"""A trace pod set's scheduling constraints: the part of a pod template Kueue's flavor assigner
reads (kubernetes-sigs/kueue v0.19.2 ``pkg/scheduler/flavorassigner/flavorassigner.go``
``checkFlavorForPodSets``: ``tolerations``, ``nodeSelector`` and required node ``affinity``).

They are written on the pod set as in a pod spec (``core/v1`` ``PodSpec``), checked here for shape
(one line per problem: key path, value, what is expected), and judged against each flavor by the
pack's own :func:`gpu_batch_policy.facts.fit.flavor_match.flavor_rejects` (``whatif.flavors``).
"""

from __future__ import annotations

from typing import Any

from whatif.errors import trace_error as _fail
from whatif.errors import trace_mapping

SPEC_KEYS = ("tolerations", "nodeSelector", "affinity")
TOLERATION_KEYS = {"key", "operator", "value", "effect", "tolerationSeconds"}
OPERATORS = ("Equal", "Exists")  # core/v1 TolerationOperator
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")  # core/v1 TaintEffect


def _toleration(raw: Any, path: str) -> None:
    raw = trace_mapping(raw, path, TOLERATION_KEYS, "a toleration mapping (key, operator, value, effect)")
    for k in ("key", "value"):
        if k in raw and not isinstance(raw[k], str):
            raise _fail(f"{path}.{k}", raw[k], "a string")
    operator = raw.get("operator", "Equal")
    if operator not in OPERATORS:
        raise _fail(f"{path}.operator", operator, " or ".join(OPERATORS))
    if operator == "Exists" and raw.get("value"):
        raise _fail(f"{path}.value", raw["value"], "no value with operator Exists")
    if operator == "Equal" and not raw.get("key"):
        raise _fail(f"{path}.key", raw.get("key"), "a key with operator Equal (only Exists may omit it)")
    if "effect" in raw and raw["effect"] not in ("", *EFFECTS):
        raise _fail(f"{path}.effect", raw["effect"], " or ".join(EFFECTS))


def _terms(affinity: dict[str, Any], path: str) -> None:
    node = affinity.get("nodeAffinity")
    if node is None:
        return
    if not isinstance(node, dict):
        raise _fail(f"{path}.nodeAffinity", node, "a mapping")
    required = node.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is None:
        return
    where = f"{path}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    if not isinstance(terms, list) or not terms:
        raise _fail(f"{where}.nodeSelectorTerms", terms, "a non-empty list of node selector terms")
    for i, term in enumerate(terms):
        exprs = term.get("matchExpressions", []) if isinstance(term, dict) else None
        if not isinstance(exprs, list) or not all(
            isinstance(e, dict) and isinstance(e.get("key"), str) and isinstance(e.get("operator"), str)
            for e in exprs
        ):
            raise _fail(
                f"{where}.nodeSelectorTerms[{i}].matchExpressions",
                exprs,
                "a list of {key, operator, values} requirements",
            )


def pod_spec(raw: dict[str, Any], path: str) -> dict[str, Any] | None:
    """The pod set's ``tolerations`` / ``nodeSelector`` / ``affinity``, checked; None when unset."""
    spec = {k: raw[k] for k in SPEC_KEYS if raw.get(k) is not None}
    if not spec:
        return None
    tolerations = spec.get("tolerations", [])
    if not isinstance(tolerations, list):
        raise _fail(f"{path}.tolerations", tolerations, "a list of tolerations")
    for i, tol in enumerate(tolerations):
        _toleration(tol, f"{path}.tolerations[{i}]")
    selector = spec.get("nodeSelector", {})
    if not isinstance(selector, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in selector.items()
    ):
        raise _fail(f"{path}.nodeSelector", selector, "a mapping of label to string value")
    affinity = spec.get("affinity", {})
    if not isinstance(affinity, dict):
        raise _fail(f"{path}.affinity", affinity, "a mapping (nodeAffinity: ...)")
    _terms(affinity, f"{path}.affinity")
    return spec
