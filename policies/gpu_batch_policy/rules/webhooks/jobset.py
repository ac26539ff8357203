"""JobSet's validating webhook at v0.12.0, before deploy.

The stack installs no JobSet controller, so the version judged is the one Kueue v0.19.2's
``go.mod`` pins: ``sigs.k8s.io/jobset v0.12.0``.  Source: kubernetes-sigs/jobset v0.12.0
``pkg/webhooks/jobset_webhook.go``.  The mutating webhook runs first (``Default``), so the checks
see its defaults: completion mode ``Indexed``, failure-policy rule names ``failurePolicyRuleN``;
the CRD defaults ``replicas`` to 1 and ``groupName`` to ``default``.  Feature gates at their v0.12.0
defaults (``pkg/features/features.go``): ``InPlaceRestart`` and ``RestartJob`` are Alpha and off.

``ValidateCreate``, check by check:

* the ``InPlaceRestart`` restart strategy is refused (gate off);
* the first replicated job has no ``dependsOn``; every ``dependsOn`` names an earlier (or the
  same) replicated job;
* ``network.subdomain`` is a DNS-1123 subdomain and a DNS-1035 label;
* ``managedBy`` is a domain-prefixed path (``IsDomainPrefixedPath``) of at most 63 characters;
* per replicated job: ``replicas * parallelism`` (default 1) fits int32; ``groupName`` is a
  DNS-1035 label; the last child Job name ``<jobset>-<rjob>-<replicas-1>`` (``placement.GenJobName``)
  and, for an indexed Job with ``completions``, the last pod name
  ``<jobset>-<rjob>-<replicas-1>-<completions-1>-abcde`` (``placement.GenPodName``) are DNS-1035 labels;
* ``successPolicy.targetReplicatedJobs`` name replicated jobs;
* ``validateFailurePolicy``: ``RestartJob``/``RestartJobAndIgnoreMaxRestarts`` actions are refused
  (gate off); rule names 1..128 characters matching ``^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`` and
  unique; ``targetReplicatedJobs`` exist; ``onJobFailureReasons`` are Job failure reasons;
* ``validateCoordinator``: the coordinator's replicated job exists, its job index is in range, the
  Job is indexed with ``completions``, the pod index is in range; ``validateCoordinatorLabelValue``:
  ``<jobset>-<rjob>-<job>-<pod>.<subdomain or jobset>`` is a label value;
* ``validateVolumeClaimPolicies``: template names unique DNS-1123 subdomains, ``<template>-<jobset>``
  at most 63 characters, and ``validateReplicatedJobsVolumeClaims``: no pod volume of that name,
  some container mounts it.  Whether a PVC of that name already exists (and matches) is cluster
  state: not judged.

``pkg/webhooks/pod_webhook.go`` judges the follower pods JobSet itself creates under exclusive
placement (their node selector, after the leader is scheduled): runtime state, not a manifest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pulumi_policy import Policy

from ...facts.model.base import KubeObject
from ...primitives.k8s_names import dns1035_label_error, dns1123_subdomain_error, label_value_error
from .port import (
    ACCEPTS_DELETE,
    MAX_INT32,
    NOT_A_CHECK,
    REGISTERS,
    UPDATE_ONLY,
    Finding,
    Judged,
    Problem,
    Unsure,
    Upstream,
    domain_prefixed_path_error,
    get,
    items,
    name_of,
    number,
    pod_containers,
    port_policy,
    text,
)

UPSTREAM = Upstream(
    project="JobSet",
    repo="kubernetes-sigs/jobset",
    ref="v0.12.0",
    version="v0.12.0",
    why="the version Kueue v0.19.2's go.mod pins; the stack installs no JobSet controller",
    files=("pkg/webhooks/jobset_webhook.go",),
)
GROUP = "jobset.x-k8s.io"
MAX_MANAGED_BY = 63
MAX_VOLUME_CLAIM = 63
MAX_RESTART_JOB_REPLICAS = 1024
RULE_NAME = re.compile(r"[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?")
JOB_FAILURE_REASONS = (
    "BackoffLimitExceeded",
    "DeadlineExceeded",
    "FailedIndexes",
    "MaxFailedIndexesExceeded",
    "PodFailurePolicy",
)
RESTART_JOB_ACTIONS = ("RestartJob", "RestartJobAndIgnoreMaxRestarts")


def _indexed(rjob: Any) -> bool:
    """After ``Default``: an unset completion mode is Indexed."""
    mode = text(rjob, "template", "spec", "completionMode")
    return mode in (None, "Indexed")


def _dns1035(value: str, too_long: str) -> str | None:
    error = dns1035_label_error(value)
    if error is not None and "no more than 63" in error:
        return too_long
    return error


def _replicated_job_problems(js_name: str, index: int, rjob: Any, names: set[str]) -> list[Problem]:
    where = f"spec.replicatedJobs[{index}]"
    name = text(rjob, "name") or ""
    problems: list[Problem] = []
    replicas = number(rjob, "replicas", default=1) or 0
    parallelism = number(rjob, "template", "spec", "parallelism", default=1) or 0
    if replicas * parallelism > MAX_INT32:
        problems.append(
            (
                f"{where} ('{name}') has replicas {replicas} x parallelism {parallelism}, over {MAX_INT32}",
                "lower replicas or parallelism",
            )
        )
    group = get(rjob, "groupName")
    group = "default" if group is None else str(group)
    error = _dns1035(group, "is too long, must be less than 63 characters")
    if error is not None:
        problems.append((f"{where}.groupName '{group}' {error}", "use a DNS-1035 label"))
    job_name = f"{js_name}-{name}-{replicas - 1}"
    error = _dns1035(job_name, "is too long: child Job names of this JobSet exceed 63 characters")
    if error is not None:
        problems.append(
            (
                f"the child Job name '{job_name}' of {where} {error}",
                "shorten the JobSet or replicated job name",
            )
        )
    completions = number(rjob, "template", "spec", "completions")
    if _indexed(rjob) and completions is not None:
        pod_name = f"{js_name}-{name}-{replicas - 1}-{completions - 1}-abcde"
        error = _dns1035(pod_name, "is too long: pod names of this JobSet exceed 63 characters")
        if error is not None:
            problems.append(
                (f"the pod name '{pod_name}' of {where} {error}", "shorten the JobSet or replicated job name")
            )
    for dep in items(rjob, "dependsOn"):
        dep_name = text(dep, "name")
        if dep_name not in names:
            problems.append(
                (
                    f"replicatedJob '{name}' depends on '{dep_name}', which is not an earlier replicated job",
                    "depend only on replicated jobs listed before this one",
                )
            )
    return problems


def _failure_policy_problems(spec: Any, rjobs: list[Any], names: set[str]) -> list[Problem]:
    """``validateFailurePolicy`` after ``Default`` named the unnamed rules."""
    policy = get(spec, "failurePolicy")
    if not isinstance(policy, dict):
        return []
    rules = items(policy, "rules")
    if any(text(rule, "action") in RESTART_JOB_ACTIONS for rule in rules):
        return [
            (
                "a failure policy rule uses RestartJob or RestartJobAndIgnoreMaxRestarts, which need the "
                "RestartJob feature gate (Alpha, off by default)",
                "use RestartJobSet, RestartJobSetAndIgnoreMaxRestarts or FailJobSet",
            )
        ]
    problems: list[Problem] = []
    seen: dict[str, list[int]] = {}
    for index, rule in enumerate(rules):
        name = text(rule, "name") or f"failurePolicyRule{index}"
        if not 1 <= len(name) <= 128:
            problems.append(
                (f"failure policy rule name of length {len(name)} is not 1..128", "shorten the rule name")
            )
        seen.setdefault(name, []).append(index)
        if not RULE_NAME.fullmatch(name):
            problems.append(
                (
                    f"failure policy rule name '{name}' must start with a letter, hold letters, digits or "
                    "'_,:', and end with a letter, digit or '_'",
                    "rename the rule",
                )
            )
        for target in items(rule, "targetReplicatedJobs"):
            if target not in names:
                problems.append(
                    (
                        f"failure policy rule '{name}' targets replicatedJob '{target}', which does not exist",
                        "name a replicated job of spec.replicatedJobs",
                    )
                )
        for reason in items(rule, "onJobFailureReasons"):
            if reason not in JOB_FAILURE_REASONS:
                problems.append(
                    (
                        f"failure policy rule '{name}' has onJobFailureReasons '{reason}', not a Job failure reason",
                        f"use one of {', '.join(JOB_FAILURE_REASONS)}",
                    )
                )
    for name, indices in seen.items():
        if len(indices) > 1:
            problems.append(
                (f"failure policy rules {indices} all have the name '{name}'", "give each rule its own name")
            )
    return problems


def _coordinator_problems(js_name: str, spec: Any, rjobs: list[Any]) -> list[Problem]:
    coordinator = get(spec, "coordinator")
    if not isinstance(coordinator, dict):
        return []
    target = text(coordinator, "replicatedJob") or ""
    job_index = number(coordinator, "jobIndex", default=0) or 0
    pod_index = number(coordinator, "podIndex", default=0) or 0
    problems: list[Problem] = []
    rjob = next((r for r in rjobs if text(r, "name") == target), None)
    fix = "point spec.coordinator at an existing replicated job, job index and pod index"
    if rjob is None:
        problems.append((f"coordinator replicatedJob '{target}' does not exist", fix))
    elif not 0 <= job_index < (number(rjob, "replicas", default=1) or 0):
        problems.append((f"coordinator job index {job_index} is invalid for replicatedJob '{target}'", fix))
    elif not _indexed(rjob) or number(rjob, "template", "spec", "completions") is None:
        problems.append(
            (
                f"the coordinator's replicatedJob '{target}' is not an indexed Job with completions set",
                "set completionMode: Indexed and completions on that Job template",
            )
        )
    elif not 0 <= pod_index < (number(rjob, "template", "spec", "completions") or 0):
        problems.append((f"coordinator pod index {pod_index} is invalid for replicatedJob '{target}'", fix))
    subdomain = text(spec, "network", "subdomain") or js_name
    endpoint = f"{js_name}-{target}-{job_index}-{pod_index}.{subdomain}"
    error = label_value_error(endpoint)
    if error is not None:
        problems.append(
            (
                f"the coordinator label value '{endpoint}' {error}",
                "shorten the JobSet, replicated job or subdomain name",
            )
        )
    return problems


def _volume_claim_problems(js_name: str, spec: Any, rjobs: list[Any]) -> list[Problem]:
    problems: list[Problem] = []
    claims: set[str] = set()
    for p_index, policy in enumerate(items(spec, "volumeClaimPolicies")):
        for t_index, template in enumerate(items(policy, "templates")):
            where = f"spec.volumeClaimPolicies[{p_index}].templates[{t_index}].metadata.name"
            name = text(template, "metadata", "name") or ""
            if name in claims:
                problems.append((f"{where} '{name}' is not unique", "give each claim template its own name"))
            error = dns1123_subdomain_error(name)
            if error is not None:
                problems.append((f"{where} '{name}' {error}", "use a DNS-1123 subdomain"))
            if len(f"{name}-{js_name}") > MAX_VOLUME_CLAIM:
                problems.append(
                    (
                        f"{where} '{name}' is too long: the PVC name '{name}-{js_name}' exceeds 63 characters",
                        "shorten the claim template or JobSet name",
                    )
                )
            problems += _claim_mount_problems(rjobs, name)
            claims.add(name)
    return problems


def _claim_mount_problems(rjobs: list[Any], claim: str) -> list[Problem]:
    """``validateReplicatedJobsVolumeClaims``."""
    problems: list[Problem] = []
    mounted = False
    for index, rjob in enumerate(rjobs):
        pod_spec = get(rjob, "template", "spec", "template", "spec")
        for v_index, volume in enumerate(items(pod_spec, "volumes")):
            if text(volume, "name") == claim:
                problems.append(
                    (
                        f"spec.replicatedJobs[{index}] pod volume [{v_index}] is named '{claim}', like a "
                        "VolumeClaimPolicy template",
                        "rename the pod volume; JobSet adds the claim's volume itself",
                    )
                )
        for container in pod_containers(pod_spec):
            if any(text(m, "name") == claim for m in items(container, "volumeMounts")):
                mounted = True
    if not mounted:
        problems.append(
            (
                f"no replicated job's container mounts the VolumeClaimPolicy template '{claim}'",
                f"add a volumeMount named '{claim}' to a container",
            )
        )
    return problems


NAME_STAND_IN = "x"  # a one-letter name: checks on generated names then only judge the rest


def jobset_problems(obj: KubeObject) -> list[Finding]:
    """``ValidateCreate`` of a JobSet, on the object as the mutating webhook leaves it."""
    spec = get(obj.props, "spec")
    if not isinstance(spec, dict):
        return []
    name = name_of(obj)
    problems: list[Finding] = []
    if name is None:
        problems.append(Unsure("metadata.name (generated at apply) for the child Job and pod names"))
    js_name = NAME_STAND_IN if name is None else name
    if text(spec, "failurePolicy", "restartStrategy") == "InPlaceRestart":
        problems.append(
            (
                "failurePolicy.restartStrategy InPlaceRestart needs the InPlaceRestart feature gate (Alpha, off)",
                "use restartStrategy Recreate or BlockingRecreate",
            )
        )
    rjobs = items(spec, "replicatedJobs")
    if rjobs and get(rjobs[0], "dependsOn") is not None:
        problems.append(
            ("the first replicated job sets dependsOn", "drop dependsOn from the first replicated job")
        )
    subdomain = text(spec, "network", "subdomain")
    if subdomain:
        for error in (
            dns1123_subdomain_error(subdomain),
            _dns1035(subdomain, "is too long, must be less than 63 characters"),
        ):
            if error is not None:
                problems.append(
                    (f"spec.network.subdomain '{subdomain}' {error}", "use a lowercase DNS-1035 label")
                )
    manager = get(spec, "managedBy")
    if isinstance(manager, str):
        error = domain_prefixed_path_error(manager)
        if error is None and len(manager) > MAX_MANAGED_BY:
            error = f"must be no more than {MAX_MANAGED_BY} characters"
        if error is not None:
            problems.append(
                (
                    f"spec.managedBy '{manager}' {error}",
                    "use a controller name such as kueue.x-k8s.io/multikueue",
                )
            )
    names: set[str] = set()
    for index, rjob in enumerate(rjobs):
        names.add(text(rjob, "name") or "")
        problems += _replicated_job_problems(js_name, index, rjob, names)
    for target in items(spec, "successPolicy", "targetReplicatedJobs"):
        if target not in names:
            problems.append(
                (
                    f"successPolicy targets replicatedJob '{target}', which does not appear in spec.replicatedJobs",
                    "name a replicated job of spec.replicatedJobs",
                )
            )
    problems += _failure_policy_problems(spec, rjobs, names)
    problems += _coordinator_problems(js_name, spec, rjobs)
    problems += _volume_claim_problems(js_name, spec, rjobs)
    return problems


COVERAGE: Mapping[str, str] = {
    "setupWebhookForJobSet": REGISTERS,
    "Default": NOT_A_CHECK + "defaulting; its defaults are applied before the checks (jobset_problems)",
    "ValidateCreate": "jobset_problems",
    "ValidateUpdate": UPDATE_ONLY,
    "ValidateDelete": ACCEPTS_DELETE,
    "validateFailurePolicy": "_failure_policy_problems",
    "validateCoordinator": "_coordinator_problems",
    "validateCoordinatorLabelValue": "_coordinator_problems",
    "validateVolumeClaimPolicies": "_volume_claim_problems",
    "validateReplicatedJobsVolumeClaims": "_claim_mount_problems",
    "hasVolumeMount": "_claim_mount_problems",
    "replicatedJobByName": "_coordinator_problems",
    "toFieldErrorList": NOT_A_CHECK + "error plumbing",
    "invalidError": NOT_A_CHECK + "error plumbing",
}
"""Every function of ``pkg/webhooks/jobset_webhook.go`` at v0.12.0.  Inside
``validateVolumeClaimPolicies`` the comparison with a PVC that already exists is cluster state and
not ported."""


POLICIES: list[Policy] = [
    port_policy(
        "jobset-webhook",
        "A JobSet passes JobSet v0.12.0's validating webhook (the version Kueue v0.19.2 pins): names of "
        "child Jobs and pods, dependsOn, success/failure policies, coordinator, volume claim policies.",
        UPSTREAM,
        GROUP,
        Judged(("JobSet",), jobset_problems, "pkg/webhooks/jobset_webhook.go ValidateCreate"),
    ),
]
