"""``docs/security.md``'s claims, enforced by a real kube-apiserver v1.37.2 as the user each concerns.

A team member signs in with a client certificate whose organization is the team's Google Group
(what GKE's Google Groups for RBAC puts in a member's groups), so the RBAC authorizer judges the
team's RoleBinding of that group for real; platform service accounts (the Job controller that
turns a team's template into pods, KubeRay's operator, a SkyPilot task, MultiKueue's worker
account) are impersonated, as ``kubectl --as`` does.  Every claim is tested from both sides: what
is refused, with the API's own status code, reason and message, and what the team can still do.
Requests that would store something are server-side dry runs (``dryRun=All``): RBAC, mutating and
validating webhooks (Kueue's), ValidatingAdmissionPolicy and Pod Security all run, nothing is
stored.

Who answers, and how it says no, at kubernetes v1.37.2:

- RBAC: ``plugin/pkg/auth/authorizer/rbac/rbac.go`` ``RBACAuthorizer.Authorize`` finds no rule,
  so the request is refused before admission with 403 ``Forbidden`` and "User ... cannot <verb>
  resource ..." (``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go``
  ``forbiddenMessage``);
- ValidatingAdmissionPolicy: ``staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating/
  dispatcher.go`` ``dispatcher.Dispatch``: "ValidatingAdmissionPolicy '<policy>' with binding
  '<binding>' denied request: <message>", code from the validation's ``reason``
  (``policy_decision.go`` ``reasonToCode``: ``Forbidden`` is 403; our policies all say Forbidden);
- Pod Security: ``staging/src/k8s.io/pod-security-admission/admission/admission.go``
  ``EvaluatePod``: 403 "violates PodSecurity "baseline:latest": <check>", the check's
  ``ForbiddenReason`` from ``staging/src/k8s.io/pod-security-admission/policy/check_*.go``.

Clusters: the prod stack (two teams, every hardening) applied whole, Kueue's manager serving (the
session's ``shared_stack``, which ``test_stacks_apply`` checks too); the dev stack's tenancy
objects on the session's ``kueue_cluster``, which runs the dev stack's own Kueue (its team lives
in the pre-existing ``default`` namespace); and the tenancy objects (namespaces, service
accounts, roles, bindings, admission policies) of the skypilot stack and of a multiregion worker,
each on a cluster of its own with no release: no claim tested there needs an operator.  The map
from every claim of the document to these tests is :mod:`tests.live.security_claims`.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.live.cluster import Cluster, ControlPlane
from tests.live.pki import KeyPair
from tests.live.security_claims import (
    DOC,
    GUARANTEED,
    MULTIKUEUE,
    MULTIKUEUE_HEADING,
    TEST_MODULE,
    Claim,
    guaranteed_rows,
    section,
    sentences,
)
from tests.live.stacks import ClusterObjects, Deployment, deploy, deploy_to, stack_clusters
from tests.live.test_kueue_admission import KUEUE, gpu_job

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
SYSTEM_POOL_TAINT = "components.gke.io/gke-managed-components"
SERVICE_POLICY = "gpu-batch-tenant-services"
PLACEMENT_POLICY = "gpu-batch-tenant-placement"
BASELINE = "baseline:latest"
# the kinds the tenancy-only clusters get: who may do what, and the admission policies
TENANCY_KINDS = frozenset(
    {
        "Namespace",
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "ClusterRole",
        "ClusterRoleBinding",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
    }
)


# -- who sends, and what the server answered ------------------------------------------------


@dataclass(frozen=True)
class Who:
    """A requester: a client certificate (a team member), or an impersonated account."""

    name: str
    identity: KeyPair | None = None
    as_user: str | None = None
    groups: tuple[str, ...] = ()


def member(plane: ControlPlane, user: str, group: str) -> Who:
    """A team member as GKE sees one: their Google identity and their Google Group."""
    return Who(user, identity=plane.client_certificate(user, (group,)))


def service_account(namespace: str, name: str) -> Who:
    """A ServiceAccount, as its token authenticates (serviceaccount.UserInfo's groups)."""
    user = f"system:serviceaccount:{namespace}:{name}"
    groups = ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated")
    return Who(user, as_user=user, groups=groups)


# the Job controller: it makes a team's pods from the team's Job templates (kube-controller-manager
# runs it with this account's token; bootstrap ClusterRole system:controller:job-controller)
JOB_CONTROLLER = service_account("kube-system", "job-controller")
KUBERAY_OPERATOR = service_account("kuberay-system", "kuberay-operator")


@dataclass(frozen=True)
class Answer:
    status: int
    reason: str
    message: str
    body: Any = field(repr=False, default=None)

    @property
    def allowed(self) -> bool:
        return 200 <= self.status < 300


def call(
    cluster: Cluster,
    who: Who,
    method: str,
    path: str,
    body: Any = None,
    query: Mapping[str, str] | None = None,
) -> Answer:
    status, answer = cluster.request(
        method, path, body, query=query, identity=who.identity, as_user=who.as_user, groups=who.groups
    )
    detail = answer if isinstance(answer, dict) else {}
    return Answer(status, str(detail.get("reason", "")), str(detail.get("message", answer)), answer)


def create(cluster: Cluster, who: Who, obj: Mapping[str, Any]) -> Answer:
    """``obj`` created by ``who`` as a server-side dry run: every check runs, nothing is stored."""
    meta = obj["metadata"]
    path = cluster.path(obj["apiVersion"], obj["kind"], namespace=meta.get("namespace"))
    return call(cluster, who, "POST", path, dict(obj), query={"dryRun": "All"})


def read(cluster: Cluster, who: Who, api_version: str, kind: str, namespace: str, name: str = "") -> Answer:
    return call(cluster, who, "GET", cluster.path(api_version, kind, name or None, namespace))


def exec_into(cluster: Cluster, who: Who, namespace: str, pod: str) -> Answer:
    """``kubectl exec``'s request: create on the pods/exec subresource."""
    path = f"/api/v1/namespaces/{namespace}/pods/{pod}/exec"
    return call(cluster, who, "POST", path, query={"command": "sh", "stdout": "true"})


def can(
    cluster: Cluster, who: Who, verb: str, group: str, resource: str, namespace: str, name: str = ""
) -> bool:
    """The RBAC authorizer's answer for a request that cannot be sent here (Kueue's visibility
    API is an aggregated API served by a pod): a SelfSubjectAccessReview as ``who``."""
    kind, _, subresource = resource.partition("/")
    attributes = {"verb": verb, "group": group, "resource": kind, "namespace": namespace, "name": name}
    if subresource:
        attributes["subresource"] = subresource
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": attributes},
    }
    answer = call(cluster, who, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review)
    assert answer.status == 201, answer
    return bool(answer.body["status"]["allowed"])


