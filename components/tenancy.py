"""Team tenancy: a namespace per team, RBAC confined to it, and the queue selectors that match.

Three pieces make a team unable to spend another team's quota:

1. Its members get a namespaced Role (never a ClusterRole) to submit only the workload kinds the
   team's scheduler manages (:func:`submit_kinds`) in their own namespace, and only to *read*
   LocalQueues and Workloads: they cannot create a LocalQueue pointing at someone else's
   ClusterQueue.  A team with no queue may submit nothing.  Under Kueue, bare pods are created
   only where Kueue's ``pod`` integration manages the namespace (``pods_managed``): elsewhere a
   bare pod bypasses Kueue and its quota entirely (Kueue v0.19.2
   site/content/en/docs/tasks/run/plain_pods.md), so members may then only read and delete pods.
   Under KAI, Pods and Jobs are KAI's as long as they name ``kai-scheduler``.  Every submitted
   kind is then held to the team's queue by a ValidatingAdmissionPolicy
   (:mod:`components.queue_admission`), so an unlabelled or foreign-queue workload is refused.
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
from typing import Any, Literal

import pulumi
import pulumi_kubernetes as k8s

from components import tenant_network
from components.queue_admission import (
    JOB,
    POD,
    RAY_CLUSTER,
    RAY_JOB,
    QueueAdmission,
    QueueAdmissionArgs,
    Scheduler,
    WorkloadKind,
)

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

PodSecurityLevel = Literal["privileged", "baseline", "restricted"]
POD_SECURITY_PREFIX = "pod-security.kubernetes.io/"


def pod_security_labels(level: PodSecurityLevel | None) -> dict[str, str]:
    """The namespace labels PodSecurity admission reads (kubernetes/pod-security-admission
    v0.36.2 ``api/constants.go``): ``enforce`` refuses violating pods at the API server's own
    minor (no ``enforce-version``: latest); ``warn`` and ``audit`` at the same level tell the
    submitter and the audit log why."""
    if level is None:
        return {}
    return {f"{POD_SECURITY_PREFIX}{mode}": level for mode in ("enforce", "warn", "audit")}


def submit_kinds(scheduler: Scheduler | None, *, ray: bool, pods_managed: bool) -> tuple[WorkloadKind, ...]:
    """The kinds a team may create: those its scheduler manages (Kueue's enabled integrations:
    batch/job, Ray where KubeRay runs, pods where the pod integration manages the namespace;
    KAI's podgrouper: Pods, Jobs and Ray kinds), none without a queue."""
    if scheduler is None:
        return ()
    ray_kinds = (RAY_JOB, RAY_CLUSTER) if ray else ()
    pods = (POD,) if scheduler == "kai" or pods_managed else ()
    return (JOB, *ray_kinds, *pods)


TEAM_OBJECTS = ("configmaps", "secrets", "services")


def team_rules(
    *,
    ray: bool = True,
    pods_managed: bool = False,
    scheduler: Scheduler | None = "kueue",
    queues: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """What a team member may do in the team's namespace, and nothing cluster-wide."""
    kinds = submit_kinds(scheduler, ray=ray, pods_managed=pods_managed)
    ray_resources = [k.resource for k in kinds if k.group == "ray.io"]
    return [
        *(
            [{"apiGroups": ["ray.io"], "resources": ray_resources, "verbs": list(SUBMIT_VERBS)}]
            if ray_resources
            else []
        ),
        {
            "apiGroups": ["batch"],
            "resources": ["jobs"],
            "verbs": list(SUBMIT_VERBS if JOB in kinds else READ_VERBS),
        },
        {
            "apiGroups": [""],
            "resources": ["pods"],
            "verbs": list(SUBMIT_VERBS if POD in kinds else POD_VERBS_UNMANAGED),
        },
        {"apiGroups": [""], "resources": ["pods/log", "events"], "verbs": list(READ_VERBS)},
        # Real work (issue 27 #8): hand a job its config and tokens, reach a Ray dashboard or a
        # notebook.  Services are held to ClusterIP by components.service_admission; exec and
        # port-forward are "create" on the subresource (and "get" for the SPDY/WebSocket upgrade
        # older clients send), kubernetes.io docs reference/access-authn-authz/authorization.
        {"apiGroups": [""], "resources": list(TEAM_OBJECTS), "verbs": list(SUBMIT_VERBS)},
        {"apiGroups": [""], "resources": ["pods/exec", "pods/portforward"], "verbs": ["get", "create"]},
        {
            "apiGroups": ["kueue.x-k8s.io"],
            "resources": ["localqueues", "workloads"],
            "verbs": list(READ_VERBS),
        },
        *(
            [
                # Where the team's workloads stand in its queues: Kueue's visibility API
                # (visibility.kueue.x-k8s.io, served by the Kueue controller; the 0.19.2 chart's
                # pending_workloads_lq_viewer_role.yaml grants the same resource), only for the
                # team's own LocalQueues.
                {
                    "apiGroups": ["visibility.kueue.x-k8s.io"],
                    "resources": ["localqueues/pendingworkloads"],
                    "verbs": ["get"],
                    "resourceNames": sorted(queues),
                }
            ]
            if scheduler == "kueue" and queues
            else []
        ),
        *(
            [
                # Why a gang waits under KAI: the scheduler writes it only on the PodGroup its
                # podgrouper makes in the team's namespace (KAI v0.17.0
                # pkg/scheduler/cache/status_updater/default_status_updater.go
                # markPodGroupUnschedulable: status.schedulingConditions), which members could not
                # read; `python -m whatif.status` needs it (issue 43).  Read-only.
                {"apiGroups": ["scheduling.run.ai"], "resources": ["podgroups"], "verbs": list(READ_VERBS)}
            ]
            if scheduler == "kai"
            else []
        ),
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
    # The scheduler whose queues the team submits to, and the queue names it may use (its
    # LocalQueue, or its leaf KAI queue); None: the team has no queue and submits nothing.
    scheduler: Scheduler | None = "kueue"
    queues: tuple[str, ...] = ()
    # Pod Security level enforced in the namespace; None: no label (the cluster's default).
    pod_security: PodSecurityLevel | None = "baseline"
    # NetworkPolicies isolating the namespace (components.tenant_network): only on a cluster that
    # enforces them.  ``platform_namespaces``: where the platform's callers run.
    network_isolation: bool = False
    platform_namespaces: tuple[str, ...] = ()
    # The priority classes the team's admission policy lets it name; None: any.
    priority_classes: tuple[str, ...] | None = None


class TeamTenancy(pulumi.ComponentResource):
    """One team's namespace (created here, or labelled by a patch when it exists), Role and
    RoleBinding.

    ``namespace`` is the Namespace resource, or the NamespacePatch that labels a namespace that
    already exists (``default``): other objects in the team's namespace depend on it.
    """

    namespace: k8s.core.v1.Namespace | k8s.core.v1.NamespacePatch
    role: k8s.rbac.v1.Role

    def __init__(
        self,
        name: str,
        args: TeamArgs,
        opts: pulumi.ResourceOptions | None = None,
        *,
        controllers: Sequence[pulumi.Resource] = (),
    ) -> None:
        """``controllers``: the releases of the controllers whose finalizers the team's objects
        carry (Kueue's ``kueue.x-k8s.io/resource-in-use`` on Workloads, KubeRay's on Ray objects).
        The namespace depends on them, so ``pulumi destroy`` deletes the namespace -- and the
        API server its workloads, whose finalizers those controllers remove -- *before* the
        controllers: the engine deletes a resource only after everything that depends on it
        (Pulumi docs, "dependsOn"; pulumi/pulumi ``pkg/resource/graph`` ``DependentsOf``).
        Without it a destroy with running work could leave the namespace ``Terminating``."""
        super().__init__("gpu-batch:tenancy:Team", name, None, opts)
        labels = {**MANAGED_BY, TEAM_LABEL: args.name}
        namespace_labels = {**labels, **pod_security_labels(args.pod_security), **args.namespace_labels}
        if args.create_namespace:
            self.namespace = k8s.core.v1.Namespace(
                f"{name}-namespace",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=args.namespace, labels=namespace_labels),
                opts=pulumi.ResourceOptions(parent=self, depends_on=list(controllers)),
            )
        else:
            # A namespace that exists (``default``) still needs the labels Kueue's
            # managedJobsNamespaceSelector and PodSecurity read, or its jobs run outside every
            # quota and its pods unchecked: server-side apply of just these labels, released again
            # on destroy (pulumi-kubernetes NamespacePatch; the namespace itself is never deleted).
            self.namespace = k8s.core.v1.NamespacePatch(
                f"{name}-namespace-labels",
                metadata=k8s.meta.v1.ObjectMetaPatchArgs(name=args.namespace, labels=namespace_labels),
                opts=pulumi.ResourceOptions(parent=self),
            )
        after_namespace = pulumi.ResourceOptions(parent=self, depends_on=[self.namespace])
        if args.network_isolation:
            tenant_network.create(name, args.namespace, args.platform_namespaces, after_namespace)
        role_name = f"{args.name}-submitter"
        metadata = k8s.meta.v1.ObjectMetaArgs(name=role_name, namespace=args.namespace, labels=labels)
        self.role = k8s.rbac.v1.Role(
            f"{name}-role",
            metadata=metadata,
            rules=[
                k8s.rbac.v1.PolicyRuleArgs(**_snake(rule))
                for rule in team_rules(
                    ray=args.ray, pods_managed=args.pods_managed, scheduler=args.scheduler, queues=args.queues
                )
            ],
            opts=after_namespace,
        )
        kinds = submit_kinds(args.scheduler, ray=args.ray, pods_managed=args.pods_managed)
        if args.scheduler is not None and kinds:
            QueueAdmission(
                f"{name}-queue-admission",
                QueueAdmissionArgs(
                    team=args.name,
                    namespace=args.namespace,
                    scheduler=args.scheduler,
                    queues=args.queues,
                    kinds=kinds,
                    priority_classes=args.priority_classes,
                ),
                opts=pulumi.ResourceOptions(parent=self),
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
    out = {"api_groups": rule["apiGroups"], "resources": rule["resources"], "verbs": rule["verbs"]}
    if "resourceNames" in rule:
        out["resource_names"] = rule["resourceNames"]
    return out
