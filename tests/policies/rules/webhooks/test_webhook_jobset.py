"""jobset-webhook, written from JobSet v0.12.0's own test table.

Source: kubernetes-sigs/jobset v0.12.0 ``pkg/webhooks/jobset_webhook_test.go`` ``TestValidateCreate``;
each test names the table case(s) it follows.  Valid cases included.
"""

from __future__ import annotations

from typing import Any

import pytest
from gpu_batch_policy.rules.webhooks.jobset import POLICIES

from tests.policies.workload_stack import UNKNOWN, Registration, k8s, run

RULE = POLICIES[0]
POD = {"spec": {"containers": [{"name": "test", "image": "bash:latest"}]}}


def rjob(name: str, replicas: int = 1, **job: Any) -> dict[str, Any]:
    pod = job.pop("pod", POD)
    extra = job.pop("rjob", {})
    return {"name": name, "replicas": replicas, "template": {"spec": {"template": pod, **job}}, **extra}


def jobset(*rjobs: dict[str, Any], name: str = "js", **spec: Any) -> Registration:
    return k8s(
        "jobset.x-k8s.io/v1alpha2",
        "JobSet",
        name,
        namespace="ns",
        spec={"replicatedJobs": list(rjobs), **spec},
    )


def refused(reg: Registration, *parts: str) -> bool:
    outcome = run(RULE, [reg])
    return outcome.mentions("JobSet v0.12.0", *parts)


def clean(reg: Registration) -> bool:
    outcome = run(RULE, [reg])
    return outcome.violations == [] and outcome.cannot_check is None


def test_pods_limit() -> None:
    """ "number of pods exceeds the limit" / "number of pods within the limit"."""
    assert refused(jobset(rjob("rj", 2147483647, parallelism=2)), "over 2147483647")
    assert clean(jobset(rjob("rj", 2147483647, parallelism=1)))


def test_success_policy_targets() -> None:
    """ "success policy has non matching replicated job"."""
    bad = jobset(rjob("rj"), successPolicy={"operator": "All", "targetReplicatedJobs": ["other"]})
    assert refused(bad, "successPolicy targets replicatedJob 'other'")
    assert clean(jobset(rjob("rj"), successPolicy={"operator": "All", "targetReplicatedJobs": ["rj"]}))


def test_network_subdomain() -> None:
    """ "network has invalid dns name" (64 characters) and "jobset name with invalid character"."""
    assert refused(jobset(rjob("rj"), network={"subdomain": "a" * 64}), "subdomain", "too long")
    assert refused(jobset(rjob("rj"), network={"subdomain": "username.llama65b"}), "RFC 1035")
    assert clean(jobset(rjob("rj"), network={"subdomain": "my-net"}))


def test_group_name() -> None:
    """ "group name is not DNS 1035 compliant"."""
    assert refused(jobset(rjob("rj", rjob={"groupName": "a" * 64})), "groupName", "too long")
    assert clean(jobset(rjob("rj", rjob={"groupName": "workers"})))


def test_generated_job_and_pod_names() -> None:
    """ "jobset name will result in job name being too long" / "... a pod name being too long"."""
    assert refused(jobset(rjob("rj", 101), name="a" * 62), "child Job name", "exceed 63")
    pods = rjob("rj", completionMode="Indexed", completions=1, parallelism=1)
    assert refused(jobset(pods, name="a" * 56), "pod name", "exceed 63")
    # the defaulter makes an unset completionMode Indexed, so the pod name is judged too
    unset = rjob("rj", completions=1, parallelism=1)
    assert refused(jobset(unset, name="a" * 56), "pod name")
    non_indexed = rjob("rj", completionMode="NonIndexed", completions=1, parallelism=1)
    assert clean(jobset(non_indexed, name="a" * 56))


@pytest.mark.parametrize(
    ("manager", "ok"),
    [
        ("notDomainPrefixedPathControllerName", False),  # "... is not a domain-prefixed path"
        ("foo.bar/" + "a" * 63, False),  # "jobset controller name is too long"
        ("kueue.x-k8s.io/multikueue", True),  # "jobset controller name is set and valid"
    ],
)
def test_managed_by(manager: str, ok: bool) -> None:
    reg = jobset(rjob("rj"), managedBy=manager)
    assert clean(reg) if ok else refused(reg, "spec.managedBy")