def assert_allowed(answer: Answer, what: str) -> None:
    assert answer.allowed, f"{what}: expected allowed, got {answer.status} {answer.reason}: {answer.message}"


def assert_rbac_forbidden(
    answer: Answer, who: Who, verb: str, resource: str, group: str, namespace: str
) -> None:
    """Refused by the RBAC authorizer, before any admission plugin saw the request."""
    expected = (
        f'User "{who.as_user or who.name}" cannot {verb} resource "{resource}" in API group "{group}" '
        f'in the namespace "{namespace}"'
    )
    assert (answer.status, answer.reason) == (403, "Forbidden"), answer
    assert expected in answer.message, answer.message
    assert "ValidatingAdmissionPolicy" not in answer.message and "PodSecurity" not in answer.message


def assert_policy_denied(answer: Answer, policy: str, text: str) -> None:
    """Refused by our ValidatingAdmissionPolicy ``policy`` (its binding has the same name)."""
    assert (answer.status, answer.reason) == (403, "Forbidden"), answer
    prefix = f"ValidatingAdmissionPolicy '{policy}' with binding '{policy}' denied request: "
    assert prefix in answer.message, answer.message
    assert text in answer.message.split(prefix, 1)[1], answer.message


def assert_pod_security_denied(answer: Answer, check: str, level: str = BASELINE) -> None:
    assert (answer.status, answer.reason) == (403, "Forbidden"), answer
    assert f'violates PodSecurity "{level}": {check}' in answer.message, answer.message


# -- objects --------------------------------------------------------------------------------


def job(namespace: str, name: str, queue: str | None = "default", **labels: str) -> dict[str, Any]:
    obj = gpu_job(namespace, name, queue or "", 1)
    obj["metadata"]["labels"] = {**({QUEUE_LABEL: queue} if queue else {}), **labels}
    return obj


def ray_job(namespace: str, name: str, queue: str) -> dict[str, Any]:
    """A RayJob as Kueue's webhook admits one (kueue v0.19.2
    ``pkg/controller/jobs/rayjob/rayjob_webhook.go``: a cluster of its own, shut down after)."""
    container = {
        "name": "ray-head",
        "image": "rayproject/ray:2.52.0",
        "resources": {"requests": {"cpu": "1"}},
    }
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": name, "namespace": namespace, "labels": {QUEUE_LABEL: queue}},
        "spec": {
            "entrypoint": "python -c 'print(1)'",
            "suspend": True,
            "shutdownAfterJobFinishes": True,
            "rayClusterSpec": {
                "headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [container]}}}
            },
        },
    }


def pod(namespace: str, name: str, **spec: Any) -> dict[str, Any]:
    """A pod as the Job controller makes it from a team's template; ``spec`` adds to it, and a
    ``container`` key merges into the one container."""
    container = {"name": "main", "image": "busybox:1.36", "resources": {"requests": {"cpu": "1"}}}
    container.update(spec.pop("container", {}))
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"restartPolicy": "Never", "containers": [container], **spec},
    }


