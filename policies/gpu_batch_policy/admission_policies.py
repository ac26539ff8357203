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

from .model import StackModel
from .model.base import KubeObject
from .selectors import selector_matches
from .values import Unknown, dig

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


def enforced(
    model: StackModel,
    kind: Kind,
    labels: Mapping[str, Any],
    complete: bool,
    required: tuple[str, ...],
) -> bool | None:
    """Whether a declared, bound policy denies ``kind`` in the namespace with ``labels`` unless
    its CEL reads every string in ``required``; None when a piece is unknown until apply."""
    policies = {p.name: p for p in model.kube_objects(ADMISSION_GROUP, "ValidatingAdmissionPolicy")}
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
        in_scope = [
            _selector_ok(dig(spec, "matchResources", "namespaceSelector"), labels, complete),
            _selector_ok(
                dig(policy.props, "spec", "matchConstraints", "namespaceSelector"), labels, complete
            ),
        ]
        if False in in_scope or not _matches_kind(policy, kind):
            continue
        if None in in_scope:
            undecided = True
            continue
        text = _cel_text(policy)
        if all(r in text for r in required):
            return True
    return None if undecided else False