def test_managed_by_unset() -> None:
    """ "jobset controller name is unset"."""
    assert clean(jobset(rjob("rj")))


def policy(*rules: dict[str, Any]) -> dict[str, Any]:
    return {"maxRestarts": 1, "rules": list(rules)}


def test_failure_policy_rules() -> None:
    """ "failure policy rule name is valid", "... invalid on job failure reason", "... invalid
    replicated job", "... greater than 128 characters", "there are two failure policy rules with the
    same name", "... does not start with an alphabetic character", "... does not end with ..."."""
    assert clean(
        jobset(
            rjob("rj"),
            failurePolicy=policy({"name": "superAwesomeFailurePolicyRule", "action": "FailJobSet"}),
        )
    )
    assert refused(
        jobset(rjob("rj"), failurePolicy=policy({"action": "FailJobSet", "onJobFailureReasons": ["OOM"]})),
        "'OOM', not a Job failure reason",
    )
    assert refused(
        jobset(rjob("rj"), failurePolicy=policy({"action": "FailJobSet", "targetReplicatedJobs": ["nope"]})),
        "targets replicatedJob 'nope'",
    )
    assert refused(
        jobset(rjob("rj"), failurePolicy=policy({"name": "a" * 129, "action": "FailJobSet"})), "length 129"
    )
    twice = policy({"name": "same", "action": "FailJobSet"}, {"name": "same", "action": "FailJobSet"})
    assert refused(jobset(rjob("rj"), failurePolicy=twice), "all have the name 'same'")
    assert refused(
        jobset(rjob("rj"), failurePolicy=policy({"name": "1rule", "action": "FailJobSet"})), "'1rule'"
    )
    assert refused(
        jobset(rjob("rj"), failurePolicy=policy({"name": "rule:", "action": "FailJobSet"})), "'rule:'"
    )


def test_unnamed_failure_policy_rules_get_default_names() -> None:
    """ "jobset failure policy rule name is 0 characters long a.k.a unset": the defaulter names it
    ``failurePolicyRule0`` before validation, so a manifest without names is accepted."""
    rules = policy({"action": "FailJobSet"}, {"action": "RestartJobSet"})
    assert clean(jobset(rjob("rj"), failurePolicy=rules))


@pytest.mark.parametrize("action", ["RestartJob", "RestartJobAndIgnoreMaxRestarts"])
def test_restart_job_gate_off(action: str) -> None:
    """ "... has RestartJob action and RestartJob feature gate is disabled" (the v0.12.0 default)."""
    assert refused(jobset(rjob("rj"), failurePolicy=policy({"action": action})), "RestartJob feature gate")


def test_in_place_restart_gate_off() -> None:
    """ "InPlaceRestart restart strategy cannot be set when InPlaceRestart feature gate is disabled"."""
    reg = jobset(rjob("rj"), failurePolicy={"maxRestarts": 1, "restartStrategy": "InPlaceRestart"})
    assert refused(reg, "InPlaceRestart feature gate")


def indexed(name: str, completions: int | None = 2) -> dict[str, Any]:
    job: dict[str, Any] = {"completionMode": "Indexed"}
    if completions is not None:
        job["completions"] = completions
    return rjob(name, **job)


def coordinated(
    coordinator: dict[str, Any], *rjobs: dict[str, Any], name: str = "js", **spec: Any
) -> Registration:
    return jobset(*rjobs, name=name, coordinator=coordinator, **spec)


def test_coordinator() -> None:
    """ "coordinator replicated job does not exist", "... missing completions", "coordinator job
    index invalid", "coordinator pod index invalid", and a valid coordinator."""
    pair = (indexed("replicatedjob-a"), indexed("replicatedjob-b"))
    assert clean(coordinated({"replicatedJob": "replicatedjob-a", "jobIndex": 0, "podIndex": 1}, *pair))
    assert refused(
        coordinated({"replicatedJob": "nope"}, *pair), "coordinator replicatedJob 'nope' does not exist"
    )
    missing = (indexed("replicatedjob-a", None), indexed("replicatedjob-b"))
    assert refused(
        coordinated({"replicatedJob": "replicatedjob-a"}, *missing), "not an indexed Job with completions"
    )
    assert refused(
        coordinated({"replicatedJob": "replicatedjob-a", "jobIndex": 2}, *pair), "job index 2 is invalid"
    )
    assert refused(
        coordinated({"replicatedJob": "replicatedjob-a", "podIndex": 2}, *pair), "pod index 2 is invalid"
    )