def service(namespace: str, name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"app": name}, "ports": [{"name": "dashboard", "port": 8265}], **spec},
    }


def secret(namespace: str, name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "stringData": {"token": f"{namespace}-token"},
    }


# -- the clusters ---------------------------------------------------------------------------


def tenancy_only(objects: ClusterObjects) -> ClusterObjects:
    """The section's RBAC, namespaces and admission policies, in registration order."""
    kept = [i for i, o in enumerate(objects.declared) if o.get("kind") in TENANCY_KINDS]
    return ClusterObjects(
        f"{objects.title} (tenancy objects)",
        tuple(objects.declared[i] for i in kept),
        frozenset(n for n, i in enumerate(kept) if i in objects.patches),
        (),
    )


def default_service_accounts(cluster: Cluster, namespaces: list[str]) -> None:
    """Each namespace's ``default`` ServiceAccount, as kube-controller-manager's ServiceAccount
    controller makes it (none runs here): admission refuses a pod whose account is missing."""
    accounts = [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": ns}}
        for ns in namespaces
    ]
    refused = [r for r in cluster.apply(accounts) if not r.accepted]
    assert not refused, refused


def team_namespaces(objects: ClusterObjects) -> list[str]:
    """The namespaces of the section's team Roles (``<team>-submitter``)."""
    return sorted(
        {
            o["metadata"]["namespace"]
            for o in objects.declared
            if o.get("kind") == "Role" and str(o["metadata"]["name"]).endswith("-submitter")
        }
    )


def wait_for_policies(cluster: Cluster, namespaces: list[str], policies: set[str]) -> None:
    """Wait until the admission policies just applied are in force: the API server compiles
    them from its informers on a 1 s refresh loop (kubernetes v1.37.2
    ``staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/generic/policy_source.go``,
    ``policyRefreshInterval``), so the first requests after the apply may pass unjudged.  The
    probes are dry runs as the admin (not a ``system:`` user, so every policy judges it)."""
    admin = Who("admin")
    probes = [
        probe
        for ns in namespaces
        for policy, probe in (
            ("gpu-batch-queue-", job(ns, "probe", "no-such-queue")),
            (SERVICE_POLICY, service(ns, "probe", type="NodePort")),
            (PLACEMENT_POLICY, pod(ns, "probe", tolerations=[{"operator": "Exists"}])),
        )
        if any(name.startswith(policy) for name in policies)
    ]

    def in_force() -> bool:
        answers = [create(cluster, admin, probe) for probe in probes]
        return all(a.status == 403 and "ValidatingAdmissionPolicy" in a.message for a in answers)

    cluster.wait_for(in_force, 30, f"the admission policies of {namespaces} to be in force", interval=0.5)


def check_deployed(deployment: Deployment) -> Cluster:
    assert not deployment.refused, "\n".join(map(str, deployment.refused))
    namespaces = team_namespaces(deployment.objects)
    default_service_accounts(deployment.cluster, namespaces)
    policies = {
        str(o["metadata"]["name"])
        for o in deployment.objects.declared
        if o.get("kind") == "ValidatingAdmissionPolicy"
    }
    wait_for_policies(deployment.cluster, namespaces, policies)
    return deployment.cluster


def tenancy_cluster(plane: ControlPlane, stack: str, index: int) -> Iterator[Cluster]:
    objects = tenancy_only(stack_clusters(stack)[index])
    deployment = deploy(plane, objects, name=f"claims-{stack}-{index}", platform=False)
    try:
        yield check_deployed(deployment)
    finally:
        deployment.cluster.stop()


@pytest.fixture(scope="module")
def prod(shared_stack: Deployment) -> Cluster:
    """The prod stack applied whole (the session's shared deployment): teams research and
    applied, Kueue serving its webhooks."""
    assert shared_stack.objects.title.startswith("cluster of Kubernetes provider 'gpu-batch-prod")
    cluster = check_deployed(shared_stack)
    # a Secret per team, written by the admin (what a team keeps its tokens in)
    results = cluster.apply([secret("research", "team-token"), secret("applied", "team-token")])
    assert all(r.accepted for r in results), results
    return cluster


@pytest.fixture(scope="module")
def research(control_plane: ControlPlane) -> Who:
    return member(control_plane, "alice@example.com", "ml-research@example.com")


@pytest.fixture(scope="module")
def applied(control_plane: ControlPlane) -> Who:
    return member(control_plane, "bob@example.com", "ml-applied@example.com")


# -- the prod stack: one team against the other ------------------------------------------------


