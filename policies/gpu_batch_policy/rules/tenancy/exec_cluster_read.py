"""People who can exec into a pod whose ServiceAccount reads every pod of the cluster (issue 39).

``kubectl exec`` into a pod hands the caller that pod's ServiceAccount token (mounted at
``/var/run/secrets/kubernetes.io/serviceaccount``), so the caller can do whatever the account may.
SkyPilot 0.13.0's API server is such a pod: it counts free GPUs with
``list_pod_for_all_namespaces`` (``sky/provision/kubernetes/utils.py``), which the chart's
ClusterRole grants (``rbac.clusterRules``: pods, cluster-wide).  A team member allowed
``create`` on ``pods/exec`` in the server's namespace then reads every pod spec of every team,
environment values included.

**pod-exec-reaches-cluster-read** (advisory; mandatory in prod's and skypilot's config): a
RoleBinding (or ClusterRoleBinding) that lets people ``create`` ``pods/exec`` in a namespace where
a pod template runs as a ServiceAccount that a ClusterRoleBinding lets ``list`` pods in every
namespace (RBAC semantics: ``facts.rbac``, kubernetes v1.34.0 ``evaluation_helpers.go``).  A
stack that keeps this on purpose names the namespace and its reason in the rule's ``accepted``
property (``policies/config.<stack>.json``); the finding then does not fire for that namespace.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, Policy, PolicyConfigSchema

from ...facts.model import StackModel
from ...facts.model.base import KubeObject
from ...facts.pod_templates import owned_templates
from ...facts.rbac import RBAC_GROUP, bindings, people, role_rules, rules_grant, subjects
from ...primitives.values import dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter

DEFAULT_SERVICE_ACCOUNT = "default"


def _cluster_readers(model: StackModel) -> set[tuple[str, str]]:
    """(namespace, ServiceAccount) pairs a ClusterRoleBinding lets list pods cluster-wide."""
    out: set[tuple[str, str]] = set()
    for binding in model.kube_objects(RBAC_GROUP, "ClusterRoleBinding"):
        if rules_grant(role_rules(model, binding), "", "pods", ("list",)) is not True:
            continue
        for s in subjects(binding):
            if s.get("kind") == "ServiceAccount" and isinstance(s.get("name"), str):
                out.add((str(s.get("namespace") or ""), str(s["name"])))
    return out


def _readers_by_namespace(model: StackModel) -> dict[str, list[tuple[KubeObject, str]]]:
    """Namespace -> (owner of a pod template, its ServiceAccount) for the cluster-wide readers."""
    readers = _cluster_readers(model)
    out: dict[str, list[tuple[KubeObject, str]]] = {}
    for owned in owned_templates(model):
        owner = owned.owner if isinstance(owned.owner, KubeObject) else owned.owner.obj
        namespace = owner.namespace
        account = dig(owned.template.raw, "spec", "serviceAccountName") or DEFAULT_SERVICE_ACCOUNT
        if isinstance(namespace, str) and isinstance(account, str) and (namespace, account) in readers:
            out.setdefault(namespace, []).append((owner, account))
    return out


def check_exec_cluster_read(model: StackModel, reporter: Reporter, config: Mapping[str, Any]) -> None:
    accepted = {
        str(a.get("namespace")): str(a.get("reason"))
        for a in config.get("accepted") or []
        if isinstance(a, Mapping) and a.get("namespace") and a.get("reason")
    }
    readers = _readers_by_namespace(model)
    if not readers:
        return
    for binding in bindings(model):
        who = people(binding)
        if not who:
            continue
        granted = rules_grant(role_rules(model, binding), "", "pods/exec", ("create",))
        if granted is not True:
            continue
        namespaces = [binding.namespace] if binding.kind == "RoleBinding" else sorted(readers)
        for namespace in namespaces:
            if not isinstance(namespace, str) or namespace not in readers or namespace in accepted:
                continue
            pods = ", ".join(sorted({f"{o.describe()} as {sa}" for o, sa in readers[namespace]}))
            reporter.violation(
                binding,
                f"{', '.join(who)} may exec into the pods of {pods} in {namespace}, whose ServiceAccount "
                "lists pods in every namespace: through its token they read every pod spec of the cluster",
                "drop pods/exec for these people in that namespace (or run that pod where they hold no "
                "rights), or accept it in the rule's accepted property with the namespace and a reason",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "pod-exec-reaches-cluster-read",
        "People cannot exec into a pod whose ServiceAccount lists pods in every namespace, unless accepted.",
        check_exec_cluster_read,
        enforcement_level=EnforcementLevel.ADVISORY,
        config_schema=PolicyConfigSchema(
            properties={
                "accepted": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "namespace": {"type": "string"},
                            "reason": {"type": "string", "minLength": 1},
                        },
                        "required": ["namespace", "reason"],
                    },
                    "description": "namespaces where this is kept on purpose, each with its reason",
                }
            }
        ),
    ),
]