def test_coordinator_label_value() -> None:
    """ "coordinator label value is too long due to long JobSet name / ReplicatedJob name / SubDomain"."""
    one = indexed("replicatedjob-a", 1)
    assert refused(
        coordinated({"replicatedJob": "replicatedjob-a"}, one, name="a" * 60), "coordinator label value"
    )
    long_rjob = indexed("a" * 60, 1)
    assert refused(
        coordinated({"replicatedJob": "a" * 60}, long_rjob, name="jobset"), "coordinator label value"
    )
    long_sub = coordinated(
        {"replicatedJob": "replicatedjob-a"}, one, name="jobset", network={"subdomain": "a" * 60}
    )
    assert refused(long_sub, "coordinator label value")


def test_depends_on() -> None:
    """The DependsOn cases: valid chains, a later or unknown job, and the first job's dependsOn."""
    dep = {"dependsOn": [{"name": "job-1", "status": "Ready"}]}
    assert clean(jobset(rjob("job-1"), rjob("job-2", rjob=dep), rjob("job-3", rjob=dep)))
    later = {"dependsOn": [{"name": "job-3", "status": "Ready"}]}
    assert refused(jobset(rjob("job-1"), rjob("job-2", rjob=later), rjob("job-3")), "depends on 'job-3'")
    unknown = {"dependsOn": [{"name": "invalid", "status": "Ready"}]}
    assert refused(jobset(rjob("job-1"), rjob("job-2", rjob=unknown)), "depends on 'invalid'")
    assert refused(jobset(rjob("job-1", rjob=dep)), "first replicated job sets dependsOn")
    assert clean(jobset())  # "dependsOn should not fail if there are no replicated jobs"


def claim_policy(*names: str) -> list[dict[str, Any]]:
    templates = [{"metadata": {"name": n}, "spec": {"accessModes": ["ReadWriteOnce"]}} for n in names]
    return [{"templates": templates}]


def mounting(name: str, *, init: bool = False, volume: bool = False) -> dict[str, Any]:
    container = {"name": "c", "image": "busybox", "volumeMounts": [{"name": name, "mountPath": "/data"}]}
    key = "initContainers" if init else "containers"
    spec: dict[str, Any] = {key: [container]}
    if init:
        spec["containers"] = [{"name": "main", "image": "busybox"}]
    if volume:
        spec["volumes"] = [{"name": name, "emptyDir": {}}]
    return rjob("rj", pod={"spec": spec})


def test_volume_claim_policies() -> None:
    """The volumeClaimPolicy cases of the table that need no existing PVC."""
    assert clean(jobset(mounting("data"), volumeClaimPolicies=claim_policy("data")))
    assert clean(jobset(mounting("data", init=True), volumeClaimPolicies=claim_policy("data")))
    assert refused(
        jobset(mounting("data"), volumeClaimPolicies=claim_policy("data", "data")), "'data' is not unique"
    )
    assert refused(jobset(mounting("Data"), volumeClaimPolicies=claim_policy("Data")), "RFC 1123")
    long = "a" * 61
    assert refused(jobset(mounting(long), volumeClaimPolicies=claim_policy(long)), "exceeds 63")
    assert refused(
        jobset(rjob("rj"), volumeClaimPolicies=claim_policy("data")), "mounts the VolumeClaimPolicy"
    )
    conflict = jobset(mounting("data", volume=True), volumeClaimPolicies=claim_policy("data"))
    assert refused(conflict, "pod volume [0] is named 'data'")


def test_unknowns_are_cannot_check_not_pass() -> None:
    outcome = run(RULE, [jobset(rjob("rj", rjob={"groupName": UNKNOWN}))])
    assert outcome.violations == [] and outcome.cannot_check is not None
    auto = jobset(rjob("rj", 101), name="a" * 62)
    del auto[1]["metadata"]["name"]
    outcome = run(RULE, [auto])
    assert outcome.violations == [] and "metadata.name" in (outcome.cannot_check or "")


def test_placeholder_name_is_cannot_check() -> None:
    """A published template's ``${NAME}`` is substituted later: its generated names are not judged."""
    outcome = run(RULE, [jobset(rjob("rj", 101), name="${JOBSET_NAME}")])
    assert outcome.violations == [] and "metadata.name" in (outcome.cannot_check or "")