def test_member_is_refused_outside_their_namespace(prod: Cluster, research: Who) -> None:
    """RBAC: the research Role binds ml-research@example.com in namespace research, nowhere else."""
    assert_rbac_forbidden(
        create(prod, research, job("applied", "train")), research, "create", "jobs", "batch", "applied"
    )
    assert_rbac_forbidden(
        create(prod, research, ray_job("applied", "train", "default")),
        research,
        "create",
        "rayjobs",
        "ray.io",
        "applied",
    )
    secret_read = read(prod, research, "v1", "Secret", "applied", "team-token")
    assert_rbac_forbidden(secret_read, research, "get", "secrets", "", "applied")
    assert_rbac_forbidden(
        read(prod, research, "v1", "Pod", "applied"), research, "list", "pods", "", "applied"
    )
    assert_rbac_forbidden(
        exec_into(prod, research, "applied", "head"), research, "create", "pods/exec", "", "applied"
    )
    workloads = read(prod, research, KUEUE, "Workload", "applied")
    assert_rbac_forbidden(workloads, research, "list", "workloads", "kueue.x-k8s.io", "applied")
    # and nothing cluster-wide: no namespace of its own, no pods of every namespace
    namespace = create(
        prod, research, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "mine"}}
    )
    assert (namespace.status, namespace.reason) == (403, "Forbidden"), namespace
    assert 'cannot create resource "namespaces" in API group "" at the cluster scope' in namespace.message
    everywhere = call(prod, research, "GET", "/api/v1/pods")
    assert (
        everywhere.status == 403
        and 'cannot list resource "pods" in API group "" at the cluster scope' in (everywhere.message)
    )


def test_member_works_in_their_namespace(prod: Cluster, research: Who, applied: Who) -> None:
    """What the Role still lets a team do, each request through the whole admission chain."""
    submitted = create(prod, research, job("research", "train"))
    assert_allowed(submitted, "a Job in the team's queue")
    assert submitted.body["spec"]["suspend"] is True  # Kueue's webhook holds it for admission
    assert_allowed(
        create(prod, research, ray_job("research", "tune", "h100")), "a RayJob in the team's queue"
    )
    own = read(prod, research, "v1", "Secret", "research", "team-token")
    assert_allowed(own, "reading the team's own Secret")
    assert own.body["data"]["token"]  # the value itself, not only the name
    assert_allowed(create(prod, research, secret("research", "wandb")), "writing a Secret")
    assert_allowed(read(prod, research, KUEUE, "Workload", "research"), "listing the team's Workloads")
    assert_allowed(read(prod, research, KUEUE, "LocalQueue", "research"), "listing the team's LocalQueues")
    assert_allowed(read(prod, research, "v1", "Pod", "research"), "listing the team's pods")
    # exec is authorized: the server looks for the pod (there is none) instead of refusing
    reached = exec_into(prod, research, "research", "head")
    assert (reached.status, reached.reason) == (404, "NotFound"), reached
    # the other team likewise in its own namespace
    assert_allowed(create(prod, applied, job("applied", "serve")), "the applied team's Job")
    # where its workloads wait: Kueue's visibility API, for its own LocalQueues only
    pending = ("get", "visibility.kueue.x-k8s.io", "localqueues/pendingworkloads")
    assert can(prod, research, *pending, "research", "default")
    assert not can(prod, research, *pending, "applied", "default")


def test_member_cannot_make_a_local_queue(prod: Cluster, research: Who) -> None:
    """A LocalQueue is the door to a ClusterQueue's quota: members only read them."""
    queue = {
        "apiVersion": KUEUE,
        "kind": "LocalQueue",
        "metadata": {"name": "borrowed", "namespace": "research"},
        "spec": {"clusterQueue": "applied-h100"},
    }
    assert_rbac_forbidden(
        create(prod, research, queue), research, "create", "localqueues", "kueue.x-k8s.io", "research"
    )
    existing = read(prod, research, KUEUE, "LocalQueue", "research", "default")
    assert_allowed(existing, "reading the team's LocalQueue")
    assert existing.body["spec"]["clusterQueue"] == "research-l4"


def test_workload_outside_the_team_queues_is_refused(prod: Cluster, research: Who) -> None:
    """The queue policy (components/queue_admission.py): only the team's LocalQueues."""
    policy = "gpu-batch-queue-research"
    expected = "must carry label kueue.x-k8s.io/queue-name naming one of the queues of team research"
    for queue in ("applied-h100", "research-h100", "elsewhere"):  # ClusterQueue names are not LocalQueues
        refused = create(prod, research, job("research", "train", queue))
        assert_policy_denied(refused, policy, f"{expected} (default, ")
        assert refused.message.endswith(f'got "{queue}"'), refused.message
    assert_policy_denied(create(prod, research, ray_job("research", "tune", "applied-l4")), policy, expected)
    # every queue of its own is accepted
    for queue in ("default", "h100", "l4"):
        assert_allowed(create(prod, research, job("research", f"train-{queue}", queue)), f"queue {queue}")


