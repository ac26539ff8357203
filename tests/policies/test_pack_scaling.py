"""The pack's cost grows linearly with the stack (issue 6), checked without a clock.

Wall time is the benchmark's business (``make bench``); here the *work* is counted, which is
deterministic: every line the pack's own code executes while the SDK's analyzer servicer runs all
policies over a stack of N teams.  Each team adds the same objects, so linear code adds exactly
the same number of lines per team; a rule that scans the stack per object, or a lookup that walks
every object per reference, adds more with every team, and fails here.

The stack has what makes rules loop per team: a ClusterQueue per team in one cohort (borrowing),
a namespace with LocalQueues (every team's named alike), Ray jobs on Kueue and on KAI, a KAI queue
and a SkyPilot server per team; and per team some mistakes (broken references, an unlabelled GPU
Job, RayJobs the KAI-enabled (and old) KubeRay would reject, SkyPilot servers sharing an ingress
path), so the violation paths, which list alternatives, are counted too.

The second part pins the sharing in ``builders``: under the SDK's own analyzer servicer, one
``AnalyzeStack`` builds one stack model for all stack policies, and one ``Analyze`` converts a
resource at most once, however many resource policies judge it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import pytest
from google.protobuf import json_format, struct_pb2
from gpu_batch_policy.rules.kit import builders
from gpu_batch_policy.runtime.registry import ALL_POLICIES
from pulumi.runtime.proto import analyzer_pb2
from pulumi_policy import EnforcementLevel
from pulumi_policy.policy import _PolicyAnalyzerServicer

from components.queue_admission import JOB, QueueAdmissionArgs, binding_spec, policy_spec
from tests.policies.pack_harness import Res, run_all
from tests.policies.pack_objects import (
    admission_check,
    cluster_queue,
    cohort,
    gke_cluster,
    helm_release,
    k8s,
    kueue_release,
    local_queue,
    namespace,
    priority_class,
    provisioning_request_config,
    queued_pool,
    ray_job,
    resource_flavor,
)

if TYPE_CHECKING:
    from _typeshed import TraceFunction

# the whole pack (builders lives in rules/kit/, two levels below it)
PACK_DIR = str(Path(builders.__file__).resolve().parents[2]) + os.sep


def shared() -> list[Res]:
    """What every team shares: cluster, pool, flavor, checks, cohort, operators, priorities."""
    return [
        gke_cluster(),
        queued_pool(
            autoscaling={"totalMinNodeCount": 0.0, "totalMaxNodeCount": 10000.0, "locationPolicy": "ANY"}
        ),
        resource_flavor(),
        admission_check(),
        provisioning_request_config(),
        cohort("ml"),
        priority_class("prod-priority", 1000.0),
        kueue_release(),
        helm_release("kuberay", "kuberay/kuberay-operator", {"batchScheduler": {"name": "kai-scheduler"}}),
        helm_release(
            "kai", "oci://ghcr.io/nvidia/kai-scheduler/kai-scheduler", {"global": {"gpuSharing": True}}
        ),
        k8s("scheduling.run.ai/v2", "Queue", "department", spec={"resources": _kai_resources(-1.0)}),
    ]


def _kai_resources(quota: float) -> dict[str, Any]:
    return {r: {"quota": quota, "limit": -1.0, "overQuotaWeight": 1.0} for r in ("cpu", "gpu", "memory")}


def _gpu_pod() -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}


def team(i: int) -> list[Res]:
    """One team, with three mistakes (a LocalQueue to a missing ClusterQueue, a workload labelled
    for a missing LocalQueue, a GPU Job with no queue label) so violation paths run per team."""
    name = f"team-{i:04d}"
    cq = cluster_queue(
        name,
        cohortName="ml",
        namespaceSelector={"matchLabels": {"kubernetes.io/metadata.name": name}},
        admissionChecksStrategy={"admissionChecks": [{"name": "dws"}]},
        preemption={"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"},
    )
    job = ray_job(f"{name}-train", name, "queue", **{"kueue.x-k8s.io/priority-class": "prod-priority"})
    on_kai = ray_job(f"{name}-kai", name, None, **{"kai.scheduler/queue": name})
    on_kai.props["spec"]["submissionMode"] = "SidecarMode"
    return [
        namespace(name),
        cq,
        local_queue("queue", name, name),
        local_queue("orphan", name, f"{name}-missing"),  # broken: no such ClusterQueue
        job,
        on_kai,
        ray_job(f"{name}-lost", name, "no-such-queue"),  # broken: no such LocalQueue
        k8s("batch/v1", "Job", f"{name}-bypass", namespace=name, spec={"template": _gpu_pod()}),  # no label
        k8s(
            "scheduling.run.ai/v2",
            "Queue",
            name,
            spec={"parentQueue": "department", "resources": _kai_resources(1.0)},
        ),
        helm_release(
            f"skypilot-{name}",
            "skypilot/skypilot",
            {"apiService": {"config": "kubernetes:\n  kueue:\n    local_queue_name: queue\n"}},
            name,
        ),
        *_tenancy(name),
    ]


def _tenancy(name: str) -> list[Res]:
    """The team's Role, its binding to a Google Group, and the admission policy holding its Jobs
    to its queue (issue 19): the bypass and RBAC rules must stay linear in the teams too."""
    args = QueueAdmissionArgs(name, name, "kueue", ("queue",), (JOB,))
    admission, rbac = "admissionregistration.k8s.io/v1", "rbac.authorization.k8s.io/v1"
    return [
        k8s(admission, "ValidatingAdmissionPolicy", args.policy_name, spec=policy_spec(args)),
        k8s(admission, "ValidatingAdmissionPolicyBinding", args.policy_name, spec=binding_spec(args)),
        k8s(
            rbac,
            "Role",
            "submitter",
            namespace=name,
            rules=[{"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["create"]}],
        ),
        k8s(
            rbac,
            "RoleBinding",
            "submitter",
            namespace=name,
            roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "submitter"},
            subjects=[
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": f"{name}@example.com"}
            ],
        ),
    ]


def stack(teams: int) -> list[Res]:
    return shared() + [r for i in range(teams) for r in team(i)]


def _struct(props: dict[str, Any]) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    json_format.ParseDict(props, message)
    return message


def _servicer() -> Any:
    """The SDK's own analyzer servicer, in process: the calls the engine makes, without gRPC."""
    return _PolicyAnalyzerServicer(
        "gpu-batch",
        "0.0.1",
        ALL_POLICIES,
        EnforcementLevel.MANDATORY,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
    )


