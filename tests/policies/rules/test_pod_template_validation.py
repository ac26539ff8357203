"""Every pod template in every kind passes the core API's pod validation (issue 42 item 2).

Cases from kubernetes/kubernetes v1.37.2 ``pkg/apis/core/validation/validation_test.go``:
``TestValidatePod`` (the "invalid extended resource ..." and "valid extended resources ..."
entries), ``TestValidateResourceRequirements`` (hugepages with cpu or memory),
``TestValidateContainers`` / ``TestValidateInitContainers`` (duplicate names, probes on init
containers), ``TestValidatePorts``, ``TestValidateVolumeMounts``, ``TestValidateProbe`` /
``TestValidateHandler``, ``TestValidateVolumes``, ``TestValidatePodSpec`` (tolerations, affinity);
``pkg/apis/batch/validation/validation_test.go`` (a Job's ``restartPolicy``).  The walker is
checked against Kueue v0.19.2's integration registry (``facts/workload_kinds/registry.py``).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from gpu_batch_policy.facts.model import StackModel
from gpu_batch_policy.facts.schema.pod_spec import validate_pod_template
from gpu_batch_policy.facts.workload_kinds.registry import INTEGRATIONS
from gpu_batch_policy.facts.workload_kinds.templates import WALKERS, Skipped, Template, every_template
from gpu_batch_policy.rules.api_server import pod_templates
from gpu_batch_policy.rules.tenancy import pod_security

from tests.policies.test_trainjob_pod_sets import node_template, rjob, runtime, trainjob
from tests.policies.workload_stack import UNKNOWN, Registration, k8s, run

RULE = pod_templates.POLICIES[0]
SECURITY = {p.name: p for p in pod_security.POLICIES}["workload-pod-security"]


def container(
    name: str = "c",
    requests: dict[str, Any] | None = None,
    limits: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    return {"name": name, "image": "busybox", "resources": resources, **extra}


def template(*containers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"spec": {"containers": list(containers) or [container()], **spec}}


def problems(raw: dict[str, Any], owner: Any = "pod") -> list[str]:
    return [str(v) for v in validate_pod_template(raw, owner)]


class TestResources:
    """``TestValidatePod`` extended-resource entries and ``TestValidateResourceRequirements``."""

    @pytest.mark.parametrize(
        ("requests", "limits", "expected"),
        [
            ({"invalid-name": "2"}, {"invalid-name": "2"}, "must be a standard resource for containers"),
            ({"example.com/a": "2"}, {"example.com/a": "1"}, "must be equal to example.com/a limit of 1"),
            ({"example.com/a": "2"}, {}, "Limit must be set for non overcommitable resources"),
            ({"example.com/a": "500m"}, {"example.com/a": "500m"}, "must be an integer"),
            ({"example.com/a": "5"}, {"example.com/a": "2.5"}, "must be an integer"),
            ({"nvidia.com/gpu": "1"}, None, "Limit must be set"),
            ({"cpu": "2"}, {"cpu": "1"}, "must be less than or equal to cpu limit of 1"),
            ({"hugepages-2Mi": "2Mi"}, {"hugepages-2Mi": "2Mi"}, "HugePages require cpu or memory"),
            (
                {"memory": "1Gi", "hugepages-2Mi": "3Mi"},
                {"hugepages-2Mi": "3Mi"},
                "not a positive integer multiple",
            ),
            (
                {"memory": "1Gi", "hugepages-2Mi": "2Mi"},
                {"hugepages-2Mi": "4Mi"},
                "must be equal to hugepages-2Mi",
            ),
            ({"cpu": "-1"}, None, "must be greater than or equal to 0"),
        ],
    )
    def test_refused_as_upstream_refuses(self, requests: Any, limits: Any, expected: str) -> None:
        found = problems(template(container(requests=requests, limits=limits)))
        assert any(expected in p for p in found), found

    @pytest.mark.parametrize(
        ("requests", "limits"),
        [
            ({"example.com/a": "10"}, {"example.com/a": "10"}),  # "valid extended resources"
            (None, {"nvidia.com/gpu": "8"}),  # a template's request is not defaulted, and need not be
            ({"cpu": "10", "hugepages-2Mi": "2Mi"}, {"cpu": "10", "hugepages-2Mi": "2Mi"}),
            ({"hugepages-2Mi": "2Mi"}, {"hugepages-2Mi": "2Mi", "cpu": "10"}),
            ({"cpu": "500m", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"}),
            ({"cpu": "1", "kubernetes.io/batch-cpu": "1"}, None),  # native, overcommit allowed
            (
                {"nvidia.com/gpu": "12 "},
                {"nvidia.com/gpu": "1"},
            ),  # unparseable: container-resource-quantities'
            ({"nvidia.com/gpu": UNKNOWN}, {"nvidia.com/gpu": "1"}),
        ],
    )
    def test_valid_requirements_pass(self, requests: Any, limits: Any) -> None:
        assert problems(template(container(requests=requests, limits=limits))) == []


class TestPodSpec:
    @pytest.mark.parametrize(
        ("raw", "expected"),
        [
            (template(container("a"), container("a")), "Duplicate value: 'a'"),
            (template(container("Bad_Name")), "RFC 1123 label"),
            (template(container(image="")), "needs an image"),
            ({"spec": {"containers": []}}, "at least one container"),
            (template(container("a"), initContainers=[container("a")]), "Duplicate value: 'a'"),
            (template(container(ports=[{"containerPort": 0}])), "containerPort: Required value"),
            (template(container(ports=[{"containerPort": 70000}])), "between 1 and 65535"),
            (template(container(ports=[{"containerPort": 80, "name": "http_port"}])), "alpha-numeric"),
            (
                template(
                    container(ports=[{"containerPort": 80, "name": "p"}, {"containerPort": 81, "name": "p"}])
                ),
                "duplicate port name",
            ),
            (
                template(container(volumeMounts=[{"name": "data", "mountPath": "/d"}])),
                "is no volume of the pod",
            ),
            (
                template(
                    container(
                        volumeMounts=[{"name": "a", "mountPath": "/d"}, {"name": "b", "mountPath": "/d"}]
                    ),
                    volumes=[{"name": "a", "emptyDir": {}}, {"name": "b", "emptyDir": {}}],
                ),
                "must be unique",
            ),
            (
                template(volumes=[{"name": "a", "emptyDir": {}}, {"name": "a", "emptyDir": {}}]),
                "Duplicate value",
            ),
            (
                template(volumes=[{"name": "a", "emptyDir": {}, "hostPath": {"path": "/x"}}]),
                "more than 1 volume type",
            ),
            (
                template(container(livenessProbe={"successThreshold": 2, "exec": {"command": ["x"]}})),
                "must be 1",
            ),
            (template(container(readinessProbe={})), "must specify a handler type"),
            (
                template(container(readinessProbe={"exec": {"command": ["x"]}, "tcpSocket": {"port": 1}})),
                "more than 1 handler type",
            ),
            (
                template(initContainers=[container("i", livenessProbe={"exec": {"command": ["x"]}})]),
                "may not be set for init containers without restartPolicy=Always",
            ),
            (
                template(container(securityContext={"privileged": True, "allowPrivilegeEscalation": False})),
                "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
            ),
            (
                template(tolerations=[{"operator": "Equal", "value": "x"}]),
                "operator must be Exists when `key` is empty",
            ),
            (template(tolerations=[{"key": "a", "operator": "Exists", "value": "x"}]), "value must be empty"),
            (
                template(tolerations=[{"key": "a", "tolerationSeconds": 5, "effect": "NoSchedule"}]),
                "NoExecute",
            ),
            (template(tolerations=[{"key": "a", "effect": "NoRun"}]), "unsupported value 'NoRun'"),
            (
                template(
                    affinity={
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}
                        }
                    }
                ),
                "at least one node selector term",
            ),
            (
                template(
                    affinity={
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "In"}]}]
                            }
                        }
                    }
                ),
                "must be specified when `operator` is 'In' or 'NotIn'",
            ),
            (
                template(
                    affinity={
                        "podAntiAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {}}]
                        }
                    }
                ),
                "topologyKey: Required value",
            ),
            (
                template(nodeSelector={"cloud.google.com/gke-accelerator": "nvidia h100"}),
                "must be empty or alphanumerics",
            ),
        ],
    )
    def test_refused_as_upstream_refuses(self, raw: dict[str, Any], expected: str) -> None:
        found = problems(raw)
        assert any(expected in p for p in found), found

    def test_a_full_valid_template_passes(self) -> None:
        raw = template(
            container(
                "trainer",
                requests={"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "8"},
                limits={"nvidia.com/gpu": "8"},
                ports=[
                    {"containerPort": 8080, "name": "metrics"},
                    {"containerPort": 6379, "protocol": "TCP"},
                ],
                volumeMounts=[
                    {"name": "dshm", "mountPath": "/dev/shm"},
                    {"name": "ckpt", "mountPath": "/ckpt"},
                ],
                livenessProbe={"httpGet": {"path": "/", "port": 8080}, "successThreshold": 1},
                readinessProbe={"tcpSocket": {"port": 8080}, "successThreshold": 3},
            ),
            initContainers=[
                container("sidecar", restartPolicy="Always", startupProbe={"exec": {"command": ["x"]}})
            ],
            volumes=[
                {"name": "dshm", "emptyDir": {"medium": "Memory"}},
                {"name": "ckpt"},
            ],  # no source: emptyDir
            tolerations=[
                {"operator": "Exists"},
                {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
            ],
            affinity={
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname"}}
                    ]
                }
            },
            nodeSelector={"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"},
            restartPolicy="Never",
        )
        assert problems(raw, "job") == []

    @pytest.mark.parametrize(
        ("policy", "owner", "bad"),
        [
            (None, "job", True),
            ("Always", "job", True),
            ("Never", "job", False),
            ("OnFailure", "always", True),
            (None, "always", False),
            ("OnFailure", "pod", False),
        ],
    )
    def test_restart_policy_of_the_owner(self, policy: str | None, owner: Any, bad: bool) -> None:
        raw = template() if policy is None else template(restartPolicy=policy)
        assert bool(problems(raw, owner)) is bad


# --- the walker and the rule over every kind ------------------------------------------------------

GPU_NO_LIMIT = template(container(requests={"nvidia.com/gpu": "1"}), restartPolicy="Never")
GOOD = template(container(limits={"nvidia.com/gpu": "1"}), restartPolicy="Never")


def jobset(t: dict[str, Any]) -> Registration:
    spec = {"replicatedJobs": [{"name": "workers", "template": {"spec": {"template": t}}}]}
    return k8s("jobset.x-k8s.io/v1alpha2", "JobSet", "js", namespace="ns", spec=spec)


def lws(t: dict[str, Any]) -> Registration:
    spec = {"leaderWorkerTemplate": {"size": 2, "workerTemplate": t}}
    return k8s("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "lws", namespace="ns", spec=spec)


def mpijob(t: dict[str, Any]) -> Registration:
    spec = {"mpiReplicaSpecs": {"Launcher": {"template": GOOD}, "Worker": {"replicas": 2, "template": t}}}
    return k8s("kubeflow.org/v2beta1", "MPIJob", "mpi", namespace="ns", spec=spec)


def cronjob(t: dict[str, Any]) -> Registration:
    spec = {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": t}}}
    return k8s("batch/v1", "CronJob", "cron", namespace="ns", spec=spec)


def deployment(t: dict[str, Any]) -> Registration:
    return k8s("apps/v1", "Deployment", "dep", namespace="ns", spec={"template": t})


def raycluster(t: dict[str, Any]) -> Registration:
    spec = {
        "headGroupSpec": {"template": GOOD},
        "workerGroupSpecs": [{"groupName": "gpu", "replicas": 1, "template": t}],
    }
    return k8s("ray.io/v1", "RayCluster", "rc", namespace="ns", spec=spec)


def appwrapper(t: dict[str, Any]) -> Registration:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"template": t}}
    spec = {"components": [{"template": job}]}
    return k8s("workload.codeflare.dev/v1beta2", "AppWrapper", "aw", namespace="ns", spec=spec)


KINDS = [jobset, lws, mpijob, cronjob, deployment, raycluster, appwrapper]


def test_the_walker_knows_every_kind_kueue_registers() -> None:
    """Every integration of Kueue v0.19.2's registry has a walker, so no kind's pods go unjudged."""
    assert {(i.group, i.kind) for i in INTEGRATIONS} <= set(WALKERS)


@pytest.mark.parametrize("make", KINDS, ids=lambda f: f.__name__)
def test_every_kind_is_judged(make: Any) -> None:
    bad_template, good_template = copy.deepcopy(GPU_NO_LIMIT), copy.deepcopy(GOOD)
    if make in (deployment, lws):
        bad_template["spec"]["restartPolicy"] = good_template["spec"]["restartPolicy"] = "Always"
    bad = run(RULE, [make(bad_template)]).violations
    assert len(bad) == 1 and "Limit must be set" in bad[0], bad
    assert "containers[0].resources.limits" in bad[0] and "validateResourceRequirements" in bad[0]
    assert run(RULE, [make(good_template)]).violations == []


def test_a_job_template_with_the_default_restart_policy_is_refused() -> None:
    """``validateJobSpec`` refuses a Job's pods with the unset (Always) policy; JobSet's mutating
    webhook (jobset v0.12.0 ``jobSetWebhook.Default``) sets an unset one to OnFailure first, so
    only an explicit Always is refused there."""
    unset = template(container(limits={"nvidia.com/gpu": "1"}))
    [message] = run(RULE, [cronjob(unset)]).violations
    assert "a Job's pods need OnFailure or Never" in message and "validateJobSpec" in message
    assert "spec.jobTemplate.spec.template.spec.restartPolicy" in message
    assert run(RULE, [jobset(unset)]).violations == []
    always = template(container(limits={"nvidia.com/gpu": "1"}), restartPolicy="Always")
    [message] = run(RULE, [jobset(always)]).violations
    assert "spec.replicatedJobs[0].template.spec.template.spec.restartPolicy: 'Always'" in message


def test_trainjob_resources_per_node_are_judged_on_the_trainjob() -> None:
    """The child JobSet's ``node`` container gets ``resourcesPerNode``; a GPU request without its
    limit is refused for every pod, though runtime and TrainJob are each valid custom resources."""
    node = node_template()
    node["spec"]["restartPolicy"] = "Never"
    job = rjob("node", trainer=True, parallelism=1)
    job["template"]["spec"]["template"] = node
    rt = runtime("torch", job)
    bad = trainjob(ref={"name": "torch"}, trainer={"resourcesPerNode": {"requests": {"nvidia.com/gpu": "8"}}})
    messages = run(RULE, [rt, bad]).violations
    assert len(messages) == 1 and "TrainJob 'ns/tj'" in messages[0] and "Limit must be set" in messages[0]
    good = trainjob(ref={"name": "torch"}, trainer={"resourcesPerNode": {"limits": {"nvidia.com/gpu": "8"}}})
    assert run(RULE, [rt, good]).violations == []
    assert run(RULE, [rt, trainjob(ref={"name": "torch"})]).violations == []  # judged on the runtime only


def test_unknown_templates_are_cannot_check_never_a_pass() -> None:
    unknown = k8s(
        "jobset.x-k8s.io/v1alpha2", "JobSet", "js", namespace="ns", spec={"replicatedJobs": UNKNOWN}
    )
    found = every_template(StackModel.from_plain([unknown]))
    assert found and all(isinstance(f, Skipped) for f in found)
    outcome = run(RULE, [unknown])
    assert outcome.violations == [] and outcome.cannot_check and "replicatedJobs" in outcome.cannot_check
    orphan = trainjob(ref={"name": "absent"})
    assert "training runtime" in (run(RULE, [orphan]).cannot_check or "")


def test_pod_security_judges_every_kind() -> None:
    """A privileged container in a JobSet (or a TrainJob's runtime) is refused by a baseline
    namespace, as for a Pod; before the walker these kinds went unjudged."""
    ns = k8s("v1", "Namespace", "ns", labels={"pod-security.kubernetes.io/enforce": "baseline"})
    privileged = template(container(securityContext={"privileged": True}), restartPolicy="Never")
    for make in KINDS:
        [message] = run(SECURITY, [ns, make(privileged)]).violations
        assert "violates PodSecurity baseline" in message
        assert run(SECURITY, [ns, make(GOOD)]).violations == []
    job = rjob("node", trainer=True, parallelism=1)
    job["template"]["spec"]["template"] = privileged
    [message] = run(SECURITY, [ns, runtime("torch", job), trainjob(ref={"name": "torch"})]).violations
    assert "TrainJob 'ns/tj'" in message


def test_templates_carry_their_owner_rule() -> None:
    model = StackModel.from_plain([cronjob(GOOD), deployment(GOOD), jobset(GOOD), lws(GOOD)])
    makes = {t.owner.kind: t.makes for t in every_template(model) if isinstance(t, Template)}
    assert makes == {"CronJob": "job", "Deployment": "always", "JobSet": "job", "LeaderWorkerSet": "always"}


def test_a_core_pod_template_object_is_validated_but_not_pod_security_judged() -> None:
    """``ValidatePodTemplate`` validates a core/v1 PodTemplate's ``template``; PodSecurity enforces
    on pods, and a PodTemplate object creates none."""
    ns = k8s("v1", "Namespace", "ns", labels={"pod-security.kubernetes.io/enforce": "baseline"})
    bad = template(container(securityContext={"privileged": True}, requests={"nvidia.com/gpu": "1"}))
    obj = k8s("v1", "PodTemplate", "tpl", namespace="ns", template=bad)
    [message] = run(RULE, [obj]).violations
    assert "PodTemplate 'ns/tpl'" in message and "template.spec.containers[0].resources.limits" in message
    assert run(SECURITY, [ns, obj]).violations == []