def test_unlabelled_job_goes_to_the_team_default_queue(prod: Cluster, research: Who) -> None:
    """No label is no escape: Kueue's mutating webhook names the namespace's LocalQueue
    ``default`` (kueue v0.19.2 ``pkg/controller/jobframework/defaults.go``
    ``ApplyDefaultLocalQueueWithManagedJobsNamespaceSelector``) before the policy looks.

    The webhook asks Kueue's queue manager whether the namespace has a ``default`` LocalQueue
    (``pkg/cache/queue/manager.go`` ``DefaultLocalQueueExist``), which learns it in the LocalQueue
    controller's Create handler (``localqueue_controller.go`` ``Create``: ``AddLocalQueue``).
    Right after the stack is applied that may not have happened yet (CI saw the label missing),
    so the test waits until the controller has reconciled the queue (it writes its ``Active``
    condition after the handler ran), as a user's first Job after a deploy would have to."""
    prod.wait_for(
        lambda: any(
            c.get("type") == "Active"
            for c in ((prod.get(KUEUE, "LocalQueue", "default", "research") or {}).get("status") or {}).get(
                "conditions", []
            )
        ),
        timeout=60,
        what="Kueue's LocalQueue controller to reconcile research/default",
    )
    answer = create(prod, research, job("research", "untagged", queue=None))
    assert_allowed(answer, "an unlabelled Job")
    assert answer.body["metadata"]["labels"][QUEUE_LABEL] == "default"
    assert answer.body["spec"]["suspend"] is True


def test_pod_security_refuses_what_baseline_forbids(prod: Cluster) -> None:
    """Pod Security at the namespace's ``baseline``, judged on the pod whoever makes it: here the
    Job controller making a team's pods from its template (pod templates in Jobs only warn)."""
    ns = "research"
    cases = {
        "privileged": pod(ns, "p1", container={"securityContext": {"privileged": True}}),
        "host namespaces": pod(ns, "p2", hostNetwork=True),
        "hostPath volumes": pod(ns, "p3", volumes=[{"name": "root", "hostPath": {"path": "/"}}]),
        "hostPort": pod(ns, "p4", container={"ports": [{"containerPort": 80, "hostPort": 80}]}),
        "non-default capabilities": pod(
            ns, "p5", container={"securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}}}
        ),
    }
    for check, obj in cases.items():
        assert_pod_security_denied(create(prod, JOB_CONTROLLER, obj), check)
    for shared in ("hostPID", "hostIPC"):
        assert_pod_security_denied(
            create(prod, JOB_CONTROLLER, pod(ns, "p6", **{shared: True})), "host namespaces"
        )
    # what baseline leaves: a plain pod, an added NET_BIND_SERVICE, a GPU, a CSI volume
    allowed = pod(
        ns,
        "ok",
        container={
            "securityContext": {"capabilities": {"add": ["NET_BIND_SERVICE"]}},
            "resources": {"limits": {"nvidia.com/gpu": 1}},
        },
        volumes=[{"name": "data", "csi": {"driver": "gcsfuse.csi.storage.gke.io"}}],
    )
    assert_allowed(create(prod, JOB_CONTROLLER, allowed), "a baseline pod")
    assert_allowed(create(prod, JOB_CONTROLLER, pod("applied", "ok")), "a baseline pod of the other team")


def test_services_are_cluster_ip_only(prod: Cluster, research: Who) -> None:
    """The Service policy (components/service_admission.py), for members and KubeRay alike."""
    cluster_ip_only = "a team namespace holds only ClusterIP Services"
    for kind in ("LoadBalancer", "NodePort"):
        refused = create(prod, research, service("research", "dash", type=kind))
        assert_policy_denied(refused, SERVICE_POLICY, f"Service dash is type {kind}: {cluster_ip_only}")
    external_name = create(
        prod, research, service("research", "alias", type="ExternalName", externalName="x.io")
    )
    assert_policy_denied(external_name, SERVICE_POLICY, cluster_ip_only)
    captured = create(prod, research, service("research", "dash", externalIPs=["203.0.113.7"]))
    assert_policy_denied(captured, SERVICE_POLICY, "a team namespace's Services may not set externalIPs")
    # KubeRay creating a head's Service with the type the team wrote: refused as well
    by_operator = create(prod, KUBERAY_OPERATOR, service("research", "head-svc", type="LoadBalancer"))
    assert_policy_denied(by_operator, SERVICE_POLICY, "is type LoadBalancer")
    # what stays: ClusterIP, explicit or by default, by both
    assert_allowed(create(prod, research, service("research", "dash")), "a ClusterIP Service")
    assert_allowed(create(prod, research, service("research", "dash2", type="ClusterIP")), "type ClusterIP")
    assert_allowed(
        create(prod, KUBERAY_OPERATOR, service("research", "head-svc")), "KubeRay's ClusterIP head"
    )


def test_priority_classes_are_the_team_own(prod: Cluster, research: Who, applied: Who) -> None:
    """research may use dev-priority only; applied both (Pulumi.prod.yaml teams[].priorityClasses)."""
    policy = "gpu-batch-queue-research"
    labelled = create(prod, research, job("research", "rush", **{PRIORITY_LABEL: "prod-priority"}))
    assert_policy_denied(
        labelled, policy, "names priority class prod-priority: team research may use only dev-priority"
    )
    in_spec = job("research", "rush")
    in_spec["spec"]["template"]["spec"]["priorityClassName"] = "prod-priority"
    assert_policy_denied(
        create(prod, research, in_spec),
        policy,
        "the pod spec names a PriorityClass team research may not use",
    )
    assert_allowed(
        create(prod, research, job("research", "exp", **{PRIORITY_LABEL: "dev-priority"})), "dev-priority"
    )
    assert_allowed(
        create(prod, applied, job("applied", "rush", **{PRIORITY_LABEL: "prod-priority"})),
        "prod-priority for the team given it",
    )


def test_no_team_pod_tolerates_the_system_pool(prod: Cluster) -> None:
    """The placement policy (components/pool_admission.py), for the pods the Job controller makes."""
    tolerations: list[dict[str, Any]] = [
        {"key": SYSTEM_POOL_TAINT, "operator": "Exists"},
        {"key": SYSTEM_POOL_TAINT, "value": "true", "effect": "NoSchedule"},
        {"operator": "Exists"},  # tolerates every taint, this one included
    ]
    for n, toleration in enumerate(tolerations):
        refused = create(prod, JOB_CONTROLLER, pod("applied", f"t{n}", tolerations=[toleration]))
        assert_policy_denied(
            refused, PLACEMENT_POLICY, f"Pod t{n} tolerates the system pool taint {SYSTEM_POOL_TAINT}"
        )
    kept = [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "cloud.google.com/gke-queued", "value": "true", "effect": "NoSchedule"},
        {"key": SYSTEM_POOL_TAINT, "value": "true", "effect": "NoExecute"},  # another effect: not this taint
    ]
    assert_allowed(create(prod, JOB_CONTROLLER, pod("applied", "gpu", tolerations=kept)), "GPU tolerations")


