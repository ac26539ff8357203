"""Which workloads a declared ValidatingAdmissionPolicy holds to a queue, per namespace.

A policy counts for a (namespace, kind) when, as the API server matches them
(kubernetes/kubernetes v1.34.0 ``staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/matching``
``Matcher.Matches`` and ``.../validating/dispatcher.go``):

* a ``ValidatingAdmissionPolicyBinding`` names it with ``validationActions`` containing ``Deny``,
  without an ``objectSelector`` (which would let a workload opt out), and its
  ``matchResources.namespaceSelector`` (absent or ``{}``: every namespace) matches the namespace;
* the policy's ``matchConstraints.resourceRules`` match the kind's group and resource on CREATE,
  and its own ``namespaceSelector`` matches too;
* its validations (with its variables) read the queue label -- and for KAI's Pods and Jobs also
  ``kai-scheduler``.  The pack cannot prove what a CEL expression decides for every object;
  it only requires that the policy reads what it must (the project's own policies are proven
  with cel-python in tests/test_queue_admission.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..primitives.values import Unknown, dig
from .model import StackModel
from .model.base import KubeObject
from .selectors import NAME_LABEL, selector_matches

ADMISSION_GROUP = "admissionregistration.k8s.io"


@dataclass(frozen=True)
class Kind:
    group: str
    resource: str


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _matches_kind(policy: KubeObject, kind: Kind) -> bool:
    rules = dig(policy.props, "spec", "matchConstraints", "resourceRules")
    for rule in rules if isinstance(rules, list) else []:
        groups, resources = _strings(dig(rule, "apiGroups")), _strings(dig(rule, "resources"))
        operations = _strings(dig(rule, "operations"))
        if (
            (kind.group in groups or "*" in groups)
            and (kind.resource in resources or "*" in resources)
            and ("CREATE" in operations or "*" in operations)
        ):
            return True
    return False


def _cel_text(policy: KubeObject) -> str:
    spec = dig(policy.props, "spec")
    parts: list[str] = []
    for key in ("validations", "variables"):
        items = dig(spec, key)
        for item in items if isinstance(items, list) else []:
            expression = dig(item, "expression")
            if isinstance(expression, str):
                parts.append(expression)
    return "\n".join(parts)


def _selector_ok(selector: Any, labels: Mapping[str, Any], complete: bool) -> bool | None:
    if selector is None:
        return True
    if isinstance(selector, Unknown):
        return None
    if not isinstance(selector, Mapping):
        return False
    return selector_matches(selector, labels, complete=complete)


@dataclass(frozen=True)
class _Bound:
    """A Deny binding with the policy it names, as read once per model."""

    namespace_selector: Any
    policy: KubeObject
    cel: str


@dataclass(frozen=True)
class _Index:
    # Bindings that select exactly one namespace by its name label (what the stack writes), by
    # that name; every other binding; and whether some binding was unknown until apply.
    by_namespace: dict[str, list[_Bound]]
    general: list[_Bound]
    undecided: bool


def _exact_namespace(selector: Any) -> str | None:
    if isinstance(selector, Mapping) and set(selector) == {"matchLabels"}:
        labels = selector["matchLabels"]
        if (
            isinstance(labels, Mapping)
            and set(labels) == {NAME_LABEL}
            and isinstance(labels[NAME_LABEL], str)
        ):
            return str(labels[NAME_LABEL])
    return None


def _index(model: StackModel) -> _Index:
    """One pass over the bindings (a scan per team namespace made a thousand teams quadratic)."""
    policies = {p.name: p for p in model.kube_objects(ADMISSION_GROUP, "ValidatingAdmissionPolicy")}
    by_namespace: dict[str, list[_Bound]] = {}
    general: list[_Bound] = []
    undecided = False
    for binding in model.kube_objects(ADMISSION_GROUP, "ValidatingAdmissionPolicyBinding"):
        spec = dig(binding.props, "spec")
        name, actions = dig(spec, "policyName"), dig(spec, "validationActions")
        if isinstance(name, Unknown) or isinstance(actions, Unknown):
            undecided = True
            continue
        policy = policies.get(name) if isinstance(name, str) else None
        if policy is None or "Deny" not in _strings(actions) or dig(spec, "matchResources", "objectSelector"):
            continue
        selector = dig(spec, "matchResources", "namespaceSelector")
        bound = _Bound(selector, policy, _cel_text(policy))
        exact = _exact_namespace(selector)
        if exact is not None and dig(policy.props, "spec", "matchConstraints", "namespaceSelector") is None:
            by_namespace.setdefault(exact, []).append(bound)
        else:
            general.append(bound)
    return _Index(by_namespace, general, undecided)


def enforced(
    model: StackModel,
    kind: Kind,
    *,
    namespace: str,
    labels: Mapping[str, Any],
    complete: bool,
    required: tuple[str, ...],
) -> bool | None:
    """Whether a declared, bound policy denies ``kind`` in ``namespace`` (with ``labels``) unless
    its CEL reads every string in ``required``; None when a piece is unknown until apply."""
    index = model.memo("admission_policy_index", lambda: _index(model))
    undecided = index.undecided
    for bound in [*index.by_namespace.get(namespace, ()), *index.general]:
        in_scope = [
            _selector_ok(bound.namespace_selector, labels, complete),
            _selector_ok(
                dig(bound.policy.props, "spec", "matchConstraints", "namespaceSelector"), labels, complete
            ),
        ]
        if False in in_scope or not _matches_kind(bound.policy, kind):
            continue
        if None in in_scope:
            undecided = True
            continue
        if all(r in bound.cel for r in required):
            return True
    return None if undecided else False