def _analyze_request(res: Res) -> analyzer_pb2.AnalyzeRequest:
    return analyzer_pb2.AnalyzeRequest(
        type=res.type, urn=res.urn, name=res.name, properties=_struct(res.props)
    )


def _stack_request(resources: list[Res]) -> analyzer_pb2.AnalyzeStackRequest:
    return analyzer_pb2.AnalyzeStackRequest(
        resources=[
            analyzer_pb2.AnalyzerResource(type=r.type, urn=r.urn, name=r.name, properties=_struct(r.props))
            for r in resources
        ]
    )


class Calls:
    """The calls a preview makes for ``resources``: ``Analyze`` per resource, one ``AnalyzeStack``.
    Requests are built up front, so running them is the pack's (and the SDK's) work only."""

    def __init__(self, resources: list[Res]) -> None:
        self.analyze = [_analyze_request(r) for r in resources]
        self.analyze_stack = _stack_request(resources)

    def run(self) -> list[str]:
        """Names of the policies that reported, once per finding."""
        servicer = _servicer()
        responses = [servicer.Analyze(request, None) for request in self.analyze]
        responses.append(servicer.AnalyzeStack(self.analyze_stack, None))
        return [d.policyName for response in responses for d in response.diagnostics]


def lines_executed(work: Callable[[], object]) -> int:
    """Lines of the pack's own modules executed by ``work`` (other code is not traced)."""
    count = 0

    def local(frame: FrameType, event: str, arg: Any) -> TraceFunction:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def calls(frame: FrameType, event: str, arg: Any) -> TraceFunction | None:
        return local if frame.f_code.co_filename.startswith(PACK_DIR) else None

    sys.settrace(calls)
    try:
        work()
    finally:
        sys.settrace(None)
    return count