def test_no_team_right_in_kueue_system(prod: Cluster, research: Who) -> None:
    """Where Kueue keeps its Secrets (a MultiKueue manager: each worker's kubeconfig)."""
    assert_rbac_forbidden(
        read(prod, research, "v1", "Secret", "kueue-system"), research, "list", "secrets", "", "kueue-system"
    )
    assert_rbac_forbidden(
        exec_into(prod, research, "kueue-system", "kueue-controller-manager"),
        research,
        "create",
        "pods/exec",
        "",
        "kueue-system",
    )
    assert_allowed(read(prod, research, "v1", "Secret", "research"), "the team's own Secrets")


# -- the dev stack: a team in a namespace that existed before ----------------------------------


@pytest.fixture(scope="module")
def dev(kueue_cluster: Cluster) -> tuple[Cluster, ClusterObjects]:
    """The dev stack's tenancy objects on the session's ``kueue_cluster``, which runs the dev
    stack's own Kueue release and configuration.  They touch only ``default`` (the dev team's
    namespace), which the other tests of that cluster leave alone."""
    (objects,) = stack_clusters("dev")
    tenancy = tenancy_only(objects)
    check_deployed(deploy_to(kueue_cluster, tenancy, platform=False))
    return kueue_cluster, tenancy


def test_existing_namespace_is_labelled_and_managed(
    dev: tuple[Cluster, ClusterObjects], control_plane: ControlPlane
) -> None:
    """``default`` is the API server's own; the stack's NamespacePatch labels it, so Pod Security
    and Kueue's ``managedJobsNamespaceSelector`` reach the team's work there."""
    dev_cluster, objects = dev
    (patch,) = [objects.declared[i] for i in objects.patches if objects.declared[i]["kind"] == "Namespace"]
    assert patch["metadata"]["name"] == "default"
    namespace = dev_cluster.get("v1", "Namespace", "default")
    assert namespace is not None
    labels = namespace["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "baseline"
    assert patch["metadata"]["labels"].items() <= labels.items()  # every label of the patch
    assert labels["kubernetes.io/metadata.name"] == "default"  # the server's own label is kept
    managers = {m["manager"] for m in namespace["metadata"]["managedFields"]}
    assert any(m.startswith("gpu-batch-live-patch-") for m in managers), managers  # the patch, not a create

    assert_pod_security_denied(
        create(
            dev_cluster,
            JOB_CONTROLLER,
            pod("default", "p", container={"securityContext": {"privileged": True}}),
        ),
        "privileged",
    )
    assert_allowed(create(dev_cluster, JOB_CONTROLLER, pod("default", "ok")), "a baseline pod in default")

    ml = member(control_plane, "carol@example.com", "ml-engineers@example.com")
    train = job("default", "train", "user-queue")
    train["spec"]["suspend"] = False
    stored = dev_cluster.apply([train], identity=ml.identity)[0]
    assert stored.accepted, stored
    assert stored.object is not None and stored.object["spec"]["suspend"] is True  # Kueue's webhook

    def workload() -> dict[str, Any] | None:
        for wl in dev_cluster.list(KUEUE, "Workload", "default"):
            if any(o.get("name") == "train" for o in wl["metadata"].get("ownerReferences") or []):
                return wl
        return None

    # Kueue's job reconciler took it: it manages jobs only where the namespace selector matches
    found = dev_cluster.wait_for(workload, 30, "Kueue to make the Job's Workload in default")
    assert found["spec"]["queueName"] == "user-queue"


# -- the skypilot stack: a task's token ----------------------------------------------------------


@pytest.fixture(scope="module")
def skypilot(control_plane: ControlPlane) -> Iterator[Cluster]:
    yield from tenancy_cluster(control_plane, "skypilot", 0)


def test_skypilot_task_token_only_tears_its_cluster_down(skypilot: Cluster) -> None:
    """components/skypilot.py TASK_RULES: list and delete its namespace's pods and services."""
    task = service_account("team1", "skypilot-team1-tasks")
    forbidden = [
        (read(skypilot, task, "v1", "Secret", "team1"), "list", "secrets", ""),
        (exec_into(skypilot, task, "team1", "sky-head"), "create", "pods/exec", ""),
        (create(skypilot, task, pod("team1", "sneak")), "create", "pods", ""),
        (create(skypilot, task, service("team1", "open", type="LoadBalancer")), "create", "services", ""),
        (create(skypilot, task, service("team1", "quiet")), "create", "services", ""),
    ]
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "miner", "namespace": "team1"},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": pod("team1", "x") | {"metadata": {"labels": {"a": "b"}}},
        },
    }
    forbidden.append((create(skypilot, task, deployment), "create", "deployments", "apps"))
    for answer, verb, resource, group in forbidden:
        assert_rbac_forbidden(answer, task, verb, resource, group, "team1")
    # nothing in the other team's namespace either
    assert_rbac_forbidden(read(skypilot, task, "v1", "Pod", "team2"), task, "list", "pods", "", "team2")
    # what it is for: find its cluster's pods and services and delete them
    assert_allowed(read(skypilot, task, "v1", "Pod", "team1"), "listing its pods")
    assert_allowed(read(skypilot, task, "v1", "Service", "team1"), "listing its services")
    for kind in ("Pod", "Service"):
        gone = call(
            skypilot, task, "DELETE", skypilot.path("v1", kind, "sky-head", "team1"), query={"dryRun": "All"}
        )
        assert (gone.status, gone.reason) == (404, "NotFound"), (kind, gone)  # authorized; no such object
    collection = call(
        skypilot, task, "DELETE", skypilot.path("v1", "Service", namespace="team1"), query={"dryRun": "All"}
    )
    # deletecollection (SkyPilot's _delete_cluster_services) is authorized: RBAC runs before the
    # handler, so a refusal would be 403 whatever the handler then says
    assert collection.status != 403 and collection.status in (200, 405), collection


