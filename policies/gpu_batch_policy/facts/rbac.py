"""What an RBAC Role or ClusterRole grants, read the way the API server's authorizer reads it.

Semantics from kubernetes/kubernetes v1.34.0 ``pkg/apis/rbac/v1/evaluation_helpers.go``
(``VerbMatches``, ``APIGroupMatches``, ``ResourceMatches``: ``*`` matches anything; a rule with
``resourceNames`` is limited to those names).  Malformed entries (a map among the verbs) are
simply not verbs/resources: the pack never crashes on them.  A rule that is unknown until apply
makes the answer None.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..primitives.values import Unknown, dig
from .model import StackModel
from .model.base import KubeObject

RBAC_GROUP = "rbac.authorization.k8s.io"
# The default user-facing ClusterRoles (kubernetes v1.34.0
# plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go ClusterRoles: "admin", "edit"
# aggregate create on pods and batch jobs; "cluster-admin" is `*`): a RoleBinding to them hands
# out workload creation even though the stack declares no such ClusterRole.
BUILTIN_SUBMITTING_CLUSTER_ROLES = frozenset({"cluster-admin", "admin", "edit"})
# "view" (same file) only reads.
BUILTIN_READ_ONLY_CLUSTER_ROLE = "view"


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


class RuleSet:
    """A Role's ``rules`` read once, to be asked about many resources (``rules_grant`` each time
    re-read every rule: ~0.4 s of a 1,000-team stack's ``pod-bypass`` check, which asks each
    binding's rules about every workload kind)."""

    def __init__(self, rules: Any) -> None:
        self._unknown = isinstance(rules, Unknown)
        self._undecided = False
        self._rules: list[tuple[list[str], list[str], list[str], list[str]]] = []
        for rule in rules if isinstance(rules, list) else []:
            parts = [dig(rule, key) for key in ("apiGroups", "resources", "verbs", "resourceNames")]
            if any(isinstance(p, Unknown) for p in parts):
                self._undecided = True
                continue
            groups, resources, rule_verbs, names = (_strings(p) for p in parts)
            self._rules.append((groups, resources, rule_verbs, names))

    def grants(self, group: str, resource: str, verbs: Iterable[str], name: str | None = None) -> bool | None:
        """Whether the rules allow any of ``verbs`` on every object of ``group``/``resource``, or,
        with ``name``, on the object of that name (``ResourceNameMatches``: a rule's
        ``resourceNames`` limit it to those names); None when a rule unknown until apply could."""
        if self._unknown:
            return None
        wanted = set(verbs)
        for groups, resources, rule_verbs, names in self._rules:
            if (
                (group in groups or "*" in groups)
                and (resource in resources or "*" in resources)
                and ("*" in rule_verbs or wanted.intersection(rule_verbs))
                and (not names or (name is not None and name in names))
            ):
                return True
        return None if self._undecided else False


def rules_grant(
    rules: Any, group: str, resource: str, verbs: Iterable[str], name: str | None = None
) -> bool | None:
    """:meth:`RuleSet.grants` of ``rules``, asked once."""
    return RuleSet(rules).grants(group, resource, verbs, name)


def role_rules(model: StackModel, binding: KubeObject) -> Any:
    """The rules a (Cluster)RoleBinding's roleRef grants: the declared (Cluster)Role's rules,
    ``[{*}]`` for the built-in submitting ClusterRoles, Unknown when unknown or not declared."""
    kind, name = dig(binding.props, "roleRef", "kind"), dig(binding.props, "roleRef", "name")
    if isinstance(kind, Unknown) or isinstance(name, Unknown) or not isinstance(name, str):
        return Unknown("roleRef")
    namespace = binding.namespace if kind == "Role" else None
    found = model.lookup(RBAC_GROUP, str(kind), name, namespace, near=binding).found
    if found:
        return dig(found[0].props, "rules")
    if kind == "ClusterRole" and name in BUILTIN_SUBMITTING_CLUSTER_ROLES:
        return [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]
    if kind == "ClusterRole" and name == BUILTIN_READ_ONLY_CLUSTER_ROLE:
        return [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}]
    return Unknown(f"{kind} {name}")


def subjects(binding: KubeObject) -> list[Mapping[str, Any]]:
    raw = dig(binding.props, "subjects")
    return [s for s in raw if isinstance(s, Mapping)] if isinstance(raw, list) else []


def people(binding: KubeObject) -> list[str]:
    """The User and Group subjects of a binding (people, as opposed to service accounts)."""
    return [
        str(s.get("name"))
        for s in subjects(binding)
        if s.get("kind") in ("User", "Group") and isinstance(s.get("name"), str)
    ]


def bindings(model: StackModel) -> list[KubeObject]:
    return [
        *model.kube_objects(RBAC_GROUP, "RoleBinding"),
        *model.kube_objects(RBAC_GROUP, "ClusterRoleBinding"),
    ]
