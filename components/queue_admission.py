"""A ValidatingAdmissionPolicy per team namespace: no workload may escape the team's queue.

Why it is needed (issue 19), from the code that decides:

* Kueue v0.19.2 leaves a Job or Pod without ``kueue.x-k8s.io/queue-name`` alone unless
  ``manageJobsWithoutQueueName`` is on (``pkg/controller/jobframework/utils.go``
  ``WorkloadShouldBeSuspended``: a queue name suspends, otherwise only
  ``manageJobsWithoutQueueName`` with a matching ``managedJobsNamespaceSelector`` does;
  ``pkg/controller/jobs/pod/pod_webhook.go`` ``PodWebhook.Default`` the same for pods).  Such a
  workload runs outside every quota; a GPU pod that tolerates the GPU taint runs on GPU nodes.
* KAI v0.17 schedules only pods whose ``schedulerName`` is ``kai-scheduler``; a Job left on the
  default scheduler takes GPUs KAI never accounts for, and nothing stops a team naming another
  team's queue in ``kai.scheduler/queue`` (KAI issue #2068).

What the policy enforces, on CREATE and UPDATE of the kinds the team's Role lets it create:

* Kueue teams: the queue label names one of the team's LocalQueues (Kueue only reads the
  LocalQueue in the job's own namespace, so this is exactly "the team's quota").  Kueue's
  LocalQueueDefaulting runs in Kueue's *mutating* webhook, before validating admission
  (``pkg/controller/jobframework/defaults.go``
  ``ApplyDefaultLocalQueueWithManagedJobsNamespaceSelector``), so an unlabelled job in a managed
  namespace with a LocalQueue ``default`` arrives here labelled ``default`` and passes.
* KAI teams: the queue label names the team's own leaf queue, and Pods and Jobs run on
  ``kai-scheduler``.  Ray kinds need only the label: KubeRay v1.7.0's KAI plugin
  (``ray-operator/controllers/ray/batchscheduler/kai-scheduler/kai_scheduler.go``
  ``AddMetadataToChildResource``) stamps ``schedulerName`` and copies the RayCluster's queue
  label onto every pod it creates.

Who is judged: every request except those of platform components, i.e. users whose name starts
with ``system:`` (the kube-controller-manager's controllers, ``system:serviceaccount:kube-system:*``,
and the operators' service accounts in their own namespaces: the Job controller creating a
Job's pods, KubeRay creating a RayCluster's pods, Kueue unsuspending a Job).  Service accounts
of the team's *own* namespace are judged like people (a SkyPilot API server creates pods there,
and a team member could borrow its token).  Team members are Google identities and can never
be ``system:`` users.

The expressions are plain CEL (Kubernetes' CEL for admission, ``admissionregistration.k8s.io/v1``
``ValidatingAdmissionPolicySpec``), tested with cel-python against allowed and refused objects
(tests/test_queue_admission.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pulumi

from components.k8s_object import KubeObject

KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KAI_QUEUE_LABEL = "kai.scheduler/queue"
KAI_SCHEDULER_NAME = "kai-scheduler"
ADMISSION_API = "admissionregistration.k8s.io/v1"
NAME_LABEL = "kubernetes.io/metadata.name"
Scheduler = Literal["kueue", "kai"]


@dataclass(frozen=True)
class WorkloadKind:
    """A kind a team may submit, as an admission ``resourceRule`` names it."""

    group: str
    resource: str
    kind: str


POD = WorkloadKind("", "pods", "Pod")
JOB = WorkloadKind("batch", "jobs", "Job")
RAY_JOB = WorkloadKind("ray.io", "rayjobs", "RayJob")
RAY_CLUSTER = WorkloadKind("ray.io", "rayclusters", "RayCluster")
# Where each kind keeps the pod's schedulerName (Ray kinds: stamped by KubeRay, see above).
SCHEDULER_NAME_PATHS = {"Pod": "object.spec", "Job": "object.spec.template.spec"}

# Requests by platform components are not judged (module docstring).
PLATFORM_REQUEST = (
    "!request.userInfo.username.startsWith('system:') || "
    "request.userInfo.username.startsWith('system:serviceaccount:' + request.namespace + ':')"
)


@dataclass(frozen=True)
class QueueAdmissionArgs:
    team: str
    namespace: str
    scheduler: Scheduler
    # The queue names the team may use: its LocalQueue(s) or its leaf KAI queue(s).
    queues: tuple[str, ...]
    kinds: tuple[WorkloadKind, ...]
    # The priority classes the team may name; None: any (issue 27 #7).
    priority_classes: tuple[str, ...] | None = None

    @property
    def policy_name(self) -> str:
        return f"gpu-batch-queue-{self.team}"

    @property
    def queue_label(self) -> str:
        return KUEUE_QUEUE_LABEL if self.scheduler == "kueue" else KAI_QUEUE_LABEL


def _cel_string(text: str) -> str:
    """A CEL string literal (JSON's double-quoted escaping is valid CEL)."""
    return json.dumps(text)


def _cel_list(items: Sequence[str]) -> str:
    return "[" + ", ".join(_cel_string(i) for i in items) + "]"


def policy_spec(args: QueueAdmissionArgs) -> dict[str, Any]:
    """The ``ValidatingAdmissionPolicy.spec`` for one team."""
    label = _cel_string(args.queue_label)
    queues = _cel_list(args.queues)
    validations: list[dict[str, Any]] = [
        {
            "expression": f"variables.queue in {queues}",
            "messageExpression": (
                f"object.kind + ' ' + object.metadata.name + ' must carry label ' + {label} + "
                f"' naming one of the queues of team {args.team} ({', '.join(args.queues)}), got \"' "
                "+ variables.queue + '\"'"
            ),
            "reason": "Forbidden",
        }
    ]
    if args.priority_classes is not None:
        validations += priority_class_validations(args)
    if args.scheduler == "kai":
        checks = " : ".join(
            f"object.kind == {_cel_string(kind)} ? (has({path}.schedulerName) && "
            f"{path}.schedulerName == {_cel_string(KAI_SCHEDULER_NAME)})"
            for kind, path in SCHEDULER_NAME_PATHS.items()
        )
        validations.append(
            {
                "expression": f"{checks} : true",
                "messageExpression": (
                    "object.kind + ' ' + object.metadata.name + "
                    f"' must run on schedulerName {KAI_SCHEDULER_NAME}: KAI accounts only for its own pods'"
                ),
                "reason": "Forbidden",
            }
        )
    return {
        "failurePolicy": "Fail",
        "matchConstraints": {
            "resourceRules": [
                {
                    "apiGroups": [kind.group],
                    "apiVersions": ["*"],
                    "resources": [kind.resource],
                    "operations": ["CREATE", "UPDATE"],
                }
                for kind in args.kinds
            ]
        },
        "matchConditions": [{"name": "not-a-platform-component", "expression": PLATFORM_REQUEST}],
        "variables": [
            {
                "name": "queue",
                "expression": (
                    f"has(object.metadata.labels) && {label} in object.metadata.labels ? "
                    f"object.metadata.labels[{label}] : ''"
                ),
            }
        ],
        "validations": validations,
    }


# Where a workload names its priority: Kueue reads the WorkloadPriorityClass label on the job
# object (kubernetes-sigs/kueue v0.19.2 pkg/controller/jobframework/reconciler.go via
# utils.go ``WorkloadPriorityClassName``: label kueue.x-k8s.io/priority-class), KAI the
# ``priorityClassName`` label (kai-scheduler v0.17 podgrouper ``GetPriorityClassName``: label,
# then the pod's spec); the kube-scheduler and Kueue's fallback the pod's
# ``spec.priorityClassName`` (a Pod's own spec, a Job's template).
PRIORITY_LABELS = {"kueue": "kueue.x-k8s.io/priority-class", "kai": "priorityClassName"}
POD_PRIORITY_PATHS = {"Pod": "object.spec", "Job": "object.spec.template.spec"}


def priority_class_validations(args: QueueAdmissionArgs) -> list[dict[str, Any]]:
    """Refuse a priority class the team may not use, in the label its scheduler reads and in a
    Pod's or Job's pod spec."""
    allowed = _cel_list(args.priority_classes or ())
    label = _cel_string(PRIORITY_LABELS[args.scheduler])
    names = ", ".join(args.priority_classes or ()) or "none"
    spec_checks = " : ".join(
        f"object.kind == {_cel_string(kind)} ? (!has({path}.priorityClassName) || "
        f"{path}.priorityClassName in {allowed})"
        for kind, path in POD_PRIORITY_PATHS.items()
    )
    return [
        {
            "expression": (
                f"!has(object.metadata.labels) || !({label} in object.metadata.labels) || "
                f"object.metadata.labels[{label}] in {allowed}"
            ),
            "messageExpression": (
                f"object.kind + ' ' + object.metadata.name + ' names priority class ' + "
                f"object.metadata.labels[{label}] + ': team {args.team} may use only {names}'"
            ),
            "reason": "Forbidden",
        },
        {
            "expression": f"{spec_checks} : true",
            "message": f"the pod spec names a PriorityClass team {args.team} may not use (allowed: {names})",
            "reason": "Forbidden",
        },
    ]


def binding_spec(args: QueueAdmissionArgs) -> dict[str, Any]:
    """The binding: the policy denies, in the team's namespace only."""
    return {
        "policyName": args.policy_name,
        "validationActions": ["Deny"],
        "matchResources": {"namespaceSelector": {"matchLabels": {NAME_LABEL: args.namespace}}},
    }


class QueueAdmission(pulumi.ComponentResource):
    """The team's ValidatingAdmissionPolicy and its binding (both cluster-scoped)."""

    def __init__(
        self, name: str, args: QueueAdmissionArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpu-batch:tenancy:QueueAdmission", name, None, opts)
        labels = {"app.kubernetes.io/managed-by": "pulumi", "gpu-batch/team": args.team}
        policy = KubeObject(
            f"{name}-policy",
            api_version=ADMISSION_API,
            kind="ValidatingAdmissionPolicy",
            metadata={"name": args.policy_name, "labels": labels},
            spec=policy_spec(args),
            opts=pulumi.ResourceOptions(parent=self),
        )
        KubeObject(
            f"{name}-binding",
            api_version=ADMISSION_API,
            kind="ValidatingAdmissionPolicyBinding",
            metadata={"name": args.policy_name, "labels": labels},
            spec=binding_spec(args),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[policy]),
        )
        self.register_outputs({"policy": args.policy_name})