# -- the multiregion stack: a worker is held like a single cluster ----------------------------------


@pytest.fixture(scope="module")
def worker(control_plane: ControlPlane) -> Iterator[Cluster]:
    yield from tenancy_cluster(control_plane, "multiregion", 1)


def test_worker_holds_the_team_rules(worker: Cluster, research: Who) -> None:
    """The team Role, Pod Security and the queue, Service and placement policies, on a worker."""
    assert_rbac_forbidden(
        create(worker, research, job("kueue-system", "x")),
        research,
        "create",
        "jobs",
        "batch",
        "kueue-system",
    )
    assert_rbac_forbidden(
        read(worker, research, "v1", "Secret", "kueue-system"),
        research,
        "list",
        "secrets",
        "",
        "kueue-system",
    )
    assert_policy_denied(
        create(worker, research, job("research", "train", "elsewhere")),
        "gpu-batch-queue-research",
        'naming one of the queues of team research (default), got "elsewhere"',
    )
    assert_policy_denied(
        create(worker, research, service("research", "dash", type="LoadBalancer")),
        SERVICE_POLICY,
        "is type LoadBalancer",
    )
    assert_policy_denied(
        create(worker, JOB_CONTROLLER, pod("research", "t", tolerations=[{"operator": "Exists"}])),
        PLACEMENT_POLICY,
        "tolerates the system pool taint",
    )
    assert_pod_security_denied(
        create(worker, JOB_CONTROLLER, pod("research", "h", hostNetwork=True)), "host namespaces"
    )
    assert_allowed(create(worker, research, job("research", "train")), "the team's Job on the worker")
    assert_allowed(create(worker, research, service("research", "dash")), "a ClusterIP Service on the worker")
    assert_allowed(create(worker, JOB_CONTROLLER, pod("research", "ok")), "a baseline pod on the worker")


