"""Pod Security in the namespaces where tenants run work (issue 27 item 1).

GKE Standard configures no PodSecurity defaults, so a namespace without a
``pod-security.kubernetes.io/enforce`` label admits privileged pods, ``hostPath: /`` and
``hostNetwork`` -- one tenant pod away from the node and every Secret its kubelet can read.

* **namespace-pod-security** (advisory; mandatory in prod's config): a tenant namespace -- one
  holding a Kueue LocalQueue or a KubeRay workload -- whose declared labels enforce no level above
  ``privileged``.  A namespace the stack neither creates nor patches (``NamespacePatch``) has
  labels the pack cannot see (they live in another stack): not judged.
* **workload-pod-security** (mandatory: the pods can never be created): a pod template of any
  kind (the walker of every kind, ``workload_kinds.templates.every_template``: Ray groups, Jobs,
  Deployments, bare Pods, JobSets, LeaderWorkerSets, TrainJobs and their runtimes, MPIJobs and
  Kubeflow jobs, AppWrappers, ...) that the enforce level of its namespace, at its
  ``enforce-version`` or the cluster's minor, refuses.  KubeRay and the Job controller create
  the pods; PodSecurity refuses each one, so the workload never runs.  The checks are the
  upstream ones (:mod:`..pod_security.checks`, kubernetes/pod-security-admission v0.36.2
  ``policy/``; ``registry.go`` ``EvaluatePod`` for the baseline/restricted composition).  A
  RayJob's submitter pod is judged too (``workload_kinds.templates.ray_submitters``): KubeRay's
  default one carries no securityContext, so ``restricted`` refuses it and the job never starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, Policy

from ...facts.model import StackModel
from ...facts.pod_security import ENFORCE_LABEL, EnforcePolicy, cluster_minor, enforce_policy
from ...facts.pod_security.checks import Minor
from ...facts.selectors import namespace_labels
from ...facts.workload_kinds.templates import Skipped, every_template
from ...facts.workload_kinds.trainjob import RUNTIME_KINDS
from ...primitives.values import Unknown, dig
from ..kit.builders import stack_policy
from ..kit.report import Reporter

_SYSTEM = frozenset({"kube-system", "kube-public", "kube-node-lease"})


def _has_unknown(value: object) -> bool:
    if isinstance(value, Unknown):
        return True
    if isinstance(value, Mapping):
        return any(_has_unknown(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_unknown(v) for v in value)
    return False


def _minor(model: StackModel) -> Minor:
    """The cluster's minor: one GKE cluster's ``minMasterVersion``, else the newest GKE serves."""
    clusters = model.gke_clusters()
    return cluster_minor(clusters[0].res.get("minMasterVersion") if len(clusters) == 1 else None)


def tenant_namespaces(model: StackModel) -> dict[str, Any]:
    """Namespaces holding a LocalQueue or a KubeRay workload, sorted, each with the object a
    finding about it names: the Namespace when declared, else its first LocalQueue or workload.
    One pass (a scan per namespace made the pack quadratic in teams)."""

    def build() -> dict[str, Any]:
        subjects: dict[str, Any] = {}
        for holder in [*model.ray_workloads(), *model.local_queues()]:
            ns = holder.obj.namespace
            if isinstance(ns, str) and ns not in _SYSTEM:
                subjects[ns] = holder
        for declared in model.namespaces():
            if declared.obj.name in subjects:
                subjects[declared.obj.name] = declared
        return dict(sorted(subjects.items()))

    return model.memo("tenant_namespaces", build)


def _policy(model: StackModel, namespace: str) -> EnforcePolicy | None:
    """The enforce policy of ``namespace``; None when its labels are not declared (unknown)."""
    labels, complete = namespace_labels(model, namespace)
    raw = labels.get(ENFORCE_LABEL)
    if isinstance(raw, Unknown) or (raw is None and not complete):
        return None
    return enforce_policy(labels, _minor(model))


def check_namespaces(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    for namespace, subject in tenant_namespaces(model).items():
        policy = _policy(model, namespace)
        if policy is None:
            # Open world: a namespace this stack neither creates nor patches has its labels
            # elsewhere (another stack, by hand); a diagnostic per such namespace would be noise.
            continue
        if policy.level == "privileged":
            why = "has no enforce label" if policy.label is None else "enforces privileged"
            reporter.violation(
                subject,
                f"tenant namespace {namespace} {why}: PodSecurity admits privileged pods, hostPath "
                "volumes and hostNetwork there (GKE Standard sets no default level)",
                f"label the namespace {ENFORCE_LABEL}: baseline (or restricted)",
            )


def check_workloads(model: StackModel, reporter: Reporter, _config: Mapping[str, Any]) -> None:
    cache: dict[str, EnforcePolicy | None] = {}
    for owned in every_template(model):
        if owned.owner.kind in RUNTIME_KINDS:
            continue  # a training runtime's pods run in each TrainJob's namespace: judged there
        if owned.owner.kind == "PodTemplate":
            continue  # a core/v1 PodTemplate creates no pod; PodSecurity enforces on pods only
        namespace = owned.owner.namespace
        if not isinstance(namespace, str):
            continue
        if namespace not in cache:
            cache[namespace] = _policy(model, namespace)
        policy = cache[namespace]
        if policy is None or policy.level == "privileged":
            continue
        if isinstance(owned, Skipped):
            reporter.cannot_check(owned.owner, f"pod templates not judged for Pod Security: {owned.why}")
            continue
        raw = owned.template.raw
        if owned.synthesized:
            reporter.cannot_check(
                owned.owner,
                f"pod template {owned.name} is built by its operator from fields the pack does not model "
                "(security contexts included), so its Pod Security is not judged",
            )
            continue
        if isinstance(raw, Unknown) or _has_unknown(raw):
            reporter.cannot_check(owned.owner, f"pod template {owned.name} holds values unknown until apply")
            continue
        meta, spec = dig(raw, "metadata"), dig(raw, "spec")
        reasons = policy.forbidden(
            meta if isinstance(meta, Mapping) else {}, spec if isinstance(spec, Mapping) else {}
        )
        if reasons:
            version = f"v{policy.minor[0]}.{policy.minor[1]}"
            reporter.violation(
                owned.owner,
                f"pod template {owned.name} violates PodSecurity {policy.level}:{version} enforced "
                f"in namespace {namespace}, so every pod of it is refused: {'; '.join(reasons)}",
                "drop what the level forbids from the pod template, or run it in a namespace whose "
                "level allows it",
            )


POLICIES: list[Policy] = [
    stack_policy(
        "namespace-pod-security",
        "A namespace where tenants run work enforces a Pod Security level above privileged.",
        check_namespaces,
        enforcement_level=EnforcementLevel.ADVISORY,
    ),
    stack_policy(
        "workload-pod-security",
        "A pod template passes the Pod Security level its namespace enforces (upstream checks, at "
        "the cluster's minor).",
        check_workloads,
    ),
]
