"""A ServiceAccount that can make itself cluster-admin.

Kubernetes RBAC stops a subject from granting permissions it does not hold -- unless it may
``escalate`` the role or ``bind`` it (kubernetes/kubernetes v1.34.0
``pkg/registry/rbac/escalation_check.go`` ``EscalationAllowed`` and ``BindingAuthorized``;
docs "Privilege escalation prevention and bootstrapping").  So a ServiceAccount whose
ClusterRoleBinding grants ``*``, ``escalate`` or ``bind`` on ``clusterroles`` -- or ``*`` on
``clusterrolebindings``, which includes binding the existing ``cluster-admin`` role when paired
with ``bind`` -- is cluster-admin in all but name: whoever gets its token (any pod in its
namespace that mounts it) owns the cluster.  The ``skypilot`` chart 0.13.0 grants exactly that
with its default ``rbac.manageRbacPolicies: true`` (``templates/rbac.yaml``: ``*`` on
``clusterroles`` and ``clusterrolebindings``).

Advisory by default -- a risk, not a stack that cannot work -- and mandatory where a stack's
config raises it (prod, skypilot).  Rendered chart objects count like declared ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, Policy

from ...facts.model import StackModel
from ...facts.rbac import RBAC_GROUP, role_rules, rules_grant, subjects
from ..kit.builders import stack_policy
from ..kit.report import Reporter

ESCALATING_VERBS = ("*", "escalate", "bind")


def _escalates(rules: Any) -> bool | None:
    checks = [
        rules_grant(rules, RBAC_GROUP, "clusterroles", ESCALATING_VERBS),
        rules_grant(rules, RBAC_GROUP, "clusterrolebindings", ("*",)),
    ]
    if True in checks:
        return True
    return None if None in checks else False


def check_service_account_escalation(
    model: StackModel, reporter: Reporter, _config: Mapping[str, Any]
) -> None:
    for binding in model.kube_objects(RBAC_GROUP, "ClusterRoleBinding"):
        accounts = [
            f"{s.get('namespace', '?')}/{s.get('name')}"
            for s in subjects(binding)
            if s.get("kind") == "ServiceAccount"
        ]
        if not accounts:
            continue
        escalates = _escalates(role_rules(model, binding))
        if escalates is None:
            reporter.cannot_check(binding, "the ClusterRole it binds is unknown or not in this stack")
            continue
        if escalates:
            reporter.violation(
                binding,
                f"gives ServiceAccount(s) {', '.join(accounts)} escalate/bind or * on ClusterRoles or "
                "ClusterRoleBindings: they can grant themselves cluster-admin",
                "grant only the verbs the workload needs (for SkyPilot: rbac.manageRbacPolicies: false with "
                "kubernetes.remote_identity naming a ServiceAccount bound to a Role of what its pods need)",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "serviceaccount-cluster-admin-equivalent",
        "No ServiceAccount may escalate or bind ClusterRoles (cluster-admin in all but name).",
        check_service_account_escalation,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
]