def test_worker_multikueue_token_reaches_jobs_not_secrets(worker: Cluster) -> None:
    """MultiKueue's worker account (components/multikueue.py, create-multikueue-kubeconfig.sh's
    rules): the enabled integrations' jobs and Workloads in every namespace, nothing else."""
    manager = service_account("kueue-system", "multikueue-sa")
    mirrored = job("research", "train")
    assert_allowed(create(worker, manager, mirrored), "the manager's Kueue creating a mirrored Job")
    assert_allowed(read(worker, manager, "batch/v1", "Job", "research"), "reading the team's Jobs")
    assert_rbac_forbidden(
        read(worker, manager, "v1", "Secret", "research"), manager, "list", "secrets", "", "research"
    )
    assert_rbac_forbidden(
        exec_into(worker, manager, "research", "head"), manager, "create", "pods/exec", "", "research"
    )
    assert_rbac_forbidden(
        read(worker, manager, "v1", "Secret", "kueue-system"), manager, "list", "secrets", "", "kueue-system"
    )


# -- the map: every claim of docs/security.md has a live test or a reason ----------------------------


def live_tests() -> set[str]:
    module = sys.modules[__name__]
    return {name for name, fn in inspect.getmembers(module, inspect.isfunction) if name.startswith("test_")}


def check_claim(claim: Claim) -> None:
    assert claim.live or claim.not_live, f"neither a live test nor a reason: {claim.quote}"
    unknown = set(claim.live) - live_tests()
    assert not unknown, f"{claim.quote}: no such test in {TEST_MODULE}: {unknown}"


def check_guaranteed(text: str) -> None:
    """Every row of "Guaranteed" has an entry, every entry a row, and the row's "Checked by"
    names the entry's live tests."""
    rows = guaranteed_rows(text)
    mapped = {c.quote: c for c in GUARANTEED}
    missing = [r.between_tenants for r in rows if r.between_tenants not in mapped]
    assert not missing, f"Guaranteed rows with no entry in tests/live/security_claims.py: {missing}"
    stale = set(mapped) - {r.between_tenants for r in rows}
    assert not stale, f"entries for rows the document no longer has: {stale}"
    for row in rows:
        claim = mapped[row.between_tenants]
        check_claim(claim)
        for name in claim.live:
            assert name in row.checked_by and TEST_MODULE in row.checked_by, (row.between_tenants, name)


def check_multikueue(text: str) -> None:
    """Every sentence of "MultiKueue workers" contains an entry's quote, every quote is there."""
    prose = section(text, MULTIKUEUE_HEADING)
    for sentence in sentences(prose):
        assert any(c.quote in sentence for c in MULTIKUEUE), (
            f"a MultiKueue sentence with no entry: {sentence[:100]}"
        )
    flat = " ".join(prose.split())
    for claim in MULTIKUEUE:
        assert claim.quote in flat, f"an entry whose sentence the document no longer has: {claim.quote}"
        check_claim(claim)
        for name in claim.live:
            assert name in flat, (claim.quote, name)


MAP_TESTS = frozenset(
    {
        "test_every_claim_has_a_live_test_or_a_reason",
        "test_every_live_test_enforces_a_claim",
        "test_the_map_check_fails_for_an_unmapped_claim",
    }
)


def test_every_claim_has_a_live_test_or_a_reason() -> None:
    text = DOC.read_text()
    assert len(guaranteed_rows(text)) >= 10
    check_guaranteed(text)
    check_multikueue(text)


def test_every_live_test_enforces_a_claim() -> None:
    """A live test here that no entry names is a claim the map lost."""
    named = {name for claim in (*GUARANTEED, *MULTIKUEUE) for name in claim.live}
    assert live_tests() - MAP_TESTS == named, (live_tests() - MAP_TESTS) ^ named


def test_the_map_check_fails_for_an_unmapped_claim() -> None:
    """A row or a sentence added to the document without a live test or a reason breaks the suite."""
    text = DOC.read_text()
    row = "| Teams cannot read each other's minds | telepathy | nothing |\n"
    anchor = "| No tenant exposes a port outside the cluster |"
    with pytest.raises(AssertionError, match="Guaranteed rows with no entry"):
        check_guaranteed(text.replace(anchor, row + anchor))
    heading = MULTIKUEUE_HEADING + "\n"
    with pytest.raises(AssertionError, match="a MultiKueue sentence with no entry"):
        check_multikueue(text.replace(heading, heading + "\nA worker never loses a job. "))
    # a row whose "Checked by" no longer names its live test
    unnamed = text.replace(", `test_member_cannot_make_a_local_queue`", "")
    assert unnamed != text
    with pytest.raises(AssertionError, match="test_member_cannot_make_a_local_queue"):
        check_guaranteed(unnamed)
    with pytest.raises(AssertionError, match="neither a live test nor a reason"):
        check_claim(Claim("a new row"))
    with pytest.raises(AssertionError, match="no such test"):
        check_claim(Claim("a new row", live=("test_that_does_not_exist",)))