@pytest.fixture
def no_other_tracer() -> Iterator[None]:
    if sys.gettrace() is not None:  # coverage or a debugger: counting would disturb it
        pytest.skip("another tracer is active")
    yield


def test_every_team_adds_the_same_work(no_other_tracer: None) -> None:
    """Work W(N) = a + b*N + c*N^2 for N teams: the second difference over N, 2N, 3N teams,
    W(3N) - 2*W(2N) + W(N) = 2*c*N^2, is exactly 0 for linear code (all teams have the same
    shape), and at least 2*N^2 = 50 lines for any loop that does one line per *pair* of teams
    (an object scan per reference, a cohort walk per queue, a "here are the alternatives" list per
    finding).  It is measured over the real call pattern: ``Analyze`` per resource, one
    ``AnalyzeStack``."""
    findings = Calls(stack(5)).run()  # also warms the token cache, so W(N) counts only the stack
    # The stack really exercises the rules: the mistakes are found for every team.
    for rule in ("kueue-localqueue-target-exists", "kueue-queue-label-resolves", "workload-has-queue-label"):
        assert findings.count(rule) == 5, rule
    work = [lines_executed(Calls(stack(teams)).run) for teams in (5, 10, 15)]
    per_team = (work[1] - work[0]) / 5
    curvature = work[2] - 2 * work[1] + work[0]
    assert curvature < 25, (
        f"teams 5/10/15 cost {work} lines: {per_team:.0f} per team, but {curvature} more for each "
        "further 5 teams -- some work grows with the square of the stack"
    )


# --- one model per analyzer call --------------------------------------------------------------
def test_one_analyze_stack_builds_one_model() -> None:
    resources = stack(3)
    request = _stack_request(resources)
    servicer = _servicer()
    before = builders.STACK_CACHE.builds
    first = servicer.AnalyzeStack(request, None)
    assert builders.STACK_CACHE.builds == before + 1  # ~30 stack policies, one model
    second = servicer.AnalyzeStack(request, None)
    assert builders.STACK_CACHE.builds == before + 2  # a new call never reuses the last one's model
    assert [d.message for d in first.diagnostics] == [d.message for d in second.diagnostics]
    # The shared model changes nothing: the same findings as each policy building its own.
    direct = run_all(resources)
    expected = sorted(m for name in direct for m in direct[name].messages)
    found = sorted(
        d.message.split("\n", 1)[1] for d in first.diagnostics if not d.message.startswith("can't")
    )
    assert found == expected and expected


def test_analyze_converts_a_resource_at_most_once() -> None:
    servicer = _servicer()
    queue = team(0)[1]
    before = builders.RESOURCE_CACHE.builds
    servicer.Analyze(_analyze_request(queue), None)  # seven resource policies judge a ClusterQueue
    assert builders.RESOURCE_CACHE.builds == before + 1
    # container-resource-quantities judges every Kubernetes object, a Namespace too: once.
    servicer.Analyze(_analyze_request(namespace("team-a")), None)
    assert builders.RESOURCE_CACHE.builds == before + 2
    account = Res("gcp:serviceaccount/account:Account", "sa", {"accountId": "sa"})
    servicer.Analyze(_analyze_request(account), None)  # no rule judges it: never converted
    assert builders.RESOURCE_CACHE.builds == before + 2
