"""Workloads a team can create outside its queue, and a pod webhook that fails closed everywhere.

**kueue-pod-bypass** (mandatory): the people of a team namespace can create a workload that no
queue accounts for.  Judged for every Role or RoleBinding'd ClusterRole that lets a User or Group
create Pods, Jobs, RayJobs or RayClusters:

* in a namespace with a Kueue LocalQueue (where a team submits).  Kueue v0.19.2 manages a kind
  only through its integration (``integrations.frameworks``: ``pod``, ``batch/job``,
  ``ray.io/rayjob``, ``ray.io/raycluster``), only in namespaces matched by
  ``managedJobsNamespaceSelector``, and a workload *without* a queue label only when
  ``manageJobsWithoutQueueName`` is on (``pkg/controller/jobframework/utils.go``
  ``WorkloadShouldBeSuspended``; ``pkg/controller/jobs/pod/pod_webhook.go`` ``PodWebhook.Default``)
  or when the namespace has a LocalQueue named ``default`` (LocalQueueDefaulting,
  ``pkg/controller/jobframework/defaults.go``
  ``ApplyDefaultLocalQueueWithManagedJobsNamespaceSelector``).  Otherwise an unlabelled
  workload runs outside every quota -- a GPU pod tolerating the GPU taint on the GPU nodes.
* in a stack with KAI Scheduler, any namespace where people may create Pods or Jobs: KAI v0.17
  schedules only pods with ``schedulerName: kai-scheduler`` and a ``kai.scheduler/queue``; a
  Pod or Job on the default scheduler takes GPUs KAI never accounts for.  (Ray kinds are not a
  bypass there: KubeRay v1.7.0's KAI plugin stamps the scheduler on their pods,
  ``ray-operator/controllers/ray/batchscheduler/kai-scheduler/kai_scheduler.go``.)

Either is closed by a ValidatingAdmissionPolicy bound to the namespace that denies the kind
unless it carries the queue label (and, for KAI, the scheduler name)
(:mod:`..admission_policies`).

**kueue-pod-webhook-scope** (advisory by default; prod's config raises it): the pod
integration with ``managedJobsNamespaceSelector`` left at every namespace.  The Kueue chart uses
that selector as the ``namespaceSelector`` of its ``failurePolicy: Fail`` pod webhooks
(``charts/kueue/templates/webhook/manifests.yaml`` @v0.19.2, ``mpod.kb.io``), so every pod in
the cluster -- ingress controllers, other operators -- is refused while Kueue's webhook is down.
That is a hazard, not an impossibility: SkyPilot's published setup runs this way and works
(issue 18, "Hazard vs impossibility").
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_policy import EnforcementLevel, Policy

from ...facts.admission_policies import Kind, enforced
from ...facts.model import StackModel
from ...facts.model.base import KubeObject
from ...facts.model.helm import HelmRelease
from ...facts.rbac import RBAC_GROUP, RuleSet, bindings, people, role_rules
from ...facts.selectors import namespace_labels, selector_matches
from ...primitives.values import Unknown, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter

CREATE_VERBS = ("create",)
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KAI_QUEUE_LABEL = "kai.scheduler/queue"
KAI_SCHEDULER_NAME = "kai-scheduler"
DEFAULT_LOCAL_QUEUE = "default"


@dataclass(frozen=True)
class Workload:
    kind: Kind
    name: str
    framework: str


# Every kind a Kueue 0.19.2 integration queues (pkg/controller/jobs/*; the names of
# components.kueue_config.KNOWN_FRAMEWORKS), with its API group and resource.
WORKLOADS = (
    Workload(Kind("", "pods"), "bare pods", "pod"),
    Workload(Kind("batch", "jobs"), "Jobs", "batch/job"),
    Workload(Kind("ray.io", "rayjobs"), "RayJobs", "ray.io/rayjob"),
    Workload(Kind("ray.io", "rayclusters"), "RayClusters", "ray.io/raycluster"),
    Workload(Kind("ray.io", "rayservices"), "RayServices", "ray.io/rayservice"),
    Workload(Kind("apps", "deployments"), "Deployments", "deployment"),
    Workload(Kind("apps", "statefulsets"), "StatefulSets", "statefulset"),
    Workload(Kind("jobset.x-k8s.io", "jobsets"), "JobSets", "jobset.x-k8s.io/jobset"),
    Workload(
        Kind("leaderworkerset.x-k8s.io", "leaderworkersets"),
        "LeaderWorkerSets",
        "leaderworkerset.x-k8s.io/leaderworkerset",
    ),
    *(
        Workload(Kind("kubeflow.org", f"{kind.lower()}s"), f"{kind}s", f"kubeflow.org/{kind.lower()}")
        for kind in ("MPIJob", "PyTorchJob", "TFJob", "PaddleJob", "XGBoostJob", "JAXJob")
    ),
    Workload(Kind("trainer.kubeflow.org", "trainjobs"), "TrainJobs", "trainer.kubeflow.org/trainjob"),
    Workload(
        Kind("workload.codeflare.dev", "appwrappers"), "AppWrappers", "workload.codeflare.dev/appwrapper"
    ),
    Workload(
        Kind("sparkoperator.k8s.io", "sparkapplications"),
        "SparkApplications",
        "sparkoperator.k8s.io/sparkapplication",
    ),
)


@dataclass(frozen=True)
class KueueScope:
    frameworks: tuple[str, ...]
    selector: dict[str, Any] | None
    without_queue_name: bool


def _kueue_scope(release: HelmRelease) -> KueueScope | Unknown | None:
    """The release's integrations, managedJobsNamespaceSelector and manageJobsWithoutQueueName."""
    frameworks = release.kueue_frameworks()
    if isinstance(frameworks, Unknown) or frameworks is None:
        return frameworks
    config = release.kueue_config()
    data = config.data if config.present else None
    selector = dig(data, "managedJobsNamespaceSelector")
    without = dig(data, "manageJobsWithoutQueueName")
    if isinstance(selector, Unknown) or isinstance(without, Unknown):
        return Unknown("managerConfig.controllerManagerConfigYaml")
    return KueueScope(frameworks, selector if isinstance(selector, dict) else None, without is True)


