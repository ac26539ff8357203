"""Team tenancy: a namespace per team, RBAC confined to it, and the queue selectors that match.

Three pieces make a team unable to spend another team's quota:

1. Its members get a namespaced Role (never a ClusterRole) to submit the workload kinds Kueue
   queues -- Jobs, and RayJobs/RayClusters where KubeRay is installed -- in their own namespace,
   and only to *read* LocalQueues and Workloads: they cannot create a LocalQueue pointing at
   someone else's ClusterQueue.  Bare pods are created only where Kueue's ``pod`` integration
   manages the namespace (``pods_managed``): elsewhere a bare pod bypasses Kueue and its quota
   entirely (Kueue v0.19.2 site/content/en/docs/tasks/run/plain_pods.md: plain pods are managed
   only with the ``pod`` integration, in namespaces matched by ``managedJobsNamespaceSelector``),
   so members may then only read and delete pods.
2. Each ClusterQueue's ``namespaceSelector`` admits exactly the namespaces of the teams listed
   against it (:func:`namespace_selector`), keyed on ``kubernetes.io/metadata.name``, the label
   the API server sets on every namespace and users cannot change (immutable since 1.21).
3. Kueue only looks at the LocalQueue in the job's own namespace (reference/kueue.md §6).

Omitting a ClusterQueue's selector admits no namespace at all; ``{}`` admits every namespace
(the seeds' choice), which a stack must ask for explicitly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

NAME_LABEL = "kubernetes.io/metadata.name"
TEAM_LABEL = "gpu-batch/team"
MANAGED_BY = {"app.kubernetes.io/managed-by": "pulumi"}
SUBMIT_VERBS = ("get", "list", "watch", "create", "update", "patch", "delete")
READ_VERBS = ("get", "list", "watch")


def namespace_selector(namespaces: Sequence[str]) -> dict[str, Any] | None:
    """A LabelSelector admitting exactly ``namespaces``; None (admit none) when there are none."""
    names = sorted(set(namespaces))
    if not names:
        return None
    return {"matchExpressions": [{"key": NAME_LABEL, "operator": "In", "values": names}]}


POD_VERBS_UNMANAGED = ("get", "list", "watch", "delete")


def team_rules(*, ray: bool = True, pods_managed: bool = False) -> list[dict[str, Any]]:
    """What a team member may do in the team's namespace, and nothing cluster-wide."""
    return [
        *(
            [{"apiGroups": ["ray.io"], "resources": ["rayjobs", "rayclusters"], "verbs": list(SUBMIT_VERBS)}]
            if ray
            else []
        ),
        {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": list(SUBMIT_VERBS)},
        {
            "apiGroups": [""],
            "resources": ["pods"],
            "verbs": list(SUBMIT_VERBS if pods_managed else POD_VERBS_UNMANAGED),
        },
        {"apiGroups": [""], "resources": ["pods/log", "events"], "verbs": list(READ_VERBS)},
        {
            "apiGroups": ["kueue.x-k8s.io"],
            "resources": ["localqueues", "workloads"],
            "verbs": list(READ_VERBS),
        },
    ]


@dataclass(frozen=True)
class TeamArgs:
    name: str
    namespace: str
    create_namespace: bool = True
    groups: tuple[str, ...] = ()
    users: tuple[str, ...] = ()
    namespace_labels: Mapping[str, str] = field(default_factory=dict)
    # KubeRay installed: members submit RayJobs/RayClusters.
    ray: bool = True
    # Kueue's pod integration manages this namespace: members may create bare pods.
    pods_managed: bool = False


class TeamTenancy(pulumi.ComponentResource):
    """One team's namespace (when created here), Role and RoleBinding.

    ``namespace`` is the Namespace resource, or None for a namespace that already exists
    (``default``): other objects in the team's namespace depend on it.
    """

    namespace: k8s.core.v1.Namespace | None
    role: k8s.rbac.v1.Role

    def __init__(self, name: str, args: TeamArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-batch:tenancy:Team", name, None, opts)
        labels = {**MANAGED_BY, TEAM_LABEL: args.name}
        self.namespace = None
        if args.create_namespace:
            self.namespace = k8s.core.v1.Namespace(
                f"{name}-namespace",
                metadata=k8s.meta.v1.ObjectMetaArgs(
                    name=args.namespace, labels={**labels, **args.namespace_labels}
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
        after_namespace = pulumi.ResourceOptions(
            parent=self, depends_on=[self.namespace] if self.namespace else []
        )
        role_name = f"{args.name}-submitter"
        metadata = k8s.meta.v1.ObjectMetaArgs(name=role_name, namespace=args.namespace, labels=labels)
        self.role = k8s.rbac.v1.Role(
            f"{name}-role",
            metadata=metadata,
            rules=[
                k8s.rbac.v1.PolicyRuleArgs(**_snake(rule))
                for rule in team_rules(ray=args.ray, pods_managed=args.pods_managed)
            ],
            opts=after_namespace,
        )
        subjects = [
            k8s.rbac.v1.SubjectArgs(kind="Group", name=group, api_group="rbac.authorization.k8s.io")
            for group in args.groups
        ] + [
            k8s.rbac.v1.SubjectArgs(kind="User", name=user, api_group="rbac.authorization.k8s.io")
            for user in args.users
        ]
        if subjects:
            k8s.rbac.v1.RoleBinding(
                f"{name}-role-binding",
                metadata=metadata,
                role_ref=k8s.rbac.v1.RoleRefArgs(
                    api_group="rbac.authorization.k8s.io", kind="Role", name=role_name
                ),
                subjects=subjects,
                opts=pulumi.ResourceOptions(parent=self, depends_on=[self.role]),
            )
        self.register_outputs({"namespace": args.namespace, "members": len(subjects)})


def _snake(rule: Mapping[str, Any]) -> dict[str, Any]:
    return {"api_groups": rule["apiGroups"], "resources": rule["resources"], "verbs": rule["verbs"]}