def _grants(model: StackModel) -> Iterator[tuple[KubeObject, str, Any]]:
    """(subject to report on, namespace, rules) for every Role, and every RoleBinding of a
    ClusterRole to people, in a namespace."""
    for role in model.kube_objects(RBAC_GROUP, "Role"):
        yield role, role.namespace or "", dig(role.props, "rules")
    for binding in bindings(model):
        if (
            binding.kind == "RoleBinding"
            and dig(binding.props, "roleRef", "kind") == "ClusterRole"
            and people(binding)
        ):
            yield binding, binding.namespace or "", role_rules(model, binding)


def _people_namespaces(model: StackModel) -> set[str]:
    return {b.namespace or "" for b in model.kube_objects(RBAC_GROUP, "RoleBinding") if people(b)}


@dataclass(frozen=True)
class Place:
    """A namespace as the selectors see it: its labels, and whether they are all known."""

    name: str
    labels: dict[str, Any]
    complete: bool


def _kueue_queues(workload: Workload, scope: KueueScope, model: StackModel, place: Place) -> bool | None:
    """Whether Kueue queues every ``workload`` created in ``ns`` (labelled or not)."""
    if workload.framework not in scope.frameworks:
        return False
    managed = (
        True
        if scope.selector is None
        else selector_matches(scope.selector, place.labels, complete=place.complete)
    )
    if managed is not True:
        return managed
    defaulted = any(lq.name == DEFAULT_LOCAL_QUEUE for lq in model.local_queues_in(place.name))
    return scope.without_queue_name or defaulted


def check_bypass(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    releases = model.kueue_releases()
    scopes = [_kueue_scope(r) for r in releases]
    if any(not isinstance(s, KueueScope) for s in scopes):
        reporter.cannot_check(releases[0], "the Kueue controller Configuration is unknown or unreadable")
        return
    kueue = [s for s in scopes if isinstance(s, KueueScope)]
    kai = bool(model.kai_releases())
    if not kueue and not kai:
        return
    people_namespaces = _people_namespaces(model) if kai else set()
    for subject, ns, rules in _grants(model):
        team_kueue = bool(kueue) and bool(model.local_queues_in(ns))
        if not team_kueue and ns not in people_namespaces:
            continue
        place = Place(ns, *namespace_labels(model, ns))
        bypassing: list[Workload] = []
        granted = RuleSet(rules)
        for workload in WORKLOADS:
            if not team_kueue and workload.kind.group == "ray.io":
                continue  # KubeRay's KAI plugin puts Ray pods on KAI itself
            grants = granted.grants(workload.kind.group, workload.kind.resource, CREATE_VERBS)
            verdict = (
                None
                if grants is None
                else (grants and _bypasses(model, workload, place, kueue if team_kueue else None))
            )
            if verdict is None:
                reporter.cannot_check(
                    subject, f"whether {workload.name} in namespace {ns} are always queued is unknown"
                )
            elif verdict:
                bypassing.append(workload)
        if bypassing:
            _report(reporter, subject, ns, bypassing, kai=not team_kueue)


def _bypasses(
    model: StackModel, workload: Workload, place: Place, kueue: list[KueueScope] | None
) -> bool | None:
    """Whether an unlabelled (KAI: off-scheduler) ``workload`` created in the namespace escapes
    every queue; None when a piece is unknown until apply."""
    if kueue is not None:
        required: tuple[str, ...] = (KUEUE_QUEUE_LABEL,)
        queued = [_kueue_queues(workload, s, model, place) for s in kueue]
        if True in queued:
            return False
    else:
        required = (KAI_QUEUE_LABEL, KAI_SCHEDULER_NAME)
        queued = [False]
    guarded = enforced(
        model,
        workload.kind,
        namespace=place.name,
        labels=place.labels,
        complete=place.complete,
        required=required,
    )
    if guarded:
        return False
    if None in queued or guarded is None:
        return None
    return True


def _report(
    reporter: Reporter, subject: KubeObject, ns: str, bypassing: list[Workload], *, kai: bool
) -> None:
    names = ", ".join(w.name for w in bypassing)
    if not kai:
        why = (
            f"lets users create {names} in team namespace {ns}, and an unlabelled one bypasses queues and quota: "
            f"Kueue ignores it (its integration -- {', '.join(w.framework for w in bypassing)} -- off, the namespace "
            "outside managedJobsNamespaceSelector, or manageJobsWithoutQueueName false with no LocalQueue 'default')"
        )
        fix = (
            f"bind a ValidatingAdmissionPolicy to namespace {ns} that denies them without {KUEUE_QUEUE_LABEL}, "
            f"or set manageJobsWithoutQueueName with the integrations on for {ns}, or stop granting create on them"
        )
    else:
        why = (
            f"lets users create {names} in namespace {ns} of a KAI cluster with nothing forcing schedulerName "
            f"{KAI_SCHEDULER_NAME} and a {KAI_QUEUE_LABEL} label: such a workload bypasses KAI's queues and quota"
        )
        fix = (
            f"bind a ValidatingAdmissionPolicy to namespace {ns} that denies them without schedulerName "
            f"{KAI_SCHEDULER_NAME} and the team's {KAI_QUEUE_LABEL}, or stop granting create on them"
        )
    reporter.violation(subject, why, fix)


def check_webhook_scope(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for release in model.kueue_releases():
        scope = _kueue_scope(release)
        if not isinstance(scope, KueueScope):
            reporter.cannot_check(release, "the Kueue controller Configuration is unknown or unreadable")
            continue
        if "pod" in scope.frameworks and (scope.selector is None or not _mentions_labels(scope.selector)):
            reporter.violation(
                release,
                "the pod integration is on with managedJobsNamespaceSelector left to every namespace, so "
                "Kueue's fail-closed pod webhook guards every pod in the cluster (a cluster-wide dependency on "
                "Kueue's webhook)",
                "set managedJobsNamespaceSelector to the team namespaces only (e.g. matchLabels on a "
                "label the team namespaces carry)",
            )


def _mentions_labels(selector: Mapping[str, Any]) -> bool:
    """A selector that opts namespaces *in* (matchLabels or In/Exists), not only NotIn exclusions."""
    if selector.get("matchLabels"):
        return True
    expressions = selector.get("matchExpressions")
    return any(
        isinstance(e, Mapping) and e.get("operator") in ("In", "Exists")
        for e in (expressions if isinstance(expressions, list) else [])
    )


POLICIES: list[Policy] = [
    stack_policy(
        "kueue-pod-bypass",
        "Nobody in a team namespace can create a Pod, Job or Ray workload that escapes its Kueue or KAI queue.",
        check_bypass,
    ),
    stack_policy(
        "kueue-pod-webhook-scope",
        "Kueue's pod integration is scoped to team namespaces, so its fail-closed pod webhook is not a cluster-wide dependency.",
        check_webhook_scope,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
]
